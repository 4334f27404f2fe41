/** One event as the in-process bus stores it. */
export interface StoredEvent {
  /** Position in the log; increases with each stored event. */
  streamSequence: number;
  subject: string;
  payload: unknown;
  /** Trace context of the publisher, as NATS keeps it in the message headers. */
  headers: Record<string, string>;
}

/** An event to store: the stream it belongs to and its de-duplication id besides what a consumer reads. */
export interface NewEvent extends Omit<StoredEvent, "streamSequence"> {
  stream: string;
  msgId: string;
  /** The msgId the stream's last event must have for this one to be stored (PublishOptions.after). */
  after?: string;
}

/** What became of an append: stored, and where, or not, and then why. */
export type AppendOutcome =
  | {
      stored: true;
      /** The event's position in the log. */
      streamSequence: number;
    }
  | {
      stored: false;
      /** An event with this msgId was stored already. */
      duplicate: boolean;
      /** The msgId of the stream's last stored event. */
      lastMsgId: string | undefined;
    };

/**
 * What became of a publish's writes once its unit of work ended: kept
 * (committed), undone (rolled back), or not known (the log cannot tell: what
 * the bus remembers of recent events is then no longer to be trusted).
 */
export type StoringOutcome = "kept" | "undone" | "unknown";

/**
 * Where the in-process bus keeps its events and each durable consumer's
 * acknowledged position. The bus appends one batch at a time (within
 * `storing`), so an implementation needs no locking of its own.
 */
export interface EventLog {
  /**
   * Runs one publish's writes of the log (`append`, on the log `work` is
   * given; the bus appends the publishes given the same log and waiting at
   * once, those of one transaction it joined, together) as one unit that no
   * other publish interleaves with, and resolves
   * once what it wrote is kept, or is to be kept with the caller's
   * transaction it joined. `ended` is told what became of the writes once
   * that is known: when this resolves or rejects, or when the caller's
   * transaction ends.
   */
  storing<T>(work: (log: EventLog) => Promise<T>, ended: (outcome: StoringOutcome) => void): Promise<T>;
  /**
   * Stores each event after every other one, in the order given, unless an
   * event with its msgId is stored already (or earlier in `events`), or its
   * `after` is given and is not the msgId of its stream's last event (as the
   * events before it left the stream): each as if appended alone, one after
   * the other, yet in one write when all of them are stored, so the events
   * of a relay's batch cost one write, not one each.
   */
  append(events: readonly NewEvent[]): Promise<AppendOutcome[]>;
  /** Up to `limit` events past `position` with one of these subjects, in log order. */
  read(position: number, subjects: ReadonlySet<string>, limit: number): Promise<StoredEvent[]>;
  /** The position a durable consumer acknowledged last; 0 before its first. */
  ackFloor(durable: string): Promise<number>;
  acknowledge(durable: string, position: number): Promise<void>;
  /**
   * Forgets the stream's events stored more than `maxAgeMs` ago, as JetStream
   * does past a stream's `max_age`, but never the stream's last event (a
   * publish `after` it must still find it). Resolves to how many went.
   */
  prune(stream: string, maxAgeMs: number): Promise<number>;
}

/** The log in this process's memory: gone with it. For tests and in-memory databases. */
export class MemoryEventLog implements EventLog {
  /** Event n sits at index n - 1; a pruned one leaves a hole, so positions stay as they were. */
  private readonly events: Array<(StoredEvent & { stream: string; storedAt: number }) | undefined> = [];
  private readonly msgIds = new Set<string>();
  private readonly lastMsgIds = new Map<string, string>();
  private readonly ackFloors = new Map<string, number>();

  async storing<T>(work: (log: EventLog) => Promise<T>, ended: (outcome: StoringOutcome) => void): Promise<T> {
    try {
      return await work(this);
    } finally {
      // An append here is kept as soon as it is made, whatever the publish did next.
      ended("kept");
    }
  }

  async append(events: readonly NewEvent[]): Promise<AppendOutcome[]> {
    return events.map(({ stream, msgId, after, ...event }) => {
      const lastMsgId = this.lastMsgIds.get(stream);
      const duplicate = this.msgIds.has(msgId);
      if (duplicate || (after !== undefined && after !== lastMsgId)) return { stored: false, duplicate, lastMsgId };
      this.msgIds.add(msgId);
      this.lastMsgIds.set(stream, msgId);
      const streamSequence = this.events.length + 1;
      this.events.push({ ...event, stream, storedAt: Date.now(), streamSequence });
      return { stored: true, streamSequence };
    });
  }

  async read(position: number, subjects: ReadonlySet<string>, limit: number): Promise<StoredEvent[]> {
    const found: StoredEvent[] = [];
    for (let i = position; i < this.events.length && found.length < limit; i++) {
      const event = this.events[i];
      if (event && subjects.has(event.subject)) found.push(event);
    }
    return found;
  }

  async ackFloor(durable: string): Promise<number> {
    return this.ackFloors.get(durable) ?? 0;
  }

  async acknowledge(durable: string, position: number): Promise<void> {
    this.ackFloors.set(durable, position);
  }

  async prune(stream: string, maxAgeMs: number): Promise<number> {
    const before = Date.now() - maxAgeMs;
    let last = -1;
    for (let i = this.events.length - 1; i >= 0 && last === -1; i--) if (this.events[i]?.stream === stream) last = i;
    let pruned = 0;
    for (let i = 0; i < last; i++) {
      const event = this.events[i];
      if (event?.stream === stream && event.storedAt < before) {
        this.events[i] = undefined;
        pruned++;
      }
    }
    return pruned;
  }
}
