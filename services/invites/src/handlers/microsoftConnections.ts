import { bind, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { connectionsMicrosoftCallback, connectionsStartMicrosoft, formatTimestamp } from "@sched/proto";
import { randomBytes } from "node:crypto";
import { saveOAuthState, takeOAuthState, upsertConnection } from "../db/connections.js";
import type { MicrosoftCalendar } from "../delivery/microsoft.js";
import type { ConnectionVault } from "../delivery/vault.js";
import { CONSENT_TTL_MS, connectionView, hashState } from "./connections.js";

export interface MicrosoftConnectionDeps {
  db: Knex;
  logger: Logger;
  microsoft: MicrosoftCalendar;
  vault: ConnectionVault;
}

/**
 * Connecting a Microsoft 365 / Outlook.com calendar: the OAuth 2.0 consent
 * at Microsoft's identity platform, then its redirect to the callback. As
 * with Google, the callback carries no API key: the `state` it brings back
 * is a random single-use value issued to the user who started (for
 * Microsoft only), kept only as a hash, and valid for ten minutes.
 */
export function microsoftConnectionBindings(deps: MicrosoftConnectionDeps): EndpointBinding[] {
  const { db, microsoft, vault } = deps;
  return [
    bind(connectionsStartMicrosoft, async (_request, ctx) => {
      const caller = requireCaller(ctx);
      if (!microsoft.configured) throw new AppError("service_unavailable", "Microsoft calendars are not configured on this server.");
      const state = randomBytes(32).toString("base64url");
      const expiresAt = new Date(Date.now() + CONSENT_TTL_MS);
      await saveOAuthState(db, hashState(state), caller.userId, expiresAt, "microsoft");
      return { status: 201, body: { authorizationUrl: microsoft.consentUrl(state), expiresAt: formatTimestamp(expiresAt) } };
    }),

    bind(connectionsMicrosoftCallback, async ({ query }) => {
      if (query.error) throw new AppError("invalid_request", `Microsoft did not grant access: ${query.error}.`, { param: "error" });
      const userId = await takeOAuthState(db, hashState(query.state), "microsoft");
      if (!userId) throw new AppError("invalid_request", "Invalid state: unknown, already used or expired; start the connection again.", { param: "state" });
      if (!query.code) throw new AppError("invalid_request", "Invalid code: Microsoft's redirect carried none.", { param: "code" });
      const granted = await microsoft.exchangeCode(query.code).catch((err: unknown) => {
        deps.logger.warn({ error: err instanceof Error ? err.message : String(err) }, "Microsoft refused the authorization code");
        throw new AppError("invalid_request", "Invalid code: Microsoft did not accept it; start the connection again.", { param: "code" });
      });
      const connection = await upsertConnection(db, { id: newId("cal"), userId, provider: "microsoft", accountEmail: granted.accountEmail }, (id) => vault.tokenCipher.seal(granted.tokens, id));
      return { status: 200, body: connectionView(connection) };
    }),
  ];
}
