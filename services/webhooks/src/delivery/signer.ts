import { Webhook } from "standardwebhooks";
import type { EndpointRecord } from "../db/queries.js";
import type { SecretCipher } from "../domain/secretCipher.js";
import { signatureHeader } from "../domain/secrets.js";

/** The Standard Webhooks headers of one delivery. */
export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [name: string]: string;
}

/**
 * Signs a delivery as the Standard Webhooks specification says, with the
 * endpoint's secret and, while a rolled secret is still valid, with that one
 * too: a receiver still holding the old secret keeps verifying for 24 hours.
 */
export function signDelivery(cipher: SecretCipher, endpoint: EndpointRecord, eventId: string, body: string, now: Date): SignedHeaders {
  const secrets = [cipher.open(endpoint.sealedSecret, endpoint.id)];
  if (endpoint.sealedPreviousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(cipher.open(endpoint.sealedPreviousSecret, endpoint.id));
  }
  // The timestamp is whole seconds, as the header carries it.
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
  return {
    "webhook-id": eventId,
    "webhook-timestamp": String(at.getTime() / 1000),
    "webhook-signature": signatureHeader(secrets.map((secret) => new Webhook(secret).sign(eventId, at, body))),
  };
}
