import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const FORMAT = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets at rest with AES-256-GCM: a fresh 96-bit nonce each time,
 * and what the text belongs to (a row's id, a record's key) bound in as
 * associated data, so a sealed text copied elsewhere, or changed, does not
 * open. Sealed texts read `v1.<nonce>.<ciphertext and tag>`, base64.
 */
export class Sealer {
  /** `keyName` names the key in the error a wrong length gives. */
  constructor(
    private readonly key: Buffer,
    keyName: string,
  ) {
    if (key.length !== 32) throw new Error(`${keyName} must be 32 bytes`);
  }

  seal(text: string, boundTo: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce).setAAD(Buffer.from(boundTo));
    const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT}.${nonce.toString("base64")}.${sealed.toString("base64")}`;
  }

  /** Throws when the text was sealed under another key or binding, or was changed. */
  open(sealed: string, boundTo: string): string {
    const [format, nonce, data] = sealed.split(".");
    if (format !== FORMAT || !nonce || !data) throw new Error("a sealed text in an unknown format");
    const bytes = Buffer.from(data, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(nonce, "base64")).setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}
