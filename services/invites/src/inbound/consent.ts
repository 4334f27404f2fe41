import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import {
  connectionsGoogleCallback,
  connectionsMicrosoftCallback,
  connectionsStartGoogle,
  connectionsStartMicrosoft,
  formatTimestamp,
  invitesStartDashboardConsent,
  type CalendarConnection,
  type ConsentOutcome,
  type OAuthProvider,
} from "@sched/proto";
import { createHash, randomBytes } from "node:crypto";
import { saveOAuthState, takeOAuthState, upsertConnection } from "../db/queries.js";
import { announceConnectionChange } from "./connections.js";
import { dashboardReturnUrl, refusalOutcome } from "../domain/consentReturn.js";
import type { ProviderTokens } from "../domain/tokenCipher.js";
import type { GoogleCalendar } from "../outbound/google.js";
import type { MicrosoftCalendar } from "../outbound/microsoft.js";
import type { ConnectionVault } from "../outbound/vault.js";
import { connectionView } from "./connectionView.js";

/** Long enough to read a consent screen, short enough that a leaked URL soon stops working. */
const CONSENT_TTL_MS = 10 * 60_000;

/** States are kept only as hashes: a database read does not hand out consents in progress. */
const hashState = (state: string) => createHash("sha256").update(state).digest("hex");

/** A provider connected by OAuth consent, as the consent needs it. */
interface ConsentClient {
  readonly provider: OAuthProvider;
  /** The provider as the error messages name it. */
  readonly name: string;
  /** What a start answers when the server has no credentials for the provider. */
  readonly notConfigured: string;
  readonly configured: boolean;
  consentUrl(state: string): string;
  exchangeCode(code: string): Promise<{ tokens: ProviderTokens; accountEmail: string | null }>;
}

export interface ConsentDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
  vault: ConnectionVault;
  /** The deployment's own dashboard address: the one place a dashboard consent returns to. */
  dashboardUrl: string;
}

/** What a provider's redirect brings back (the fields the consent reads). */
interface ConsentCallback {
  state: string;
  code?: string | undefined;
  error?: string | undefined;
}

type ConsentAnswer = { status: 200; body: CalendarConnection } | { status: 303; headers: { Location: string } };

/** Issues a single-use state for the user and the provider's consent URL carrying it. */
async function startConsent(db: Knex, client: ConsentClient, userId: string, fromDashboard: boolean): Promise<{ authorizationUrl: string; expiresAt: string }> {
  if (!client.configured) throw new AppError("service_unavailable", client.notConfigured);
  const state = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + CONSENT_TTL_MS);
  await saveOAuthState(db, { stateHash: hashState(state), userId, provider: client.provider, fromDashboard, expiresAt });
  return { authorizationUrl: client.consentUrl(state), expiresAt: formatTimestamp(expiresAt) };
}

/**
 * The provider's redirect after consent. A consent started through the API
 * answers the connection (200) or the error, as JSON; one started in the
 * dashboard sends the browser back to the dashboard's calendars page (303)
 * with the outcome, its refusals and failures included. A state unknown,
 * used or expired cannot say where it started: that is the JSON error.
 */
async function finishConsent(deps: ConsentDeps, client: ConsentClient, query: ConsentCallback): Promise<ConsentAnswer> {
  const started = await takeOAuthState(deps.db, hashState(query.state), client.provider);
  const back = (outcome: ConsentOutcome): ConsentAnswer => ({ status: 303, headers: { Location: dashboardReturnUrl(deps.dashboardUrl, client.provider, outcome) } });
  if (query.error) {
    if (started?.fromDashboard) return back(refusalOutcome(query.error));
    throw new AppError("invalid_request", `${client.name} did not grant access: ${query.error}.`, { param: "error" });
  }
  if (!started) throw new AppError("invalid_request", "Invalid state: unknown, already used or expired; start the connection again.", { param: "state" });
  if (!query.code) {
    if (started.fromDashboard) return back("error");
    throw new AppError("invalid_request", `Invalid code: ${client.name}'s redirect carried none.`, { param: "code" });
  }
  let granted: Awaited<ReturnType<ConsentClient["exchangeCode"]>>;
  try {
    granted = await client.exchangeCode(query.code);
  } catch (err) {
    deps.logger.warn({ error: err instanceof Error ? err.message : String(err), provider: client.provider }, "the provider refused the authorization code");
    if (started.fromDashboard) return back("error");
    throw new AppError("invalid_request", `Invalid code: ${client.name} did not accept it; start the connection again.`, { param: "code" });
  }
  const connection = await upsertConnection(deps.db, { id: newId("cal"), userId: started.userId, provider: client.provider, accountEmail: granted.accountEmail }, (id) =>
    deps.vault.tokenCipher.seal(granted.tokens, id),
  );
  await announceConnectionChange(deps.bus, started.userId);
  return started.fromDashboard ? back("connected") : { status: 200, body: connectionView(connection) };
}

/**
 * The OAuth 2.0 consent of Google and Microsoft calendars: the start (by
 * API key, or for the dashboard's signed-in user), then the provider's
 * redirect to the callback. The callback carries no API key: the `state`
 * it brings back is a random single-use value issued to the user who
 * started (for that provider only), kept only as a hash, and valid for ten
 * minutes.
 */
export function consentBindings(deps: ConsentDeps & { google: GoogleCalendar; microsoft: MicrosoftCalendar }): EndpointBinding[] {
  const { google, microsoft } = deps;
  const clients: Record<OAuthProvider, ConsentClient> = {
    google: {
      provider: "google",
      name: "Google",
      notConfigured: "Google Calendar is not configured on this server.",
      get configured() {
        return google.configured;
      },
      consentUrl: (state) => google.consentUrl(state),
      exchangeCode: (code) => google.exchangeCode(code),
    },
    microsoft: {
      provider: "microsoft",
      name: "Microsoft",
      notConfigured: "Microsoft calendars are not configured on this server.",
      get configured() {
        return microsoft.configured;
      },
      consentUrl: (state) => microsoft.consentUrl(state),
      exchangeCode: (code) => microsoft.exchangeCode(code),
    },
  };
  return [
    bind(connectionsStartGoogle, async (_request, ctx) => ({ status: 201, body: await startConsent(deps.db, clients.google, requireCaller(ctx).userId, false) })),
    bind(connectionsGoogleCallback, ({ query }) => finishConsent(deps, clients.google, query)),
    bind(connectionsStartMicrosoft, async (_request, ctx) => ({ status: 201, body: await startConsent(deps.db, clients.microsoft, requireCaller(ctx).userId, false) })),
    bind(connectionsMicrosoftCallback, ({ query }) => finishConsent(deps, clients.microsoft, query)),
    bind(invitesStartDashboardConsent, ({ userId, provider }) => startConsent(deps.db, clients[provider], userId, true)),
  ];
}
