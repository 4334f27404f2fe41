import { BatchNotReady } from "./types.js";

/**
 * The longest a batch waiting for earlier events (BatchNotReady) pauses
 * before it looks again. Those events are being recorded by another consumer
 * of the durable, or come back to this one once the acknowledgement wait of a
 * consumer that stopped holding them runs out (30 s): the batch should follow
 * them within seconds, not after a back-off meant for a database that is down.
 */
const NOT_READY_PAUSE_MS = 2_000;

/**
 * The pause before a failed batch's attempt after `attempt` (1: the first
 * failure): the consumer's back-off, its last step once past the end, and
 * no longer than NOT_READY_PAUSE_MS for a batch waiting for earlier events.
 */
export function retryPauseMs(err: unknown, attempt: number, backoffMs: readonly number[]): number {
  const backoff = backoffMs[Math.min(attempt - 1, backoffMs.length - 1)] ?? 1_000;
  return err instanceof BatchNotReady ? Math.min(backoff, NOT_READY_PAUSE_MS) : backoff;
}
