import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import type { SigningKeys } from "../db/queries.js";
import type { SecretCipher } from "../domain/secretCipher.js";
import { signatureHeader } from "../domain/secrets.js";

/** The Standard Webhooks headers of one delivery. */
export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [name: string]: string;
}

/** The most opened secrets kept: past it the cache starts over, so a replica's memory stays bounded whatever the number of endpoints. */
const MAX_OPENED = 10_000;

/** How a Standard Webhooks secret is written: this prefix, then the key in base64. */
const SECRET_PREFIX = "whsec_";

/**
 * Signs deliveries as the Standard Webhooks specification says (HMAC-SHA256
 * of "<id>.<timestamp>.<body>", keyed with the secret's base64 part, as
 * `v1,<base64>`), with the endpoint's secret and, while a rolled secret is
 * still valid, with that one too: a receiver still holding the old secret
 * keeps verifying for 24 hours. Node's HMAC, not the `standardwebhooks`
 * package's JavaScript SHA-256: the same signature at a fraction of the CPU.
 * A sealed secret is opened once, not at every delivery: the cache is keyed
 * by the sealed text, so a rolled secret is a new entry.
 */
export class DeliverySigner {
  private readonly opened = new Map<string, KeyObject>();

  constructor(private readonly cipher: SecretCipher) {}

  sign(endpoint: SigningKeys, eventId: string, body: Buffer, now: Date): SignedHeaders {
    // The timestamp is whole seconds, as the header carries it.
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const signed = (sealed: string) => `v1,${createHmac("sha256", this.keyOf(sealed, endpoint.id)).update(`${eventId}.${timestamp}.`).update(body).digest("base64")}`;
    const signatures = [signed(endpoint.sealedSecret)];
    if (endpoint.sealedPreviousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) signatures.push(signed(endpoint.sealedPreviousSecret));
    return { "webhook-id": eventId, "webhook-timestamp": timestamp, "webhook-signature": signatureHeader(signatures) };
  }

  private keyOf(sealed: string, endpointId: string): KeyObject {
    const cacheKey = `${endpointId} ${sealed}`;
    let key = this.opened.get(cacheKey);
    if (!key) {
      if (this.opened.size >= MAX_OPENED) this.opened.clear();
      const secret = this.cipher.open(sealed, endpointId);
      key = createSecretKey(Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64"));
      this.opened.set(cacheKey, key);
    }
    return key;
  }
}
