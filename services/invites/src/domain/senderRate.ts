const MINUTE_MS = 60_000;

/**
 * How many messages each sending address may hand over a minute: a bucket
 * per address holding a minute's share, refilled evenly over the minute, so
 * a burst of that share passes and a steady stream above it is held back.
 * A bucket untouched for a minute is full again and forgotten, so the
 * memory is that of the senders of the last minute or so.
 */
export class SenderRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private sweptAt = 0;

  constructor(private readonly perMinute: number) {}

  /** Counts a message from `sender` at `now` (epoch ms); false once the sender has used up its share. */
  take(sender: string, now: number): boolean {
    this.sweep(now);
    const bucket = this.buckets.get(sender);
    const tokens = bucket ? Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / MINUTE_MS) : this.perMinute;
    if (tokens < 1) {
      this.buckets.set(sender, { tokens, at: now });
      return false;
    }
    this.buckets.set(sender, { tokens: tokens - 1, at: now });
    return true;
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < MINUTE_MS) return;
    this.sweptAt = now;
    for (const [sender, bucket] of this.buckets) if (now - bucket.at >= MINUTE_MS) this.buckets.delete(sender);
  }
}
