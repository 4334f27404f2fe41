import { randomBytes } from "node:crypto";

/** How long a rolled secret keeps signing beside the new one. */
export const ROLLED_SECRET_VALID_MS = 24 * 3_600_000;

/** A new signing secret as Standard Webhooks spells it: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The `webhook-signature` header: one signature per secret in use, separated
 * by spaces, as the Standard Webhooks specification allows while a secret is
 * being rolled; a receiver accepts the delivery when any one verifies.
 */
export function signatureHeader(signatures: readonly string[]): string {
  return signatures.join(" ");
}
