import type { StoredEvent, StoringOutcome } from "./eventLog.js";

/** Events remembered at most: past that, the oldest quarter is forgotten (a consumer that far behind reads the log). */
const REMEMBERED = 4_096;

/**
 * The events the in-process bus stored lately, kept in its memory so that a
 * consumer that is up to date reads the event just published from here
 * rather than from the event log (a statement on the embedded database's one
 * thread for every consumer of every event). The log stays the truth: an
 * event is remembered only once its writes are kept (committed), and a read
 * here answers only for positions past `from`, where every kept event is
 * remembered. That holds because appends reach the log one at a time (on the
 * embedded database's one session): a later append has a higher position,
 * and one still waiting for its transaction's end hides every event after
 * it, so a read never passes an event that may yet be kept.
 */
export class RecentEvents {
  /** Kept events past `from`, in log order. */
  private readonly events: StoredEvent[] = [];
  /** Positions appended whose transaction has not ended yet. */
  private readonly pending = new Set<number>();
  /** Every kept event past this position is in `events`; undefined: none is known to be. */
  private from: number | undefined;

  /** Where reads here start to answer: before it a consumer reads the log. */
  get coveredFrom(): number | undefined {
    return this.from;
  }

  /** An event was appended at `position`; its transaction has not ended. */
  appended(position: number): void {
    // The first append since start (or since the last forgetting): every event before it has ended.
    this.from ??= position - 1;
    this.pending.add(position);
  }

  /** The transaction of an appended event ended: a kept one is remembered, an unknown end forgets everything. */
  ended(event: StoredEvent, outcome: StoringOutcome): void {
    // Appended before the memory was last forgotten: not known here, the log has it.
    if (!this.pending.delete(event.streamSequence)) return;
    if (outcome === "unknown") return this.forget();
    if (outcome === "undone") return;
    let at = this.events.length;
    while (at > 0 && this.events[at - 1]!.streamSequence > event.streamSequence) at--;
    this.events.splice(at, 0, event);
    if (this.events.length > REMEMBERED) this.from = this.events.splice(0, REMEMBERED / 4).at(-1)!.streamSequence;
  }

  /**
   * Up to `limit` events past `position` with one of these subjects, in log
   * order, none at or after an append not yet ended; undefined when `position`
   * is before what is remembered (the log has to be read).
   */
  read(position: number, subjects: ReadonlySet<string>, limit: number): StoredEvent[] | undefined {
    if (this.from === undefined || position < this.from) return undefined;
    let end = Infinity;
    for (const p of this.pending) end = Math.min(end, p);
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.events[mid]!.streamSequence <= position) low = mid + 1;
      else high = mid;
    }
    const found: StoredEvent[] = [];
    for (let i = low; i < this.events.length && found.length < limit; i++) {
      const event = this.events[i]!;
      if (event.streamSequence >= end) break;
      if (subjects.has(event.subject)) found.push(event);
    }
    return found;
  }

  /** Forgets every event: the log is read until the next append starts the memory again. */
  forget(): void {
    this.events.length = 0;
    this.pending.clear();
    this.from = undefined;
  }
}
