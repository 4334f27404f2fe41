import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import { accountsLookupUsers, callerChanged, connectionsAdminAttach, connectionsDelete, connectionsList, invitesCalendarConnected } from "@sched/proto";
import type { Logger } from "@sched/logging";
import { deleteConnection, findConnection, hasActiveConnection, listConnections, upsertConnection } from "../db/queries.js";
import { stopAnswerWatch } from "../outbound/answerWatches.js";
import type { ProviderTokens } from "../domain/tokenCipher.js";
import type { ConnectionVault } from "../outbound/vault.js";
import { connectionView } from "./connectionView.js";

export interface ConnectionDeps {
  db: Knex;
  bus: Bus;
  vault: ConnectionVault;
  logger: Logger;
}

/**
 * Tells every gateway replica to forget the user's cached callers, whose
 * `calendarConnected` may have changed: sent before the change is answered,
 * as accounts does for a new zone (docs/design.md "Identity"), so no day view
 * after the answer goes without the calendars' busy time. A connection found
 * broken needs none: a caller that still says "connected" only asks in vain.
 */
export async function announceConnectionChange(bus: Bus, userId: string): Promise<void> {
  await bus.notify(callerChanged, { userId });
}

/** Calendar connections: the list, removal, and the operator's attach for tests and demos (the consent is in consent.ts). */
export function connectionBindings(deps: ConnectionDeps): EndpointBinding[] {
  const { db, vault } = deps;
  const store = async (userId: string, accountEmail: string | null, tokens: ProviderTokens, provider: "google" | "microsoft" = "google") => {
    const connection = await upsertConnection(db, { id: newId("cal"), userId, provider, accountEmail }, (id) => vault.tokenCipher.seal(tokens, id));
    await announceConnectionChange(deps.bus, userId);
    return connection;
  };

  return [
    bind(connectionsList, async (_request, ctx) => {
      const caller = requireCaller(ctx);
      return { status: 200, body: { data: (await listConnections(db, caller.userId)).map(connectionView) } };
    }),

    bind(connectionsDelete, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      // Read first: its grant is what stops its push channel once the row is gone.
      const connection = isId("cal", params.id) ? await findConnection(db, caller.userId, params.id) : undefined;
      if (!connection || !(await deleteConnection(db, caller.userId, params.id))) throw notFound("calendar connection");
      await announceConnectionChange(deps.bus, caller.userId);
      // After the answer: the provider's side may be slow, and the channel lapses by itself anyway.
      void stopAnswerWatch(db, vault, connection, deps.logger).catch((err: unknown) => deps.logger.warn({ err, connectionId: connection.id }, "could not forget the push channel of a removed calendar connection"));
      return { status: 204 };
    }),

    // Test mode never asks a provider (invites.v1.calendar-busy answers nothing there).
    bind(invitesCalendarConnected, async ({ mode, userId }) => ({ connected: mode === "live" && (await hasActiveConnection(db, userId)) })),

    bind(connectionsAdminAttach, async ({ params, body }) => {
      const { users } = await deps.bus.request(accountsLookupUsers, { ids: [params.id] }, { timeoutMs: 1_000 });
      if (!users.some((u) => u.id === params.id)) throw notFound("user");
      // Microsoft's busy time is asked by address (getSchedule): a grant without one would never count.
      if (body.provider === "microsoft" && !body.accountEmail) throw new AppError("invalid_request", "Invalid accountEmail: a Microsoft grant needs the account's address.", { param: "accountEmail" });
      const tokens: ProviderTokens = { accessToken: body.accessToken, refreshToken: body.refreshToken, ...(body.expiresAt ? { expiresAt: Date.parse(body.expiresAt) } : {}) };
      const connection = await store(params.id, body.accountEmail ?? null, tokens, body.provider);
      return { status: 201, body: connectionView(connection) };
    }),
  ];
}
