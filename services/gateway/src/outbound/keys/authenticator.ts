import type { Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { apiKeyMode, hashApiKey } from "@sched/ids";
import { accountsAuthenticate, callerChanged, invitesCalendarConnected, keyChanged, keyRevoked, type Caller } from "@sched/proto";
import { bearerToken } from "../../domain/bearer.js";
import { KeyCache } from "./keyCache.js";

const unauthorized = (message: string) => new AppError("unauthorized", message);

/** How long invites may take to say whether a caller has calendars: past it the caller goes without the answer rather than waiting. */
const CALENDAR_CONNECTED_TIMEOUT_MS = 250;

/**
 * The API key a request presents, read and hashed once: either a caller
 * resolved here recently, or the hash to look up, or what is wrong with it.
 */
export type PresentedKey = { caller: Caller } | { keyHash: string } | { refusal: AppError };

/** Resolves the bearer API key of a request to its caller, through a short cache. */
export class Authenticator {
  private readonly cache: KeyCache;
  private readonly timeoutMs: number;
  /**
   * Look-ups under way, by key hash: when a busy key's entry expires, the
   * requests that find it gone together share one question to accounts
   * rather than each asking its own.
   */
  private readonly asking = new Map<string, Promise<Caller>>();

  private readonly now: () => number;

  /** `now` is the clock the cache's ages are read on (a test's own). */
  constructor(private readonly bus: Bus, options: { cacheTtlMs: number; timeoutMs: number; now?: () => number }) {
    this.cache = new KeyCache(options.cacheTtlMs);
    this.timeoutMs = options.timeoutMs;
    this.now = options.now ?? Date.now;
  }

  /**
   * Listens for revocations, changed limits and changed accounts (a new zone)
   * so every replica forgets the cached callers at once.
   */
  async listen(): Promise<{ stop(): Promise<void> }> {
    const subscriptions = await Promise.all([
      this.bus.onNotice(keyRevoked, ({ keyHash }) => this.forget(keyHash)),
      this.bus.onNotice(keyChanged, ({ keyHash }) => this.forget(keyHash)),
      this.bus.onNotice(callerChanged, ({ userId }) => {
        this.cache.dropUser(userId);
        this.asking.clear();
      }),
    ]);
    return { stop: async () => void (await Promise.all(subscriptions.map((s) => s.stop()))) };
  }

  /**
   * Reads the key of an Authorization header: the caller when this gateway
   * resolved it recently, without asking anyone. An entry past half its age
   * is asked for again meanwhile, once, so that the requests of a busy key
   * never all find it gone together, each checking its address and waiting
   * for accounts as an unknown key's must.
   */
  present(authorization: string | undefined): PresentedKey {
    if (!authorization) return { refusal: unauthorized("Missing API key: send Authorization: Bearer <API_KEY>.") };
    const key = bearerToken(authorization);
    if (!key || !apiKeyMode(key)) return { refusal: unauthorized("Malformed API key: expected Authorization: Bearer sk_test_… or sk_live_….") };
    const keyHash = hashApiKey(key);
    const cached = this.cache.lookUp(keyHash, this.now());
    if (!cached) return { keyHash };
    if (cached.renewalDue && !this.asking.has(keyHash)) this.renew(keyHash);
    return { caller: cached.caller };
  }

  /** The caller of a presented key: asked of accounts unless known; 401 when there is none. */
  async authenticate(presented: PresentedKey): Promise<Caller> {
    if ("refusal" in presented) throw presented.refusal;
    if ("caller" in presented) return presented.caller;
    const { keyHash } = presented;
    const cached = this.cache.get(keyHash, this.now());
    if (cached) return cached;
    return this.asking.get(keyHash) ?? this.ask(keyHash);
  }

  /** Asks for a key whose entry still serves; a key accounts no longer knows is forgotten at once. */
  private renew(keyHash: string): void {
    this.ask(keyHash).catch((err: unknown) => {
      if (err instanceof AppError && err.code === "unauthorized") this.forget(keyHash);
    });
  }

  private ask(keyHash: string): Promise<Caller> {
    const asking = this.lookUp(keyHash);
    this.asking.set(keyHash, asking);
    return asking;
  }

  /**
   * One question to accounts, then one to invites (whether the user has a
   * calendar connection); the answer is kept only if no notice came meanwhile
   * (a notice forgets the question): invites' caller-changed for a connection
   * made while it was asked keeps a "not connected" from being cached.
   */
  private lookUp(keyHash: string): Promise<Caller> {
    const askedAt = this.now();
    const asking: Promise<Caller> = this.bus
      .request(accountsAuthenticate, { keyHash }, { timeoutMs: this.timeoutMs })
      .then(({ caller }) => this.withCalendarConnected(caller))
      .then((caller) => {
        if (this.asking.get(keyHash) === asking) this.cache.set(keyHash, caller, askedAt);
        return caller;
      })
      .finally(() => {
        if (this.asking.get(keyHash) === asking) this.asking.delete(keyHash);
      });
    return asking;
  }

  /** The caller and whether the user's calendars add busy time; without that (invites did not answer) it is unknown, and the day view asks. */
  private async withCalendarConnected(caller: Caller): Promise<Caller> {
    try {
      const { connected } = await this.bus.request(invitesCalendarConnected, { mode: caller.mode, userId: caller.userId }, { timeoutMs: Math.min(this.timeoutMs, CALENDAR_CONNECTED_TIMEOUT_MS) });
      return { ...caller, calendarConnected: connected };
    } catch {
      return caller;
    }
  }

  /** A revoked or changed key: its cached caller and any answer on its way are forgotten. */
  private forget(keyHash: string): void {
    this.cache.drop(keyHash);
    this.asking.delete(keyHash);
  }
}
