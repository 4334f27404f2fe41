import { AsyncLocalStorage } from "node:async_hooks";
import { TimeoutError } from "tarn";

const background = new AsyncLocalStorage<boolean>();

/**
 * Runs `work`, and everything it starts (loops, timers, the promises they
 * chain), as background work: its turns on an embedded database's session
 * come after those of requests waiting for it (see SessionTurns).
 */
export function inBackground<T>(work: () => T): T {
  return background.run(true, work);
}

/** Whether the calling code runs as background work. */
function isBackground(): boolean {
  return background.getStore() === true;
}

/** Requests served in a row while background work waits, before it gets one turn. */
export const FOREGROUND_TURNS_PER_BACKGROUND = 4;

interface Waiter<T> {
  resolve: (session: T) => void;
  reject: (err: Error) => void;
  /** A request's wait is bounded; background work waits for its turn however long it takes. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * The single session of an embedded database, handed to one query or
 * transaction at a time, with a pool's interface (knex takes it as its
 * connection pool). Turns wait in two lines: requests first, background work
 * (outbox relays, event consumers, timers: code run by inBackground) after
 * them, so a reply is not queued behind work nobody waits for; yet background
 * work gets every FOREGROUND_TURNS_PER_BACKGROUND + 1-th turn while requests
 * keep coming, so its backlog does not grow without end.
 *
 * PGlite never yields to the event loop while it runs a statement, and turns
 * hand on through promises, so a line of background turns would run to its
 * end before a request that arrived meanwhile is even read: the session is
 * handed to background work only after the event loop has polled for I/O
 * (setImmediate), and requests read then go first. Background work has no
 * acquire time-out (it is nobody's reply, and under overload a time-out only
 * made relays and consumers fail and back off, lagging further); requests
 * keep theirs.
 */
export class SessionTurns<T> {
  private readonly foreground: Array<Waiter<T>> = [];
  private readonly backgroundLine: Array<Waiter<T>> = [];
  private held = false;
  private destroyed = false;
  /** Requests served in a row while background work waited. */
  private foregroundRun = 0;
  /** The session is being held on through a poll for I/O before it goes to background work. */
  private handingOn = false;
  /** Told when the session is free again (destroy waits for it). */
  private idle: (() => void) | undefined;

  /**
   * How long a turn is waited for before it fails, read when the wait starts:
   * named as tarn's pool names it, so a request's deadline bounds the wait the
   * same way on both (waitNoLongerThanTheRequest sets it for one acquire).
   */
  acquireTimeoutMillis: number;

  constructor(
    private readonly session: T,
    acquireTimeoutMs: number,
  ) {
    this.acquireTimeoutMillis = acquireTimeoutMs;
  }

  acquire(): { promise: Promise<T> } {
    if (this.destroyed) return { promise: Promise.reject(new Error("the embedded database is closed")) };
    if (!this.held && this.foreground.length === 0 && this.backgroundLine.length === 0) {
      this.held = true;
      return { promise: Promise.resolve(this.session) };
    }
    const background = isBackground();
    const line = background ? this.backgroundLine : this.foreground;
    const promise = new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = { resolve, reject, timer: undefined };
      if (!background) {
        waiter.timer = setTimeout(() => {
          const at = line.indexOf(waiter);
          if (at !== -1) line.splice(at, 1);
          reject(new TimeoutError("Timeout acquiring the embedded database's session"));
        }, this.acquireTimeoutMillis);
      }
      line.push(waiter);
    });
    return { promise };
  }

  release(session: T): boolean {
    if (session !== this.session || !this.held || this.handingOn) return false;
    if (this.foreground.length === 0 && this.backgroundLine.length > 0) {
      // Held on through one poll for I/O: requests that arrived meanwhile are read, and served first.
      if (!this.handingOn) {
        this.handingOn = true;
        setImmediate(() => {
          this.handingOn = false;
          this.handOn();
        });
      }
      return true;
    }
    this.handOn();
    return true;
  }

  /** Gives the held session to the next in line, or frees it. */
  private handOn(): void {
    const next = this.next();
    if (!next) {
      this.held = false;
      this.idle?.();
      this.idle = undefined;
      return;
    }
    clearTimeout(next.timer);
    next.resolve(this.session);
  }

  private next(): Waiter<T> | undefined {
    const backgroundDue = this.backgroundLine.length > 0 && (this.foreground.length === 0 || this.foregroundRun >= FOREGROUND_TURNS_PER_BACKGROUND);
    if (backgroundDue) {
      this.foregroundRun = 0;
      return this.backgroundLine.shift();
    }
    if (this.backgroundLine.length > 0) this.foregroundRun += 1;
    return this.foreground.shift();
  }

  /** Takes no more turns, and resolves once the turns taken and waiting are over. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    while (this.held) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  numFree(): number {
    return this.held || this.destroyed ? 0 : 1;
  }

  numUsed(): number {
    return this.held ? 1 : 0;
  }

  numPendingAcquires(): number {
    return this.foreground.length + this.backgroundLine.length;
  }
}
