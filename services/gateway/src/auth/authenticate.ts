import type { Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { apiKeyMode, hashApiKey } from "@sched/ids";
import { accountsAuthenticate, callerChanged, keyChanged, keyRevoked, type Caller } from "@sched/proto";
import { bearerToken } from "../domain/bearer.js";
import { KeyCache } from "./keyCache.js";

const unauthorized = (message: string) => new AppError("unauthorized", message);

/** Resolves the bearer API key of a request to its caller, through a short cache. */
export class Authenticator {
  private readonly cache: KeyCache;
  private readonly timeoutMs: number;

  constructor(private readonly bus: Bus, options: { cacheTtlMs: number; timeoutMs: number }) {
    this.cache = new KeyCache(options.cacheTtlMs);
    this.timeoutMs = options.timeoutMs;
  }

  /**
   * Listens for revocations, changed limits and changed accounts (a new zone)
   * so every replica forgets the cached callers at once.
   */
  async listen(): Promise<{ stop(): Promise<void> }> {
    const subscriptions = await Promise.all([
      this.bus.onNotice(keyRevoked, ({ keyHash }) => this.cache.drop(keyHash)),
      this.bus.onNotice(keyChanged, ({ keyHash }) => this.cache.drop(keyHash)),
      this.bus.onNotice(callerChanged, ({ userId }) => this.cache.dropUser(userId)),
    ]);
    return { stop: async () => void (await Promise.all(subscriptions.map((s) => s.stop()))) };
  }

  /** The caller of a key resolved here recently, without asking anyone; undefined otherwise. */
  known(authorization: string | undefined): Caller | undefined {
    const key = bearerToken(authorization);
    return key && apiKeyMode(key) ? this.cache.get(hashApiKey(key)) : undefined;
  }

  async authenticate(authorization: string | undefined): Promise<Caller> {
    if (!authorization) throw unauthorized("Missing API key: send Authorization: Bearer <API_KEY>.");
    const key = bearerToken(authorization);
    if (!key || !apiKeyMode(key)) throw unauthorized("Malformed API key: expected Authorization: Bearer sk_test_… or sk_live_….");
    const keyHash = hashApiKey(key);
    const cached = this.cache.get(keyHash);
    if (cached) return cached;
    const { caller } = await this.bus.request(accountsAuthenticate, { keyHash }, { timeoutMs: this.timeoutMs });
    this.cache.set(keyHash, caller);
    return caller;
  }
}
