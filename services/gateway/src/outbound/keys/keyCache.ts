import type { Caller } from "@sched/proto";

/**
 * Resolved API keys, by hash, for a short time. Entries are dropped at once
 * when a key-revoked, key-changed or caller-changed notice arrives; the TTL
 * bounds staleness if one is missed.
 */
export class KeyCache {
  private readonly entries = new Map<string, { caller: Caller; expiresAt: number }>();

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {}

  get(keyHash: string, now = Date.now()): Caller | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.caller;
  }

  set(keyHash: string, caller: Caller, now = Date.now()): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { caller, expiresAt: now + this.ttlMs });
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
