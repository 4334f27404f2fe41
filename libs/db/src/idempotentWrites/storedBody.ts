import type { Sealer } from "@sched/ids";
/** What the table keeps of an answer whose body carries a secret shown once: the body sealed, bound to its record. */
function sealedText(stored: unknown): string | undefined {
  const sealed = typeof stored === "object" && stored !== null ? (stored as { sealed?: unknown }).sealed : undefined;
  return typeof sealed === "string" ? sealed : undefined;
}

/** The body as the table keeps it: as it is, or sealed with `sealer`, bound to the record's key and fingerprint. */
export function bodyAtRest(body: unknown, sealer: Sealer | undefined, boundTo: string): unknown {
  return sealer ? { sealed: sealer.seal(JSON.stringify(body), boundTo) } : body;
}

/**
 * The body a stored answer is sent again with, or undefined when it cannot
 * be read: sealed under another key (the key was rotated), changed, or not
 * sealed where it should be. Such a record is as good as expired.
 */
export function bodyFromRest(stored: unknown, sealer: Sealer | undefined, boundTo: string): { body: unknown } | undefined {
  if (!sealer) return { body: stored };
  const sealed = sealedText(stored);
  if (sealed === undefined) return undefined;
  try {
    return { body: JSON.parse(sealer.open(sealed, boundTo)) as unknown };
  } catch {
    return undefined;
  }
}
