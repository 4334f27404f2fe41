import type { Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type AnswerWatch, claimWatchChecks, connectionById, type ConnectionRecord, extendWatch, forgetOrphanWatches, providerEventsByConnection, saveWatch, takeWatch } from "../db/queries.js";
import { asDeliveryFailure } from "../domain/retry.js";
import { watchStep } from "../domain/watchRenewal.js";
import { googleFailure } from "./google.js";
import { graphStatusOf } from "./microsoft.js";
import { everyInterval } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface AnswerWatchSettings {
  /** The https address providers reach the API at (PUBLIC_BASE_URL): notifications go to `/v1/provider-notifications/…` under it. */
  publicBaseUrl: string;
  /** How often each connection's channel is looked at (opened when missing, renewed when near its lapse). */
  checkMs: number;
  /** The providers whose connections get channels (those set up here). */
  providers: ReadonlyArray<"google" | "microsoft">;
}

/** Google keeps an events channel up to a week at most, unless told shorter. */
const GOOGLE_CHANNEL_TTL_S = 7 * 86_400;
/** Graph keeps a subscription to a user's events under seven days; three leave room. */
const GRAPH_SUBSCRIPTION_MS = 3 * 86_400_000;

/** Secrets are kept only as hashes: a database read does not let anyone forge notifications. */
export const hashWatchSecret = (secret: string) => createHash("sha256").update(secret).digest("hex");

/**
 * Keeps a push channel open on the calendar of each Google and Microsoft
 * connection with meetings of ours: Google's `events.watch` on the primary
 * calendar, Graph's subscription to `/me/events` (changes), each with a
 * secret of its own that every notification must carry back. One replica
 * looks at a connection each check (its turn in answer_watches); a channel
 * near its lapse is renewed (Graph's extended, Google's replaced, as Google
 * extends none). A channel that cannot be opened leaves the connection to
 * polling at its usual interval.
 */
export function keepAnswerWatches(db: Knex, vault: ConnectionVault, logger: Logger, settings: AnswerWatchSettings): Stoppable {
  const log = logger.child({ component: "answer-watches" });
  const address = (provider: "google" | "microsoft") => `${settings.publicBaseUrl}/v1/provider-notifications/${provider}`;

  const openGoogle = async (connection: ConnectionRecord, old: AnswerWatch) => {
    const { calendar } = vault.session(connection);
    const secret = randomBytes(32).toString("base64url");
    try {
      const res = await calendar.events.watch({
        calendarId: "primary",
        requestBody: { id: randomUUID(), type: "web_hook", address: address("google"), token: secret, params: { ttl: String(GOOGLE_CHANNEL_TTL_S) } },
      });
      const channelId = res.data.id ?? "";
      const expiresAt = new Date(Number(res.data.expiration ?? Date.now() + GOOGLE_CHANNEL_TTL_S * 1_000));
      await saveWatch(db, connection.id, { channelId, resourceId: res.data.resourceId ?? null, secretHash: hashWatchSecret(secret), expiresAt });
    } catch (err) {
      throw googleFailure(err);
    }
    if (old.channelId) await stopChannel(vault, connection, old.channelId, old.resourceId).catch((err: unknown) => log.warn({ connectionId: connection.id, error: String(err) }, "could not stop a replaced Google channel; it lapses by itself"));
  };

  const openMicrosoft = async (connection: ConnectionRecord, old: AnswerWatch, step: "open" | "renew") => {
    const session = vault.microsoft(connection);
    const expirationDateTime = new Date(Date.now() + GRAPH_SUBSCRIPTION_MS).toISOString();
    try {
      if (step === "renew" && old.channelId) {
        const renewed = (await session.graph.api(`/subscriptions/${encodeURIComponent(old.channelId)}`).patch({ expirationDateTime })) as { expirationDateTime?: string };
        await extendWatch(db, connection.id, new Date(renewed.expirationDateTime ?? expirationDateTime));
        return;
      }
      const secret = randomBytes(32).toString("base64url");
      // Graph checks the address first (its handshake, answered by the notifications route) and opens nothing if it fails.
      const created = (await session.graph.api("/subscriptions").post({ changeType: "updated", notificationUrl: address("microsoft"), resource: "/me/events", expirationDateTime, clientState: secret })) as {
        id: string;
        expirationDateTime?: string;
      };
      await saveWatch(db, connection.id, { channelId: created.id, resourceId: null, secretHash: hashWatchSecret(secret), expiresAt: new Date(created.expirationDateTime ?? expirationDateTime) });
    } catch (err) {
      const failure = session.failureOf(err);
      // A subscription Graph no longer has (removed on its side) is opened anew at the next check.
      if (step === "renew" && graphStatusOf(err) === 404) await extendWatch(db, connection.id, new Date(0));
      throw failure;
    }
  };

  const check = async (watch: AnswerWatch) => {
    const step = watchStep(watch.expiresAt, Date.now(), settings.checkMs);
    if (step === "keep") return;
    const connection = await connectionById(db, watch.connectionId);
    if (!connection || connection.status !== "active") return;
    try {
      if (connection.provider === "google") await openGoogle(connection, watch);
      else if (connection.provider === "microsoft") await openMicrosoft(connection, watch, step);
    } catch (err) {
      const failure = asDeliveryFailure(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      log.warn({ connectionId: connection.id, provider: connection.provider, error: failure.message }, "could not open a push channel on a calendar; its answers are polled");
      return;
    }
    log.info({ connectionId: connection.id, provider: connection.provider, step }, "push channel of a calendar opened");
  };

  const round = async (stopped: () => boolean) => {
    await forgetOrphanWatches(db);
    for (const provider of settings.providers) {
      const due = await providerEventsByConnection(db, provider);
      for (const watch of await claimWatchChecks(db, provider, due.map((d) => d.connectionId), settings.checkMs)) {
        if (stopped()) return;
        await check(watch);
      }
    }
  };
  const rounds = everyInterval(round, settings.checkMs, log);
  // The first check at start rather than an interval later.
  rounds.wake();
  return rounds;
}

/**
 * Stops the push channel of a connection being removed, with its grant
 * (read before the removal): best effort, as the provider lets a channel
 * lapse anyway and a notification of a channel forgotten is ignored.
 */
export async function stopAnswerWatch(db: Knex, vault: ConnectionVault, connection: ConnectionRecord, log: Logger): Promise<void> {
  const watch = await takeWatch(db, connection.id);
  if (!watch?.channelId) return;
  try {
    await stopChannel(vault, connection, watch.channelId, watch.resourceId);
  } catch (err) {
    log.warn({ connectionId: connection.id, provider: connection.provider, error: err instanceof Error ? err.message : String(err) }, "could not stop the push channel of a removed calendar connection; it lapses by itself");
  }
}

/** Ends a channel on the provider's side: Google's by its id and resource, Graph's subscription by its id. */
async function stopChannel(vault: ConnectionVault, connection: ConnectionRecord, channelId: string, resourceId: string | null): Promise<void> {
  if (connection.provider === "google") await vault.session(connection).calendar.channels.stop({ requestBody: { id: channelId, ...(resourceId ? { resourceId } : {}) } });
  else if (connection.provider === "microsoft") await vault.microsoft(connection).graph.api(`/subscriptions/${encodeURIComponent(channelId)}`).delete();
}
