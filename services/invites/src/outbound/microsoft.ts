import { Client, GraphError, HTTPMessageHandler, type Context, type Middleware } from "@microsoft/microsoft-graph-client";
import { DeliveryFailure, failureKindOfStatus } from "../domain/retry.js";
import type { ProviderTokens } from "../domain/tokenCipher.js";

export interface MicrosoftSettings {
  clientId?: string;
  clientSecret?: string;
  redirectUrl: string;
  /** The identity platform's authority (`https://login.microsoftonline.com/common`); tests point it at a loopback server. */
  authority: string;
  /** Graph's root (`https://graph.microsoft.com`); tests point it at a loopback server. */
  graphUrl: string;
  timeoutMs: number;
}

/**
 * What the invites need: events in the user's calendars (create, change,
 * cancel, read answers, free/busy), a refresh token to keep doing so, and
 * who the account is.
 */
const MICROSOFT_SCOPES = ["openid", "email", "offline_access", "Calendars.ReadWrite"];

/** A user's grant in use: Graph on their tokens, refreshed as they expire. */
export interface MicrosoftSession {
  graph: Client;
  /** A call's error as the worker acts on it: a refused refresh (revoked grant) is told apart from Graph's own answers. */
  failureOf(err: unknown): DeliveryFailure;
}

/** Refresh a little before the stated expiry, so a token does not lapse on its way to Graph. */
const EXPIRY_MARGIN_MS = 60_000;

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  id_token?: string;
  error?: string;
  error_description?: string;
}

/**
 * Microsoft 365 / Outlook.com calendars through Microsoft Graph
 * (`@microsoft/microsoft-graph-client`), with the OAuth 2.0 authorization
 * code grant of the Microsoft identity platform spoken directly (RFC 6749):
 * MSAL refuses any authority that is not https (so no loopback fake can
 * stand in for it) and keeps refresh tokens in its own cache, where this
 * service seals each connection's tokens itself. Retries are the worker's:
 * the client runs without its retry handler, so every attempt is counted.
 */
export class MicrosoftCalendar {
  constructor(private readonly settings: MicrosoftSettings) {}

  get configured(): boolean {
    return Boolean(this.settings.clientId && this.settings.clientSecret);
  }

  private endpoint(name: "authorize" | "token"): string {
    return `${this.settings.authority.replace(/\/+$/, "")}/oauth2/v2.0/${name}`;
  }

  consentUrl(state: string): string {
    const url = new URL(this.endpoint("authorize"));
    url.search = new URLSearchParams({
      client_id: this.settings.clientId ?? "",
      response_type: "code",
      redirect_uri: this.settings.redirectUrl,
      response_mode: "query",
      scope: MICROSOFT_SCOPES.join(" "),
      prompt: "select_account",
      state,
    }).toString();
    return url.toString();
  }

  /** Trades the consent's code for tokens; the account's address comes from the ID token. */
  async exchangeCode(code: string): Promise<{ tokens: ProviderTokens; accountEmail: string | null }> {
    const answer = await this.tokenRequest({ grant_type: "authorization_code", code, redirect_uri: this.settings.redirectUrl });
    if (!answer.refresh_token) throw new DeliveryFailure("permanent", "Microsoft granted no offline access (no refresh token).");
    return { tokens: tokensOf(answer, answer.refresh_token), accountEmail: emailOfIdToken(answer.id_token) };
  }

  /** New tokens for an expired access token; `revoked` when the user took the grant back. */
  async refresh(tokens: ProviderTokens): Promise<ProviderTokens> {
    const answer = await this.tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refreshToken });
    // The identity platform usually rotates the refresh token; the old one stays good when it does not.
    return tokensOf(answer, answer.refresh_token ?? tokens.refreshToken);
  }

  private async tokenRequest(grant: Record<string, string>): Promise<TokenAnswer & { access_token: string }> {
    const form = new URLSearchParams({ client_id: this.settings.clientId ?? "", client_secret: this.settings.clientSecret ?? "", scope: MICROSOFT_SCOPES.join(" "), ...grant });
    let res: Response;
    try {
      res = await fetch(this.endpoint("token"), { method: "POST", body: form, signal: AbortSignal.timeout(this.settings.timeoutMs) });
    } catch (err) {
      throw new DeliveryFailure("transient", `Microsoft token endpoint: no answer (${err instanceof Error ? err.message : String(err)})`);
    }
    const answer = (await res.json().catch(() => ({}))) as TokenAnswer;
    if (res.ok && answer.access_token) return answer as TokenAnswer & { access_token: string };
    const message = `Microsoft token endpoint: ${res.status} ${answer.error ?? ""}`.trim();
    // invalid_grant: the user revoked access, the grant expired, or the password changed.
    if (answer.error === "invalid_grant") throw new DeliveryFailure("revoked", message);
    throw new DeliveryFailure(res.status >= 500 || res.status === 429 ? "transient" : "permanent", message);
  }

  /**
   * Graph on the user's tokens. An access token past its expiry (or
   * refused with 401) is refreshed once before the call goes on;
   * `onRefresh` receives the new tokens so they are stored before the next use.
   */
  session(tokens: ProviderTokens, onRefresh: (tokens: ProviderTokens) => void): MicrosoftSession {
    const bearer = new BearerTokens(tokens, this, onRefresh, this.settings.timeoutMs);
    const handler = new HTTPMessageHandler();
    bearer.setNext(handler);
    return {
      graph: Client.initWithMiddleware({ middleware: bearer, baseUrl: this.settings.graphUrl.replace(/\/+$/, "") + "/", defaultVersion: "v1.0" }),
      // The client wraps whatever the middleware throws in its own error: the refresh's verdict is kept aside.
      failureOf: (err) => bearer.refreshFailure ?? microsoftFailure(err),
    };
  }
}

/**
 * The first link of the client's middleware chain: puts the user's access
 * token on each request (the client's own authentication handler adds
 * tokens only for https hosts), bounds each request by the provider
 * timeout, and refreshes the token when it has expired or Graph says 401.
 */
class BearerTokens implements Middleware {
  private next?: Middleware;
  /** Why the last refresh was refused, for the session to report instead of the client's wrapping of it. */
  refreshFailure: DeliveryFailure | undefined;

  constructor(
    private tokens: ProviderTokens,
    private readonly microsoft: MicrosoftCalendar,
    private readonly onRefresh: (tokens: ProviderTokens) => void,
    private readonly timeoutMs: number,
  ) {}

  setNext(next: Middleware): void {
    this.next = next;
  }

  private async refresh(): Promise<void> {
    try {
      this.tokens = await this.microsoft.refresh(this.tokens);
    } catch (err) {
      this.refreshFailure = err instanceof DeliveryFailure ? err : new DeliveryFailure("transient", String(err));
      throw err;
    }
    this.refreshFailure = undefined;
    this.onRefresh(this.tokens);
  }

  private send(context: Context, signal: AbortSignal | undefined): Promise<void> {
    const headers = new Headers(context.options?.headers as ConstructorParameters<typeof Headers>[0]);
    headers.set("Authorization", `Bearer ${this.tokens.accessToken}`);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    context.options = { ...context.options, headers: Object.fromEntries(headers), signal: signal ? AbortSignal.any([signal, timeout]) : timeout };
    return this.next!.execute(context);
  }

  async execute(context: Context): Promise<void> {
    const signal = context.options?.signal ?? undefined;
    if (this.tokens.expiresAt !== undefined && this.tokens.expiresAt - EXPIRY_MARGIN_MS <= Date.now()) await this.refresh();
    await this.send(context, signal);
    if (context.response?.status !== 401) return;
    await this.refresh();
    await this.send(context, signal);
  }
}

function tokensOf(answer: TokenAnswer & { access_token: string }, refreshToken: string): ProviderTokens {
  return { accessToken: answer.access_token, refreshToken, ...(answer.expires_in ? { expiresAt: Date.now() + answer.expires_in * 1_000 } : {}) };
}

/** A Graph client error as the worker acts on it. */
function microsoftFailure(err: unknown): DeliveryFailure {
  if (err instanceof DeliveryFailure) return err;
  if (err instanceof GraphError) {
    // The client reports a request it never got an answer to (a timeout, a refused connection) as status -1.
    const status = err.statusCode > 0 ? err.statusCode : undefined;
    return new DeliveryFailure(failureKindOfStatus(status), `Microsoft Graph: ${status ?? "no answer"} ${err.code ?? ""} ${err.message}`.replace(/\s+/g, " ").trim());
  }
  return new DeliveryFailure("transient", `Microsoft Graph: no answer ${err instanceof Error ? err.message : String(err)}`.trim());
}

export function graphStatusOf(err: unknown): number | undefined {
  return err instanceof GraphError && err.statusCode > 0 ? err.statusCode : undefined;
}

/** The account's address: Microsoft puts `email` in the ID token when asked for it, else the sign-in name. */
function emailOfIdToken(idToken: string | undefined): string | null {
  const payload = idToken?.split(".")[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { email?: unknown; preferred_username?: unknown };
    const email = typeof claims.email === "string" ? claims.email : typeof claims.preferred_username === "string" && claims.preferred_username.includes("@") ? claims.preferred_username : null;
    return email?.toLowerCase() ?? null;
  } catch {
    return null;
  }
}
