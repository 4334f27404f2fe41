import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const FORMAT = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals signing secrets at rest with AES-256-GCM, as calendar tokens are
 * sealed: a fresh nonce each time, and the endpoint id bound in as associated
 * data, so a sealed secret copied to another endpoint's row does not open.
 */
export class SecretCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the webhook secret key must be 32 bytes");
  }

  seal(secret: string, endpointId: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce).setAAD(Buffer.from(endpointId));
    const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT}.${nonce.toString("base64")}.${sealed.toString("base64")}`;
  }

  open(sealed: string, endpointId: string): string {
    const [format, nonce, data] = sealed.split(".");
    if (format !== FORMAT || !nonce || !data) throw new Error("a sealed secret in an unknown format");
    const bytes = Buffer.from(data, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(nonce, "base64")).setAAD(Buffer.from(endpointId));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  }
}
