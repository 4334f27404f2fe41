import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Provider tokens as stored: what Google's token endpoint answered, kept up to date on refresh. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds; absent when unknown (the access token is then tried first). */
  expiresAt?: number;
}

/**
 * AES-256-GCM with a fresh 96-bit nonce per sealing: tokens at rest are
 * unreadable without the key, and any change to a stored value (or a row's
 * tokens pasted into another) fails to open, because the connection id is
 * bound in as associated data.
 */
export class TokenCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the token key must be 32 bytes");
  }

  seal(tokens: ProviderTokens, connectionId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(connectionId));
    const body = Buffer.concat([cipher.update(JSON.stringify(tokens), "utf8"), cipher.final()]);
    return [VERSION, iv.toString("base64"), Buffer.concat([body, cipher.getAuthTag()]).toString("base64")].join(".");
  }

  open(sealed: string, connectionId: string): ProviderTokens {
    const [version, iv, payload] = sealed.split(".");
    if (version !== VERSION || !iv || !payload) throw new Error("sealed tokens in an unknown format");
    const data = Buffer.from(payload, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64"));
    decipher.setAAD(Buffer.from(connectionId));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const clear = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]);
    return JSON.parse(clear.toString("utf8")) as ProviderTokens;
  }
}
