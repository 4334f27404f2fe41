import { z } from "zod";
import type { IdempotencyRecord } from "../../domain/idempotency.js";
import type { ReplyCipher } from "./replyCipher.js";

/**
 * A record as Redis holds it. State, fingerprint and claim token stay
 * readable (the settling scripts compare the token in Redis itself); a
 * finished record's reply is sealed, bound to its key and fingerprint.
 */
const AtRest = z.discriminatedUnion("state", [
  z.object({ state: z.literal("in_progress"), fingerprint: z.string(), token: z.string() }),
  z.object({ state: z.literal("done"), fingerprint: z.string(), token: z.string(), sealed: z.string() }),
]);

const bindingOf = (id: string, fingerprint: string) => JSON.stringify([id, fingerprint]);

/** The text Redis keeps for the record stored under `id`. */
export function sealRecord(cipher: ReplyCipher, id: string, record: IdempotencyRecord): string {
  if (record.state === "in_progress") return JSON.stringify(record);
  const { reply, ...readable } = record;
  return JSON.stringify({ ...readable, sealed: cipher.seal(reply, bindingOf(id, record.fingerprint)) });
}

/**
 * The record Redis keeps under `id`, or undefined when it cannot be read: a
 * reply sealed under another key (the key was rotated), changed, or not
 * sealed at all. Such a record is as good as expired: its reply cannot be
 * sent again.
 */
export function openRecord(cipher: ReplyCipher, id: string, text: string): IdempotencyRecord | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const stored = AtRest.safeParse(parsed);
  if (!stored.success) return undefined;
  if (stored.data.state === "in_progress") return stored.data;
  const { sealed, ...readable } = stored.data;
  try {
    return { ...readable, reply: cipher.open(sealed, bindingOf(id, readable.fingerprint)) };
  } catch {
    return undefined;
  }
}
