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
  timer: NodeJS.Timeout;
}

/**
 * The single session of an embedded database, handed to one query or
 * transaction at a time, with a pool's interface (knex takes it as its
 * connection pool). Turns wait in two lines: requests first, background work
 * (outbox relays, event consumers, timers: code run by inBackground) after
 * them, so a reply is not queued behind work nobody waits for; yet background
 * work gets every FOREGROUND_TURNS_PER_BACKGROUND + 1-th turn while requests
 * keep coming, so its backlog does not grow without end.
 */
export class SessionTurns<T> {
  private readonly foreground: Array<Waiter<T>> = [];
  private readonly backgroundLine: Array<Waiter<T>> = [];
  private held = false;
  private destroyed = false;
  /** Requests served in a row while background work waited. */
  private foregroundRun = 0;
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
    const line = isBackground() ? this.backgroundLine : this.foreground;
    const promise = new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = line.indexOf(waiter);
          if (at !== -1) line.splice(at, 1);
          reject(new TimeoutError("Timeout acquiring the embedded database's session"));
        }, this.acquireTimeoutMillis),
      };
      line.push(waiter);
    });
    return { promise };
  }

  release(session: T): boolean {
    if (session !== this.session || !this.held) return false;
    const next = this.next();
    if (!next) {
      this.held = false;
      this.idle?.();
      this.idle = undefined;
      return true;
    }
    clearTimeout(next.timer);
    next.resolve(this.session);
    return true;
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
