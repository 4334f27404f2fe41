/** What a connection's push channel needs at a check. */
export type WatchStep = "open" | "renew" | "keep";

/** Renewed at least this long before it lapses, so a slow or failed renewal has time for another try. */
export const RENEW_MARGIN_MS = 60 * 60_000;

/**
 * A channel never opened (or lapsed) is opened; one that would lapse before
 * the check after next (or within the margin) is renewed now, so that two
 * checks in a row may fail before notifications stop; any other is kept.
 */
export function watchStep(expiresAt: Date | null, nowMs: number, checkMs: number): WatchStep {
  if (expiresAt === null || expiresAt.getTime() <= nowMs) return "open";
  return expiresAt.getTime() - nowMs <= Math.max(RENEW_MARGIN_MS, 2 * checkMs) ? "renew" : "keep";
}
