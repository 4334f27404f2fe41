import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { providerNotificationsGoogle, providerNotificationsMicrosoft } from "@sched/proto";
import { timingSafeEqual } from "node:crypto";
import { answersDueNow, watchOfChannel } from "../db/queries.js";
import { hashWatchSecret } from "../outbound/answerWatches.js";

export interface NotificationDeps {
  db: Knex;
  logger: Logger;
  /** Starts a round of reading the provider's answers now (the notified connection is due). */
  wake: { google: () => void; microsoft: () => void };
}

/** A forwarded header by name, whatever case the bus kept it in. */
function header(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/**
 * The providers' push notifications: a channel's secret that matches makes
 * that connection's answers due now, and its provider's round is woken to
 * read them after the answer goes back (Google wants it at once, Graph
 * within 3 s). A channel unknown, lapsed or with the wrong secret gets the
 * same answer and changes nothing, so the route tells a guesser nothing.
 */
export function providerNotificationBindings(deps: NotificationDeps): EndpointBinding[] {
  const log = deps.logger.child({ component: "provider-notifications" });
  const notified = async (provider: "google" | "microsoft", channelId: string, secret: string): Promise<void> => {
    const watch = await watchOfChannel(deps.db, provider, channelId);
    const given = Buffer.from(hashWatchSecret(secret), "hex");
    if (!watch || !timingSafeEqual(given, Buffer.from(watch.secretHash, "hex"))) {
      log.info({ provider }, "a notification of a channel not ours, or with the wrong secret, was ignored");
      return;
    }
    await answersDueNow(deps.db, watch.connectionId);
    deps.wake[provider]();
  };

  return [
    bind(providerNotificationsGoogle, async (_request, ctx) => {
      const channelId = header(ctx.headers, "X-Goog-Channel-ID");
      const token = header(ctx.headers, "X-Goog-Channel-Token");
      // `sync` only says the channel is open; `exists` that something in the calendar changed.
      if (channelId && token && header(ctx.headers, "X-Goog-Resource-State") !== "sync") await notified("google", channelId, token);
      return { status: 202 };
    }),
    bind(providerNotificationsMicrosoft, async ({ query, body }) => {
      if (query.validationToken !== undefined) return { status: 200, body: query.validationToken, headers: { "Content-Type": "text/plain; charset=utf-8" } };
      const seen = new Set<string>();
      for (const change of body?.value ?? []) {
        const key = `${change.subscriptionId}|${change.clientState}`;
        if (!change.clientState || seen.has(key)) continue;
        seen.add(key);
        await notified("microsoft", change.subscriptionId, change.clientState);
      }
      return { status: 202 };
    }),
  ];
}
