import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import { accountsLookupUsers, connectionsAdminAttach, connectionsDelete, connectionsList } from "@sched/proto";
import type { Logger } from "@sched/logging";
import { deleteConnection, findConnection, listConnections, upsertConnection } from "../db/connections.js";
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

/** Calendar connections: the list, removal, and the operator's attach for tests and demos (the consent is in consent.ts). */
export function connectionBindings(deps: ConnectionDeps): EndpointBinding[] {
  const { db, vault } = deps;
  const store = (userId: string, accountEmail: string | null, tokens: ProviderTokens, provider: "google" | "microsoft" = "google") =>
    upsertConnection(db, { id: newId("cal"), userId, provider, accountEmail }, (id) => vault.tokenCipher.seal(tokens, id));

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
      // After the answer: the provider's side may be slow, and the channel lapses by itself anyway.
      void stopAnswerWatch(db, vault, connection, deps.logger).catch((err: unknown) => deps.logger.warn({ err, connectionId: connection.id }, "could not forget the push channel of a removed calendar connection"));
      return { status: 204 };
    }),

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
