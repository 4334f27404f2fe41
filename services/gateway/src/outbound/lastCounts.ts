import type { RateBucket } from "@sched/proto";
import type { LastCount } from "../domain/countBeside.js";

/**
 * The last count Redis gave this replica of each key, per bucket (a map
 * each, so no key string is built per request). A key's record is updated in
 * place, so a busy key makes no garbage. Bounded: past maxEntries the key
 * first recorded is forgotten, and a forgotten key's next read is counted
 * before it is forwarded, as a new key's is.
 */
export class LastCounts {
  private readonly byBucket: Record<RateBucket, Map<string, LastCount>> = { standard: new Map(), ai: new Map() };

  constructor(private readonly maxEntries = 10_000) {}

  get(bucket: RateBucket, apiKeyId: string): LastCount | undefined {
    return this.byBucket[bucket].get(apiKeyId);
  }

  record(bucket: RateBucket, apiKeyId: string, consumed: number, windowEndsAtMs: number, countedAtMs: number, address: string, addressHadFailures: boolean): void {
    const counts = this.byBucket[bucket];
    const last = counts.get(apiKeyId);
    if (last) {
      last.consumed = consumed;
      last.windowEndsAtMs = windowEndsAtMs;
      last.countedAtMs = countedAtMs;
      last.address = address;
      last.addressHadFailures = addressHadFailures;
      return;
    }
    if (counts.size >= this.maxEntries) {
      const first = counts.keys().next().value;
      if (first !== undefined) counts.delete(first);
    }
    counts.set(apiKeyId, { consumed, windowEndsAtMs, countedAtMs, address, addressHadFailures });
  }

  forget(bucket: RateBucket, apiKeyId: string): void {
    this.byBucket[bucket].delete(apiKeyId);
  }
}
