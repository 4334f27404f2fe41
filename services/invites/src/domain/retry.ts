/** Why a delivery attempt did not succeed, as the worker acts on it. */
export type FailureKind =
  /** Worth another try later: a 429, a 5xx, a network error, a timeout. */
  | "transient"
  /** Will never succeed as it is (a 4xx that is not about the grant, a refused recipient). */
  | "permanent"
  /** The provider grant was revoked or expired for good: the connection is broken. */
  | "revoked"
  /**
   * The provider stopped answering once it may already have the message (a
   * relay silent past the timeout, its answer to the message still to come):
   * sent or not, nobody can tell, and sending it again could deliver it twice.
   */
  | "in-doubt";

/** A delivery failure with the worker's verdict on it. */
export class DeliveryFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = "DeliveryFailure";
  }
}

/** Any error of an attempt as the worker acts on it: one it has no verdict on is worth another try. */
export function asDeliveryFailure(err: unknown): DeliveryFailure {
  return err instanceof DeliveryFailure ? err : new DeliveryFailure("transient", err instanceof Error ? err.message : String(err));
}

/** Caps a single wait: a provider down for hours is still tried every few minutes. */
const MAX_DELAY_MS = 5 * 60_000;

/**
 * The wait before attempt `attempts + 1`: doubling from `baseMs`, capped,
 * with up to a quarter of jitter so that many deliveries failing together
 * (a provider outage) do not all come back in the same instant.
 */
export function retryDelayMs(attempts: number, baseMs: number, random: () => number = Math.random): number {
  const exact = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exact * (1 - 0.25 * random()));
}

/** Whether a failure after `attempts` tries ends the delivery. */
export function isLastAttempt(kind: FailureKind, attempts: number, maxAttempts: number): boolean {
  return kind === "permanent" || attempts >= maxAttempts;
}

/** How an HTTP status from a provider is to be treated. */
export function failureKindOfStatus(status: number | undefined): FailureKind {
  if (status === undefined || status === 408 || status === 429 || status >= 500) return "transient";
  if (status === 401) return "revoked";
  return "permanent";
}
