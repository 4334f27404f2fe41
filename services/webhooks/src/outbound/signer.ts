import { Webhook } from "standardwebhooks";
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

/**
 * Signs deliveries as the Standard Webhooks specification says, with the
 * endpoint's secret and, while a rolled secret is still valid, with that one
 * too: a receiver still holding the old secret keeps verifying for 24 hours.
 * A sealed secret is opened once, not at every delivery: the cache is keyed
 * by the sealed text, so a rolled secret is a new entry.
 */
export class DeliverySigner {
  private readonly opened = new Map<string, Webhook>();

  constructor(private readonly cipher: SecretCipher) {}

  sign(endpoint: SigningKeys, eventId: string, body: string, now: Date): SignedHeaders {
    const signers = [this.signerOf(endpoint.sealedSecret, endpoint.id)];
    if (endpoint.sealedPreviousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
      signers.push(this.signerOf(endpoint.sealedPreviousSecret, endpoint.id));
    }
    // The timestamp is whole seconds, as the header carries it.
    const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
    return {
      "webhook-id": eventId,
      "webhook-timestamp": String(at.getTime() / 1000),
      "webhook-signature": signatureHeader(signers.map((signer) => signer.sign(eventId, at, body))),
    };
  }

  private signerOf(sealed: string, endpointId: string): Webhook {
    const key = `${endpointId} ${sealed}`;
    let signer = this.opened.get(key);
    if (!signer) {
      if (this.opened.size >= MAX_OPENED) this.opened.clear();
      signer = new Webhook(this.cipher.open(sealed, endpointId));
      this.opened.set(key, signer);
    }
    return signer;
  }
}
