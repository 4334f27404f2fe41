import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { StoredReply } from "../domain/idempotency.js";

const FORMAT = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals the replies kept under Idempotency-Key records with AES-256-GCM, so
 * a secret shown once (a webhook endpoint's signing secret) never rests in
 * Redis in clear: a fresh nonce per record, and the record's identity bound
 * in as associated data, so a sealed reply moved under another key or
 * another request's fingerprint does not open.
 */
export class ReplyCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the idempotency seal key must be 32 bytes");
  }

  seal(reply: StoredReply, boundTo: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce).setAAD(Buffer.from(boundTo));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(reply), "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT}.${nonce.toString("base64")}.${sealed.toString("base64")}`;
  }

  /** Throws when the reply was sealed under another key or binding, or was changed. */
  open(sealed: string, boundTo: string): StoredReply {
    const [format, nonce, data] = sealed.split(".");
    if (format !== FORMAT || !nonce || !data) throw new Error("a sealed reply in an unknown format");
    const bytes = Buffer.from(data, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(nonce, "base64")).setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const clear = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]);
    return JSON.parse(clear.toString("utf8")) as StoredReply;
  }
}
