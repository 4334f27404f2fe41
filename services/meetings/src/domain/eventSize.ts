import { AppError } from "@sched/errors";

/**
 * The most bytes one meeting event may have as JSON. NATS refuses messages
 * over its max_payload (1 MiB by default); an event of a series carries its
 * changed occurrences not yet ended (each with its own description and
 * participants), so a series with many of them could outgrow it and never
 * be published. The rest of the MiB is left to the headers and to the
 * one occurrence an exception's event carries beside the series.
 */
export const EVENT_BYTES_LIMIT = 900 * 1024;

/** The event's size as the outbox stores and the bus sends it. */
export function eventBytes(payload: unknown): number {
  return Buffer.byteLength(JSON.stringify(payload), "utf8");
}

/**
 * Refuses a change whose event would be over EVENT_BYTES_LIMIT, before
 * anything is written (400 `invalid_request`): the series keeps what it had,
 * and the organizer can change the series as a whole (which drops the
 * changes of occurrences not yet ended only when its time or rule changes)
 * or make its occurrences' texts and lists shorter.
 */
export function checkEventSize(payload: unknown): void {
  const bytes = eventBytes(payload);
  if (bytes <= EVENT_BYTES_LIMIT) return;
  throw new AppError(
    "invalid_request",
    `This change would make the meeting's event ${bytes} bytes, over the ${EVENT_BYTES_LIMIT} a series may have with its changed occurrences: shorten their descriptions or participant lists, or change fewer occurrences on their own.`,
  );
}
