import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { accountsLookupUsers, type CalendarConnection, connectionsAdminAttach, connectionsDelete, connectionsGoogleCallback, connectionsList, connectionsStartGoogle, formatTimestamp } from "@sched/proto";
import { createHash, randomBytes } from "node:crypto";
import { deleteConnection, listConnections, saveOAuthState, takeOAuthState, upsertConnection, type ConnectionRecord } from "../db/connections.js";
import type { ProviderTokens } from "../domain/tokenCipher.js";
import type { GoogleCalendar } from "../delivery/google.js";
import type { ConnectionVault } from "../delivery/vault.js";

/** Long enough to read a consent screen, short enough that a leaked URL soon stops working. */
export const CONSENT_TTL_MS = 10 * 60_000;

/** States are kept only as hashes: a database read does not hand out consents in progress. */
export const hashState = (state: string) => createHash("sha256").update(state).digest("hex");

export interface ConnectionDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
  google: GoogleCalendar;
  vault: ConnectionVault;
}

export function connectionView(c: ConnectionRecord): CalendarConnection {
  return {
    ...{ id: c.id, provider: c.provider, accountEmail: c.accountEmail, status: c.status, createdAt: formatTimestamp(c.createdAt) },
    ...{ serverUrl: c.serverUrl, default: c.isDefault, busyCalendars: c.busyCalendars },
  };
}

/**
 * Calendar connections: the OAuth 2.0 consent (start, then Google's redirect
 * to the callback), the list, removal, and the operator's attach for tests
 * and demos. The callback carries no API key: the `state` it brings back
 * is a random single-use value issued to the user who started, kept only as
 * a hash, and valid for ten minutes.
 */
export function connectionBindings(deps: ConnectionDeps): EndpointBinding[] {
  const { db, google, vault } = deps;
  const store = (userId: string, accountEmail: string | null, tokens: ProviderTokens, provider: "google" | "microsoft" = "google") =>
    upsertConnection(db, { id: newId("cal"), userId, provider, accountEmail }, (id) => vault.tokenCipher.seal(tokens, id));

  return [
    bind(connectionsStartGoogle, async (_request, ctx) => {
      const caller = requireCaller(ctx);
      if (!google.configured) throw new AppError("service_unavailable", "Google Calendar is not configured on this server.");
      const state = randomBytes(32).toString("base64url");
      const expiresAt = new Date(Date.now() + CONSENT_TTL_MS);
      await saveOAuthState(db, hashState(state), caller.userId, expiresAt);
      return { status: 201, body: { authorizationUrl: google.consentUrl(state), expiresAt: formatTimestamp(expiresAt) } };
    }),

    bind(connectionsGoogleCallback, async ({ query }) => {
      if (query.error) throw new AppError("invalid_request", `Google did not grant access: ${query.error}.`, { param: "error" });
      const userId = await takeOAuthState(db, hashState(query.state));
      if (!userId) throw new AppError("invalid_request", "Invalid state: unknown, already used or expired; start the connection again.", { param: "state" });
      if (!query.code) throw new AppError("invalid_request", "Invalid code: Google's redirect carried none.", { param: "code" });
      const granted = await google.exchangeCode(query.code).catch((err: unknown) => {
        deps.logger.warn({ err }, "Google refused the authorization code");
        throw new AppError("invalid_request", "Invalid code: Google did not accept it; start the connection again.", { param: "code" });
      });
      const connection = await store(userId, granted.accountEmail, granted.tokens);
      return { status: 200, body: connectionView(connection) };
    }),

    bind(connectionsList, async (_request, ctx) => {
      const caller = requireCaller(ctx);
      return { status: 200, body: { data: (await listConnections(db, caller.userId)).map(connectionView) } };
    }),

    bind(connectionsDelete, async ({ params }, ctx) => {
      const caller = requireCaller(ctx);
      if (!isId("cal", params.id) || !(await deleteConnection(db, caller.userId, params.id))) throw notFound("calendar connection");
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
