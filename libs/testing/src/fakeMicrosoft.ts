import { randomBytes, randomUUID } from "node:crypto";
import { createServer, ServerResponse, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { formatTimestamp } from "@sched/proto";
import { DateTime } from "luxon";
import { PublicFronts } from "./publicFronts.js";
import { originalStarts, ruleOfGraphRecurrence, type GraphRecurrence } from "./graphRecurrenceExpansion.js";

/** One request the fake answered, as the tests inspect it. */
export interface MicrosoftCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | undefined;
  accessToken: string | undefined;
}

type GraphResponse = "none" | "organizer" | "tentativelyAccepted" | "accepted" | "declined" | "notResponded";

interface Attendee {
  emailAddress: { address: string; name?: string };
  type: string;
  status: { response: GraphResponse; time: string };
}

/** An event as the organizer's mailbox keeps it. */
export interface GraphEvent {
  id: string;
  transactionId: string | undefined;
  /** The mailbox (account address) whose calendar holds it. */
  owner: string;
  /** The calendar of the mailbox that holds it: the default one unless put elsewhere by the test. */
  calendarId: string;
  /** How the time shows in free/busy: `busy` unless the test put it otherwise. */
  showAs: "free" | "tentative" | "busy" | "oof" | "workingElsewhere";
  subject: string;
  body: unknown;
  start: { dateTime: string; timeZone: string };
  end: { dateTime: string; timeZone: string };
  attendees: Attendee[];
  organizer: { emailAddress: { address: string } };
  isCancelled: boolean;
  /** Gone from the calendar (cancelled or deleted): Graph answers 404 for it. */
  removed: boolean;
  type: "singleInstance" | "seriesMaster";
  /** A series master's pattern and range, as the client sent them. */
  recurrence: GraphRecurrence | null;
  /** A series' occurrences changed or cancelled on their own, by original start (epoch ms). */
  exceptions: Map<number, GraphException>;
}

/** What became of one occurrence of a series: the fields patched on it, or its cancellation. */
export interface GraphException {
  subject?: string;
  body?: unknown;
  start?: { dateTime: string; timeZone: string };
  end?: { dateTime: string; timeZone: string };
  attendees?: Attendee[];
  isCancelled: boolean;
}

/** One occurrence of a series as Graph shows it (`type` occurrence, or exception once changed on its own). */
export interface GraphInstance {
  id: string;
  type: "occurrence" | "exception";
  seriesMasterId: string;
  /** The start the pattern gives it, in UTC. */
  originalStart: string;
  subject: string;
  body: unknown;
  start: { dateTime: string; timeZone: string };
  end: { dateTime: string; timeZone: string };
  attendees: Attendee[];
  organizer: { emailAddress: { address: string } };
  isCancelled: boolean;
}

const NO_TIME = "0001-01-01T00:00:00Z";

/** A calendar of a mailbox, as `/me/calendars` lists it. */
export interface GraphCalendar {
  id: string;
  name: string;
  isDefaultCalendar: boolean;
}

/** The longest span calendarView answers (Graph's "Maximum number of days: 1825"). */
const CALENDAR_VIEW_MAX_MS = 1_825 * 86_400_000;

const json = (res: ServerResponse, status: number, body?: unknown) => {
  res.writeHead(status, { "content-type": "application/json; odata.metadata=minimal; charset=utf-8" });
  res.end(body === undefined ? "" : JSON.stringify(body));
};

const graphError = (res: ServerResponse, status: number, code: string, message: string) => json(res, status, { error: { code, message, innerError: { date: new Date().toISOString(), "request-id": randomBytes(8).toString("hex") } } });

/** Graph's spelling of an instant in UTC: seven fractional digits, no offset. */
const graphUtc = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$10000");

/** A dateTimeTimeZone the client sent, as a time in its zone: UTC or an IANA zone (Windows names are not kept by this fake). */
function localTimeOf(value: unknown): DateTime | undefined {
  const v = value as { dateTime?: unknown; timeZone?: unknown } | undefined;
  if (typeof v?.dateTime !== "string" || typeof v.timeZone !== "string") return undefined;
  // A dateTime with an offset names its instant itself (Graph reads it so); one without is local time in timeZone.
  const at = /(?:Z|[+-]\d{2}:\d{2})$/.test(v.dateTime) ? DateTime.fromISO(v.dateTime, { setZone: true }).setZone(v.timeZone) : DateTime.fromISO(v.dateTime, { zone: v.timeZone });
  return at.isValid ? at : undefined;
}

/** Reads a dateTimeTimeZone the client sent as epoch ms. */
function instantOf(value: unknown): number | undefined {
  return localTimeOf(value)?.toMillis();
}

const utcOf = (ms: number) => ({ dateTime: graphUtc(ms), timeZone: "UTC" });

/** An instance's id: the master's and the original start, as Graph's ids name both (opaque to the client). */
const instanceId = (masterId: string, originalStart: number) => `${masterId}_${originalStart}`;

/**
 * The Microsoft identity platform's token endpoint and the slice of
 * Microsoft Graph v1.0 that the invites use, on loopback, speaking the real
 * shapes: the v2.0 token endpoint's form posts and `invalid_grant`; events
 * created with a `transactionId` (a second create with the same one answers
 * the event already made), patched, cancelled and deleted; getSchedule
 * answered from the stored events (plus busy time set by the test); and
 * calendarView with paging, refusing spans over 1,825 days as Graph does.
 * A mailbox has a default calendar (what getSchedule and `/me/calendarView`
 * read, where events are created) and the others the test adds, each with
 * its calendar view; `/me/calendars` lists them. A recurring event (`recurrence`: pattern and
 * range) is expanded in its zone (graphRecurrenceExpansion); its instances
 * are listed (`/instances`), patched (becoming exceptions), cancelled, shown
 * in calendarView and counted by getSchedule; writing its pattern again
 * drops its exceptions, as Exchange does. Access tokens expire and are checked, refresh
 * tokens can be revoked, attendees' answers are set by the test as Exchange
 * would write them into the organizer's event. Faults are injected per call.
 */
/** A subscription to a mailbox's events, as Graph keeps it. */
export interface GraphSubscription {
  id: string;
  account: string;
  notificationUrl: string;
  clientState: string | undefined;
  expirationDateTime: string;
}

/** One change notification the fake sent, and how the address answered it. */
export interface GraphNotification {
  subscriptionId: string;
  status: number;
}

export class FakeMicrosoft {
  readonly calls: MicrosoftCall[] = [];
  /** Open subscriptions, by id. */
  readonly subscriptions = new Map<string, GraphSubscription>();
  readonly notifications: GraphNotification[] = [];
  /** The handshakes Graph made with notification addresses: the token sent, and what came back. */
  readonly handshakes: Array<{ token: string; status: number; contentType: string | null; body: string }> = [];
  /** Whether an answer changed in the fake is notified to the subscriptions (off: a test changes it quietly). */
  notifying = true;
  /** Where the https notification addresses are served here (the test's TLS front). */
  readonly fronts = new PublicFronts();
  /** Every event ever created, by id. */
  readonly events = new Map<string, GraphEvent>();
  /** Busy time the fake's mailboxes have besides their events, by account address. */
  readonly busy = new Map<string, Array<{ start: string; end: string }>>();
  /** Delay of every Graph answer, in ms. */
  delayMs = 0;
  private readonly calendars = new Map<string, GraphCalendar[]>();
  private readonly accessTokens = new Map<string, { account: string; expiresAt: number }>();
  private readonly refreshTokens = new Map<string, { account: string; revoked: boolean }>();
  private readonly codes = new Map<string, { account: string; redirectUri?: string }>();
  private faults: Array<{ status: number; only: (call: MicrosoftCall) => boolean }> = [];
  private answersToLose: Array<(call: MicrosoftCall) => boolean> = [];
  private server!: Server;

  constructor(
    readonly clientId = "00000000-0000-4000-8000-00000000c1d0",
    readonly clientSecret = "fake-client-secret",
  ) {}

  /** Starts listening; the root both the authority (`${url}/common`) and Graph (`url`) live under. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** A grant as if the account's user had consented: tokens the fake will honour. */
  grant(account: string, options: { accessExpiresInMs?: number } = {}): { accessToken: string; refreshToken: string; expiresAt: number; accountEmail: string } {
    const expiresAt = Date.now() + (options.accessExpiresInMs ?? 3_600_000);
    const accessToken = this.issueAccess(account.toLowerCase(), expiresAt);
    const refreshToken = this.issueRefresh(account.toLowerCase());
    return { accessToken, refreshToken, expiresAt, accountEmail: account.toLowerCase() };
  }

  /** An authorization code the identity platform would put on the redirect after the account's consent. */
  issueCode(account: string, redirectUri?: string): string {
    const code = `M.C5${randomBytes(16).toString("base64url")}`;
    this.codes.set(code, { account: account.toLowerCase(), ...(redirectUri ? { redirectUri } : {}) });
    return code;
  }

  /** The user took the grant back: its refresh token answers invalid_grant, its access tokens 401. */
  revoke(refreshToken: string): void {
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant) return;
    grant.revoked = true;
    for (const access of this.accessTokens.values()) if (access.account === grant.account) access.expiresAt = 0;
  }

  /** The next Graph calls (those `only` picks: other work may be calling too) answer these statuses, one each. */
  failNext(statuses: number[], only: (call: MicrosoftCall) => boolean = () => true): void {
    this.faults.push(...statuses.map((status) => ({ status, only })));
  }

  /** The next Graph calls are carried out, but the connection drops before their answers: the client cannot tell what happened. */
  loseNextAnswer(only: (call: MicrosoftCall) => boolean = () => true): void {
    this.answersToLose.push(only);
  }

  /** An attendee answers: Exchange writes the answer into the organizer's event. */
  respond(eventId: string, attendee: string, response: "accepted" | "declined" | "tentativelyAccepted", at = new Date()): void {
    const event = this.events.get(eventId);
    const entry = event?.attendees.find((a) => a.emailAddress.address.toLowerCase() === attendee.toLowerCase());
    if (!event || !entry) throw new Error(`${attendee} is not an attendee of event ${eventId}`);
    entry.status = { response, time: formatTimestamp(at) };
    if (this.notifying) void this.notifySubscriptions(event.owner, eventId);
  }

  /**
   * An attendee answers one occurrence of a series on its own: Exchange keeps
   * the answer on that instance (an exception), the series' answer on the others.
   */
  respondToOccurrence(masterId: string, originalStart: string, attendee: string, response: "accepted" | "declined" | "tentativelyAccepted", at = new Date()): void {
    const master = this.events.get(masterId);
    const start = Date.parse(originalStart);
    const instance = master?.type === "seriesMaster" ? this.instanceAt(master, start) : undefined;
    if (!master || !instance) throw new Error(`event ${masterId} has no occurrence starting ${originalStart}`);
    const attendees = instance.attendees.map((a) => ({ ...a, status: { ...a.status } }));
    const entry = attendees.find((a) => a.emailAddress.address.toLowerCase() === attendee.toLowerCase());
    if (!entry) throw new Error(`${attendee} is not an attendee of that occurrence`);
    entry.status = { response, time: formatTimestamp(at) };
    master.exceptions.set(start, { ...(master.exceptions.get(start) ?? { isCancelled: false }), attendees });
    if (this.notifying) void this.notifySubscriptions(master.owner, masterId);
  }

  /**
   * Tells the mailbox's subscriptions that an event changed, as Graph does:
   * a JSON POST of `value: [{subscriptionId, clientState, changeType,
   * resource}]`. Resolves once every address answered.
   */
  async notifySubscriptions(account: string, eventId: string): Promise<void> {
    const mine = [...this.subscriptions.values()].filter((s) => s.account === account && Date.parse(s.expirationDateTime) > Date.now());
    await Promise.all(mine.map((s) => this.notify(s, eventId, s.clientState)));
  }

  /** A notification of the subscription with a clientState not its own, as a forger would send; the status the address answered. */
  async notifyWithClientState(subscriptionId: string, clientState: string): Promise<number> {
    const subscription = this.subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
    return this.notify(subscription, "AAMkAGforged", clientState);
  }

  private async notify(subscription: GraphSubscription, eventId: string, clientState: string | undefined): Promise<number> {
    const change = { subscriptionId: subscription.id, subscriptionExpirationDateTime: subscription.expirationDateTime, changeType: "updated", resource: `Users/${subscription.account}/Events/${eventId}`, resourceData: { "@odata.type": "#Microsoft.Graph.Event", id: eventId }, clientState, tenantId: "00000000-0000-4000-8000-000000007e4a" };
    let status: number;
    try {
      status = (await fetch(this.fronts.resolve(subscription.notificationUrl), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ value: [change] }) })).status;
    } catch {
      status = 0;
    }
    this.notifications.push({ subscriptionId: subscription.id, status });
    return status;
  }

  /**
   * Graph's check of a notification address before it opens a subscription:
   * a POST with `validationToken` in the query, to be answered within 10 s
   * with 200 and the token alone, as text/plain.
   */
  private async handshake(notificationUrl: string): Promise<boolean> {
    const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
    const target = new URL(this.fronts.resolve(notificationUrl));
    target.searchParams.set("validationToken", token);
    try {
      const res = await fetch(target, { method: "POST", headers: { "content-type": "text/plain; charset=utf-8" }, signal: AbortSignal.timeout(10_000) });
      const body = await res.text();
      const contentType = res.headers.get("content-type");
      this.handshakes.push({ token, status: res.status, contentType, body });
      return res.status === 200 && (contentType ?? "").startsWith("text/plain") && body === token;
    } catch {
      this.handshakes.push({ token, status: 0, contentType: null, body: "" });
      return false;
    }
  }

  /** POST /subscriptions: to the mailbox's events, after the handshake with the https address given. */
  private async subscribe(call: MicrosoftCall, account: string, res: ServerResponse): Promise<void> {
    const body = call.body ?? {};
    const notificationUrl = String(body.notificationUrl ?? "");
    if (!notificationUrl.startsWith("https://")) return graphError(res, 400, "InvalidRequest", "The Uri scheme is not valid; it must be https.");
    if (body.changeType !== "updated" || (body.resource !== "/me/events" && body.resource !== "me/events")) return graphError(res, 400, "InvalidRequest", "This fake takes changes (updated) to /me/events only.");
    if (!(await this.handshake(notificationUrl))) return graphError(res, 400, "ValidationError", "Subscription validation request failed. Response must exactly match validationToken query parameter.");
    const subscription: GraphSubscription = { id: randomUUID(), account, notificationUrl, clientState: body.clientState === undefined ? undefined : String(body.clientState), expirationDateTime: String(body.expirationDateTime) };
    this.subscriptions.set(subscription.id, subscription);
    json(res, 201, { "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#subscriptions/$entity", id: subscription.id, resource: body.resource, changeType: body.changeType, notificationUrl, clientState: subscription.clientState, expirationDateTime: subscription.expirationDateTime });
  }

  /** PATCH (a new expirationDateTime) and DELETE of one of the account's subscriptions. */
  private subscription(method: string, id: string, call: MicrosoftCall, account: string, res: ServerResponse): void {
    const subscription = this.subscriptions.get(id);
    if (!subscription || subscription.account !== account) return graphError(res, 404, "ResourceNotFound", "The object was not found.");
    if (method === "DELETE") {
      this.subscriptions.delete(id);
      res.writeHead(204).end();
      return;
    }
    if (method !== "PATCH") return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
    subscription.expirationDateTime = String(call.body?.expirationDateTime ?? subscription.expirationDateTime);
    json(res, 200, { id, expirationDateTime: subscription.expirationDateTime, notificationUrl: subscription.notificationUrl });
  }

  /** A mailbox's calendars, the default one first (made on first use). */
  calendarsOf(account: string): GraphCalendar[] {
    const key = account.toLowerCase();
    if (!this.calendars.has(key)) this.calendars.set(key, [{ id: `AAMkAGcal${randomBytes(18).toString("base64url")}=`, name: "Calendar", isDefaultCalendar: true }]);
    return this.calendars.get(key)!;
  }

  private defaultCalendarId(account: string): string {
    return this.calendarsOf(account)[0]!.id;
  }

  /** Another calendar in the mailbox, as its user would add one in Outlook; its id. */
  addCalendar(account: string, name: string): string {
    const id = `AAMkAGcal${randomBytes(18).toString("base64url")}=`;
    this.calendarsOf(account).push({ id, name, isDefaultCalendar: false });
    return id;
  }

  /** An event the mailbox's user made themselves in one of its calendars (no attendees); its id. */
  addEvent(account: string, calendarId: string, event: { subject: string; start: string; end: string; showAs?: GraphEvent["showAs"] }): string {
    const owner = account.toLowerCase();
    if (!this.calendarsOf(owner).some((c) => c.id === calendarId)) throw new Error(`${calendarId} is no calendar of ${owner}`);
    const id = `AAMkAG${randomBytes(24).toString("base64url")}=`;
    this.events.set(id, {
      ...{ id, transactionId: undefined, owner, calendarId, showAs: event.showAs ?? "busy", subject: event.subject, body: undefined },
      ...{ start: utcOf(Date.parse(event.start)), end: utcOf(Date.parse(event.end)), attendees: [], organizer: { emailAddress: { address: owner } } },
      ...{ isCancelled: false, removed: false, type: "singleInstance" as const, recurrence: null, exceptions: new Map() },
    });
    return id;
  }

  /** The live (not removed) event created with this transactionId. */
  eventOfTransaction(transactionId: string): GraphEvent | undefined {
    return [...this.events.values()].find((e) => e.transactionId === transactionId && !e.removed);
  }

  graphCalls(): MicrosoftCall[] {
    return this.calls.filter((c) => c.path.startsWith("/v1.0/"));
  }

  tokenCalls(): MicrosoftCall[] {
    return this.calls.filter((c) => c.path.endsWith("/oauth2/v2.0/token"));
  }

  private issueAccess(account: string, expiresAt = Date.now() + 3_600_000): string {
    const token = `EwB${randomBytes(18).toString("base64url")}`;
    this.accessTokens.set(token, { account, expiresAt });
    return token;
  }

  private issueRefresh(account: string): string {
    const token = `M.R3_${randomBytes(18).toString("base64url")}`;
    this.refreshTokens.set(token, { account, revoked: false });
    return token;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const raw = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c: Buffer) => (data += c.toString("utf8")));
      req.on("end", () => resolve(data));
    });
    const form = req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded");
    let body: Record<string, unknown> | undefined;
    try {
      body = raw ? (form ? Object.fromEntries(new URLSearchParams(raw)) : (JSON.parse(raw) as Record<string, unknown>)) : undefined;
    } catch {
      return graphError(res, 400, "BadRequest", "Unable to read JSON request payload.");
    }
    const accessToken = req.headers.authorization?.replace(/^Bearer /, "");
    const call: MicrosoftCall = { method: req.method ?? "GET", path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body, accessToken };
    this.calls.push(call);
    if (/^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname) && req.method === "POST") return this.token(res, (body ?? {}) as Record<string, string>);
    if (!url.pathname.startsWith("/v1.0/")) return graphError(res, 404, "NotFound", "Resource not found.");
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (res.destroyed) return;
    const faultAt = this.faults.findIndex((f) => f.only(call));
    const fault = faultAt >= 0 ? this.faults.splice(faultAt, 1)[0]!.status : undefined;
    if (fault !== undefined) return graphError(res, fault, fault === 429 ? "ApplicationThrottled" : "ServiceNotAvailable", fault === 429 ? "Application is over its MailboxConcurrency limit." : "The service is temporarily unavailable.");
    const access = accessToken ? this.accessTokens.get(accessToken) : undefined;
    if (!access || access.expiresAt <= Date.now()) return graphError(res, 401, "InvalidAuthenticationToken", "Lifetime validation failed, the token is expired.");
    const losing = this.answersToLose.findIndex((only) => only(call));
    if (losing >= 0) {
      this.answersToLose.splice(losing, 1);
      this.graph(req.method ?? "GET", url, call, access.account, new ServerResponse(req));
      res.socket?.destroy();
      return;
    }
    return this.graph(req.method ?? "GET", url, call, access.account, res);
  }

  private token(res: ServerResponse, form: Record<string, string>): void {
    if (form.client_id !== this.clientId || form.client_secret !== this.clientSecret) {
      return json(res, 401, { error: "invalid_client", error_description: "AADSTS7000215: Invalid client secret provided." });
    }
    const scope = "openid email offline_access https://graph.microsoft.com/Calendars.ReadWrite";
    if (form.grant_type === "authorization_code") {
      const code = this.codes.get(form.code ?? "");
      if (!code) return json(res, 400, { error: "invalid_grant", error_description: "AADSTS70000: The provided value for the 'code' parameter is not valid." });
      if (code.redirectUri && code.redirectUri !== form.redirect_uri) return json(res, 400, { error: "invalid_grant", error_description: "AADSTS50148: The redirect_uri does not match." });
      this.codes.delete(form.code!);
      const claims = Buffer.from(JSON.stringify({ iss: "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0", email: code.account, preferred_username: code.account })).toString("base64url");
      return json(res, 200, { token_type: "Bearer", scope, expires_in: 3599, ext_expires_in: 3599, access_token: this.issueAccess(code.account), refresh_token: this.issueRefresh(code.account), id_token: `eyJhbGciOiJub25lIn0.${claims}.` });
    }
    if (form.grant_type === "refresh_token") {
      const grant = this.refreshTokens.get(form.refresh_token ?? "");
      if (!grant || grant.revoked) return json(res, 400, { error: "invalid_grant", error_description: "AADSTS70008: The provided authorization code or refresh token has expired due to inactivity." });
      // The identity platform rotates refresh tokens; the old one stays usable until it expires.
      return json(res, 200, { token_type: "Bearer", scope, expires_in: 3599, ext_expires_in: 3599, access_token: this.issueAccess(grant.account), refresh_token: this.issueRefresh(grant.account) });
    }
    return json(res, 400, { error: "unsupported_grant_type", error_description: "AADSTS70003: The app requested an unsupported grant type." });
  }

  private view(e: GraphEvent): Record<string, unknown> {
    const { owner: _owner, removed: _removed, exceptions: _exceptions, calendarId: _calendarId, ...rest } = e;
    return rest;
  }

  /** A calendar's live events over a window as it shows them (the mailbox's default calendar unless named): single events, and each series' occurrences. */
  private shown(account: string, from: number, to: number, calendarId = this.defaultCalendarId(account)): Array<{ start: GraphEvent["start"]; end: GraphEvent["end"]; showAs: GraphEvent["showAs"]; view: Record<string, unknown> }> {
    const shown = [];
    for (const e of this.events.values()) {
      if (e.owner !== account || e.removed || e.calendarId !== calendarId) continue;
      if (e.type === "seriesMaster") for (const i of this.instancesOf(e, from, to)) shown.push({ start: i.start, end: i.end, showAs: e.showAs, view: { ...i, showAs: e.showAs } });
      else if (instantOf(e.start)! < to && instantOf(e.end)! > from) shown.push({ start: e.start, end: e.end, showAs: e.showAs, view: this.view(e) });
    }
    return shown.sort((a, b) => instantOf(a.start)! - instantOf(b.start)!);
  }

  private graph(method: string, url: URL, call: MicrosoftCall, account: string, res: ServerResponse): void {
    const path = url.pathname.slice("/v1.0".length);
    if (method === "POST" && path === "/subscriptions") {
      void this.subscribe(call, account, res);
      return;
    }
    const subscriptionOf = /^\/subscriptions\/([^/]+)$/.exec(path);
    if (subscriptionOf) return this.subscription(method, decodeURIComponent(subscriptionOf[1]!), call, account, res);
    if (method === "POST" && path === "/me/calendar/getSchedule") return this.getSchedule(call, account, res);
    if (method === "GET" && path === "/me/calendarView") return this.calendarView(url, call, account, this.defaultCalendarId(account), res);
    if (method === "GET" && path === "/me/calendars") return this.page(url, call, this.calendarsOf(account), res);
    const ofCalendar = /^\/me\/calendars\/([^/]+)\/calendarView$/.exec(path);
    if (method === "GET" && ofCalendar) {
      const calendarId = decodeURIComponent(ofCalendar[1]!);
      if (!this.calendarsOf(account).some((c) => c.id === calendarId)) return graphError(res, 404, "ErrorItemNotFound", "The specified object was not found in the store.");
      return this.calendarView(url, call, account, calendarId, res);
    }
    if (method === "POST" && (path === "/me/events" || path === "/me/calendar/events")) return this.create(call, account, res);
    const match = /^\/me\/events\/([^/]+)(\/cancel|\/instances)?$/.exec(path);
    if (!match) return graphError(res, 400, "BadRequest", `Resource not found for the segment '${path}'.`);
    const id = decodeURIComponent(match[1]!);
    const event = this.events.get(id);
    if (!event) return this.instanceCall(method, id, match[2], call, account, res);
    if (event.owner !== account || event.removed) return graphError(res, 404, "ErrorItemNotFound", "The specified object was not found in the store.");
    if (match[2] === "/instances") {
      if (method !== "GET") return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
      const from = Date.parse(url.searchParams.get("startDateTime") ?? "");
      const to = Date.parse(url.searchParams.get("endDateTime") ?? "");
      if (Number.isNaN(from) || Number.isNaN(to)) return graphError(res, 400, "ErrorInvalidParameter", "startDateTime and endDateTime are required.");
      if (event.type !== "seriesMaster") return json(res, 200, { value: [] });
      return this.page(url, call, this.instancesOf(event, from, to), res);
    }
    if (match[2]) {
      if (method !== "POST") return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
      event.isCancelled = true;
      event.removed = true;
      res.writeHead(202).end();
      return;
    }
    if (method === "PATCH") {
      const patch = call.body ?? {};
      if ("transactionId" in patch) return graphError(res, 400, "ErrorInvalidRequest", "transactionId cannot be changed.");
      if (patch.start !== undefined && instantOf(patch.start) === undefined) return graphError(res, 400, "ErrorInvalidRequest", "Invalid start.");
      if (patch.end !== undefined && instantOf(patch.end) === undefined) return graphError(res, 400, "ErrorInvalidRequest", "Invalid end.");
      if (patch.recurrence !== undefined && patch.recurrence !== null && !ruleOfGraphRecurrence(patch.recurrence as GraphRecurrence)) return graphError(res, 400, "ErrorInvalidRequest", "Invalid recurrence.");
      // Exchange drops a series' exceptions, changed and cancelled, when its pattern is rewritten (MS-OXOCAL
      // 3.1.4.7.3.5) or its times change. Whether a pattern written again unchanged counts is not documented:
      // the fake takes the worse case, so a client must restore what it changed on its own.
      const reshaped =
        (patch.recurrence !== undefined && event.type === "seriesMaster") ||
        (patch.start !== undefined && instantOf(patch.start) !== instantOf(event.start)) ||
        (patch.end !== undefined && instantOf(patch.end) !== instantOf(event.end));
      if (reshaped) event.exceptions.clear();
      if (typeof patch.subject === "string") event.subject = patch.subject;
      if (patch.body !== undefined) event.body = patch.body;
      if (patch.start) event.start = patch.start as GraphEvent["start"];
      if (patch.end) event.end = patch.end as GraphEvent["end"];
      if (patch.recurrence !== undefined) {
        event.recurrence = (patch.recurrence as GraphRecurrence | null) ?? null;
        event.type = event.recurrence ? "seriesMaster" : "singleInstance";
      }
      if (Array.isArray(patch.attendees)) event.attendees = this.attendeesOf(patch.attendees, event.attendees);
      return json(res, 200, this.view(event));
    }
    if (method === "DELETE") {
      event.removed = true;
      res.writeHead(204).end();
      return;
    }
    if (method === "GET") return json(res, 200, this.view(event));
    return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
  }

  /** A call on one occurrence of a series, by its instance id: read, patched (it becomes an exception), cancelled or deleted. */
  private instanceCall(method: string, id: string, action: string | undefined, call: MicrosoftCall, account: string, res: ServerResponse): void {
    const at = id.lastIndexOf("_");
    const master = at > 0 ? this.events.get(id.slice(0, at)) : undefined;
    const originalStart = Number(id.slice(at + 1));
    const instance = master && master.owner === account && !master.removed && master.type === "seriesMaster" ? this.instanceAt(master, originalStart) : undefined;
    if (!master || !instance || instance.isCancelled || action === "/instances") return graphError(res, 404, "ErrorItemNotFound", "The specified object was not found in the store.");
    const exception = master.exceptions.get(originalStart) ?? { isCancelled: false };
    if (action === "/cancel" || method === "DELETE") {
      if (action === "/cancel" && method !== "POST") return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
      master.exceptions.set(originalStart, { ...exception, isCancelled: true });
      res.writeHead(action ? 202 : 204).end();
      return;
    }
    if (method === "GET") return json(res, 200, instance);
    if (method !== "PATCH") return graphError(res, 405, "ErrorInvalidRequest", "The OData request is not supported.");
    const patch = call.body ?? {};
    if ("recurrence" in patch || "transactionId" in patch) return graphError(res, 400, "ErrorInvalidRequest", "An occurrence has no recurrence or transactionId of its own.");
    if (patch.start !== undefined && instantOf(patch.start) === undefined) return graphError(res, 400, "ErrorInvalidRequest", "Invalid start.");
    if (patch.end !== undefined && instantOf(patch.end) === undefined) return graphError(res, 400, "ErrorInvalidRequest", "Invalid end.");
    if (typeof patch.subject === "string") exception.subject = patch.subject;
    if (patch.body !== undefined) exception.body = patch.body;
    if (patch.start) exception.start = patch.start as GraphEvent["start"];
    if (patch.end) exception.end = patch.end as GraphEvent["end"];
    if (Array.isArray(patch.attendees)) exception.attendees = this.attendeesOf(patch.attendees, instance.attendees);
    master.exceptions.set(originalStart, exception);
    return json(res, 200, this.instanceAt(master, originalStart));
  }

  /** The occurrence of a series the pattern gives at this original start (with what became of it), or undefined. */
  private instanceAt(master: GraphEvent, originalStart: number): GraphInstance | undefined {
    if (!Number.isFinite(originalStart)) return undefined;
    const starts = originalStarts(master.recurrence!, localTimeOf(master.start)!, originalStart + 1);
    return starts.at(-1) === originalStart ? this.instance(master, originalStart) : undefined;
  }

  private instance(master: GraphEvent, originalStart: number): GraphInstance {
    const exception = master.exceptions.get(originalStart);
    const duration = instantOf(master.end)! - instantOf(master.start)!;
    return {
      id: instanceId(master.id, originalStart),
      type: exception ? "exception" : "occurrence",
      seriesMasterId: master.id,
      originalStart: formatTimestamp(originalStart),
      subject: exception?.subject ?? master.subject,
      body: exception?.body ?? master.body,
      start: utcOf(exception?.start ? instantOf(exception.start)! : originalStart),
      end: utcOf(exception?.end ? instantOf(exception.end)! : originalStart + duration),
      attendees: exception?.attendees ?? master.attendees,
      organizer: master.organizer,
      isCancelled: exception?.isCancelled ?? false,
    };
  }

  /**
   * A series' occurrences whose times (as they are now) overlap [from, to),
   * in start order; cancelled ones only when asked for, as Graph lists none.
   * Occurrences moved from up to a year away are found too.
   */
  instancesOf(master: GraphEvent, from: number, to: number, options: { withCancelled?: boolean } = {}): GraphInstance[] {
    if (master.type !== "seriesMaster" || !master.recurrence) return [];
    const YEAR_MS = 366 * 86_400_000;
    return originalStarts(master.recurrence, localTimeOf(master.start)!, to + YEAR_MS)
      .filter((s) => s >= from - YEAR_MS)
      .map((s) => this.instance(master, s))
      .filter((i) => (options.withCancelled || !i.isCancelled) && instantOf(i.start)! < to && instantOf(i.end)! > from)
      .sort((a, b) => instantOf(a.start)! - instantOf(b.start)!);
  }

  /** Attendees as given, each keeping the answer it had (an attendee kept on is not asked again). */
  private attendeesOf(given: unknown[], before: Attendee[] = []): Attendee[] {
    return given.map((a) => {
      const address = String((a as { emailAddress?: { address?: unknown } }).emailAddress?.address ?? "").toLowerCase();
      const kept = before.find((b) => b.emailAddress.address.toLowerCase() === address);
      return { emailAddress: { address }, type: String((a as { type?: unknown }).type ?? "required"), status: kept?.status ?? { response: "none", time: NO_TIME } };
    });
  }

  private create(call: MicrosoftCall, account: string, res: ServerResponse): void {
    const body = call.body ?? {};
    const transactionId = typeof body.transactionId === "string" ? body.transactionId : undefined;
    const existing = transactionId ? [...this.events.values()].find((e) => e.owner === account && e.transactionId === transactionId && !e.removed) : undefined;
    // A retried create (same transactionId) answers the event the first one made rather than making another.
    if (existing) return json(res, 201, this.view(existing));
    if (typeof body.subject !== "string" || instantOf(body.start) === undefined || instantOf(body.end) === undefined) {
      return graphError(res, 400, "ErrorInvalidRequest", "An event needs a subject, and start and end (UTC or an IANA zone).");
    }
    const recurrence = (body.recurrence ?? null) as GraphRecurrence | null;
    if (recurrence && !ruleOfGraphRecurrence(recurrence)) return graphError(res, 400, "ErrorInvalidRequest", "Invalid recurrence.");
    const id = `AAMkAG${randomBytes(24).toString("base64url")}=`;
    const event: GraphEvent = {
      id,
      transactionId,
      owner: account,
      calendarId: this.defaultCalendarId(account),
      showAs: "busy",
      subject: body.subject,
      body: body.body,
      start: body.start as GraphEvent["start"],
      end: body.end as GraphEvent["end"],
      attendees: this.attendeesOf(Array.isArray(body.attendees) ? body.attendees : []),
      organizer: { emailAddress: { address: account } },
      isCancelled: false,
      removed: false,
      type: recurrence ? "seriesMaster" : "singleInstance",
      recurrence,
      exceptions: new Map(),
    };
    this.events.set(id, event);
    return json(res, 201, this.view(event));
  }

  /** Free/busy of a mailbox over a window: the live events of its default calendar and the busy time set for it. */
  private busySpans(account: string, from: number, to: number): Array<[number, number, GraphEvent["showAs"]]> {
    const spans: Array<[number, number, GraphEvent["showAs"]]> = [];
    for (const e of this.shown(account, from, to)) spans.push([instantOf(e.start)!, instantOf(e.end)!, e.showAs]);
    for (const b of this.busy.get(account) ?? []) {
      const start = Date.parse(b.start);
      const end = Date.parse(b.end);
      if (start < to && end > from) spans.push([start, end, "busy"]);
    }
    return spans.sort((a, b) => a[0] - b[0]);
  }

  private getSchedule(call: MicrosoftCall, account: string, res: ServerResponse): void {
    const body = call.body ?? {};
    const from = instantOf(body.startTime);
    const to = instantOf(body.endTime);
    const schedules = Array.isArray(body.schedules) ? body.schedules.map((s) => String(s).toLowerCase()) : [];
    if (from === undefined || to === undefined || schedules.length === 0) return graphError(res, 400, "ErrorInvalidRequest", "schedules, startTime and endTime are required.");
    if (!String(call.headers.prefer ?? "").includes('outlook.timezone="UTC"')) return graphError(res, 400, "ErrorInvalidRequest", "This fake answers in UTC only (Prefer: outlook.timezone=\"UTC\").");
    const value = schedules.map((scheduleId) => {
      // A mailbox answers for itself only: others' schedules would need their sharing, which this fake does not keep.
      if (scheduleId !== account) return { scheduleId, error: { message: "The specified object was not found in the store.", responseCode: "ErrorMailRecipientNotFound" } };
      return {
        scheduleId,
        availabilityView: "",
        scheduleItems: this.busySpans(account, from, to).map(([s, e, status]) => ({ isPrivate: false, status, start: { dateTime: graphUtc(s), timeZone: "UTC" }, end: { dateTime: graphUtc(e), timeZone: "UTC" } })),
        workingHours: { startTime: "08:00:00.0000000", endTime: "17:00:00.0000000", timeZone: { name: "UTC" } },
      };
    });
    return json(res, 200, { value });
  }

  /** A calendar's events overlapping the window, in start order, a page at a time (Prefer: odata.maxpagesize, else $top, else 10). */
  private calendarView(url: URL, call: MicrosoftCall, account: string, calendarId: string, res: ServerResponse): void {
    const from = Date.parse(url.searchParams.get("startDateTime") ?? "");
    const to = Date.parse(url.searchParams.get("endDateTime") ?? "");
    if (Number.isNaN(from) || Number.isNaN(to)) return graphError(res, 400, "ErrorInvalidParameter", "startDateTime and endDateTime are required.");
    if (to - from > CALENDAR_VIEW_MAX_MS) return graphError(res, 400, "ErrorInvalidRequest", "Your request can't be completed. The range between the start and end dates is greater than the allowed range. Maximum number of days: 1825");
    return this.page(url, call, this.shown(account, from, to, calendarId).map((e) => e.view), res);
  }

  /** One page of a listing (Prefer: odata.maxpagesize, else $top, else 10), with the link to the next. */
  private page(url: URL, call: MicrosoftCall, all: unknown[], res: ServerResponse): void {
    const pageSize = Number(/odata\.maxpagesize=(\d+)/.exec(String(call.headers.prefer ?? ""))?.[1] ?? url.searchParams.get("$top") ?? 10);
    const skip = Number(url.searchParams.get("$skip") ?? 0);
    const page = all.slice(skip, skip + pageSize);
    const next = skip + pageSize < all.length ? new URL(url) : undefined;
    next?.searchParams.set("$skip", String(skip + pageSize));
    next?.searchParams.set("$top", String(pageSize));
    return json(res, 200, { value: page, ...(next ? { "@odata.nextLink": `${this.url}${next.pathname}${next.search}` } : {}) });
  }
}
