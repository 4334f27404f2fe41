import { AppError } from "@sched/errors";

/** The most places one holder (a client address, an API key) may take out of `capacity`. */
export function holderShare(capacity: number, sharePercent: number): number {
  return Math.max(1, Math.floor((capacity * sharePercent) / 100));
}

/**
 * A fixed number of places, of which one holder may take at most its share:
 * a place is taken for every holder of a request at once (its address and,
 * once known, its key), so one client can fill its share and never the
 * whole. Kept in this process's memory: what it bounds is this replica's.
 */
export class Places {
  private taken = 0;
  private readonly byHolder = new Map<string, number>();
  private readonly share: number;

  /** `what` names the places in the refusal ("requests in progress", "bodies being received"). */
  constructor(
    private readonly capacity: number,
    sharePercent: number,
    private readonly what: string,
  ) {
    this.share = holderShare(capacity, sharePercent);
  }

  /**
   * Takes a place for these holders and returns what gives it back (once,
   * however often it is called); 503 with Retry-After when all places are
   * taken or any holder has its share.
   */
  take(holders: readonly string[]): () => void {
    if (this.taken >= this.capacity) {
      throw new AppError("service_unavailable", `The gateway is at capacity: it has no room for more ${this.what}; retry shortly.`, { retryAfterSeconds: 1 });
    }
    if (this.anyAtShare(holders)) {
      throw new AppError("service_unavailable", `This client holds its share of the gateway's ${this.what}; retry shortly.`, { retryAfterSeconds: 1 });
    }
    this.taken++;
    for (const h of holders) this.byHolder.set(h, (this.byHolder.get(h) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken--;
      for (const h of holders) {
        const left = (this.byHolder.get(h) ?? 1) - 1;
        if (left > 0) this.byHolder.set(h, left);
        else this.byHolder.delete(h);
      }
    };
  }

  /** A loop rather than `some` and an arrow made for every request. */
  private anyAtShare(holders: readonly string[]): boolean {
    for (const h of holders) if ((this.byHolder.get(h) ?? 0) >= this.share) return true;
    return false;
  }

  /** Places taken now (for tests and metrics). */
  get inUse(): number {
    return this.taken;
  }
}
