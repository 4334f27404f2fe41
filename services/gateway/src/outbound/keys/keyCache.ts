import type { Caller } from "@sched/proto";

/** A cached caller, and whether it is time to ask for it again while it is still served. */
export interface CachedCaller {
  caller: Caller;
  renewalDue: boolean;
}

/**
 * Resolved API keys, by hash, for a short time. Entries are dropped at once
 * when a key-revoked, key-changed or caller-changed notice arrives; the TTL
 * bounds staleness if one is missed. An entry lasts its TTL from the moment
 * its question was asked, so an answer that took long is trusted no longer
 * for it. Past half its TTL it is due for renewal: a busy key is asked for
 * again while its entry still serves, and never expires under its requests.
 */
export class KeyCache {
  private readonly entries = new Map<string, { caller: Caller; renewAt: number; expiresAt: number }>();

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {}

  get(keyHash: string, now = Date.now()): Caller | undefined {
    return this.lookUp(keyHash, now)?.caller;
  }

  /** The live entry of a key, if any, and whether it is due for renewal. */
  lookUp(keyHash: string, now = Date.now()): CachedCaller | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return { caller: entry.caller, renewalDue: entry.renewAt <= now };
  }

  /** Keeps the caller accounts gave for a question asked at `askedAt`. */
  set(keyHash: string, caller: Caller, askedAt = Date.now()): void {
    if (!this.entries.has(keyHash) && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { caller, renewAt: askedAt + this.ttlMs / 2, expiresAt: askedAt + this.ttlMs });
  }

  drop(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  /**
   * Drops every key of one user. A scan: a user's account changes rarely, and
   * at most maxEntries are looked at, in well under a millisecond.
   */
  dropUser(userId: string): void {
    for (const [keyHash, entry] of this.entries) if (entry.caller.userId === userId) this.entries.delete(keyHash);
  }
}
