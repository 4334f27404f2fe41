import ICAL from "ical.js";
import { DateTime } from "luxon";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PublicFronts } from "@sched/testing";

/** One request the fake answered, as the tests inspect it. */
export interface GoogleCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
  accessToken: string | undefined;
}

/** A watch channel opened on a calendar, as Google keeps it. */
export interface GoogleChannel {
  id: string;
  token: string | undefined;
  address: string;
  resourceId: string;
  expiration: number;
}

/** One notification the fake sent, and how the address answered it. */
export interface GoogleNotification {
  channelId: string;
  state: "sync" | "exists";
  status: number;
}

interface StoredEvent {
  id: string;
  body: Record<string, unknown>;
  deleted: boolean;
}

const json = (res: ServerResponse, status: number, body?: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
  res.end(body === undefined ? "" : JSON.stringify(body));
};

/**
 * Google's OAuth 2.0 token endpoint and the slice of Calendar v3 that the
 * invites use, on loopback, speaking the real endpoints' shapes: the token
 * endpoint's form posts and `invalid_grant`, events insert/patch/delete with
 * `sendUpdates`, freeBusy of each calendar named (`notFound` for one not
 * in the calendar list), the calendar list a page at a time. Access tokens expire and are checked; faults are
 * injected per call. A recurring event (`recurrence` lines) has instances as
 * Google has them: its RRULE expanded at the start's wall clock in the
 * start's `timeZone`, less its EXDATEs, each with the id
 * `<event id>_<original start in UTC, basic form>`, listed by
 * `events/{id}/instances` (filtered by `originalStart`), and patched or
 * deleted by that id, which makes the instance an exception of its own.
 */
export class GoogleFake {
  readonly calls: GoogleCall[] = [];
  readonly events = new Map<string, StoredEvent>();
  /** Busy intervals freeBusy answers, for every calendar without its own in `calendarBusy`. */
  busy: Array<{ start: string; end: string }> = [];
  /** Busy intervals of one calendar, by its id (`primary` for the primary one). */
  readonly calendarBusy = new Map<string, Array<{ start: string; end: string }>>();
  /** The user's calendar list: the primary calendar (under its address, as Google lists it) and the others the test adds. */
  readonly calendarList: Array<{ id: string; summary: string; primary?: boolean; accessRole: string }> = [{ id: "owner@example.com", summary: "owner@example.com", primary: true, accessRole: "owner" }];
  /** Delay of every calendar answer, in ms. */
  delayMs = 0;
  private readonly accessTokens = new Map<string, number>();
  private readonly refreshTokens = new Map<string, { revoked: boolean }>();
  private readonly codes = new Map<string, { email: string }>();
  /** Open watch channels, by id. */
  readonly channels = new Map<string, GoogleChannel>();
  readonly notifications: GoogleNotification[] = [];
  /** Whether an answer changed in the fake is notified to the channels (off: a test changes it quietly). */
  notifying = true;
  /** Where the https addresses of channels are served here (the test's TLS front). */
  readonly fronts = new PublicFronts();
  private faults: number[] = [];
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** A grant as if the user had consented: tokens the fake will honour. */
  grant(options: { accessExpiresInMs?: number } = {}): { accessToken: string; refreshToken: string; expiresAt: number } {
    const accessToken = `ya29.${randomBytes(12).toString("hex")}`;
    const refreshToken = `1//${randomBytes(12).toString("hex")}`;
    const expiresAt = Date.now() + (options.accessExpiresInMs ?? 3_600_000);
    this.accessTokens.set(accessToken, expiresAt);
    this.refreshTokens.set(refreshToken, { revoked: false });
    return { accessToken, refreshToken, expiresAt };
  }

  /** An authorization code Google would put on the redirect after consent. */
  issueCode(email: string): string {
    const code = `4/${randomBytes(10).toString("hex")}`;
    this.codes.set(code, { email });
    return code;
  }

  revoke(refreshToken: string): void {
    this.refreshTokens.set(refreshToken, { revoked: true });
    for (const token of this.accessTokens.keys()) this.accessTokens.set(token, 0);
  }

  /** An attendee answers: Google writes the answer into the organizer's event. */
  respond(eventId: string, email: string, responseStatus: "accepted" | "declined" | "tentative"): void {
    const attendees = (this.events.get(eventId)?.body.attendees ?? []) as Array<{ email: string; responseStatus?: string }>;
    const attendee = attendees.find((a) => a.email.toLowerCase() === email.toLowerCase());
    if (!attendee) throw new Error(`${email} is not an attendee of event ${eventId}`);
    attendee.responseStatus = responseStatus;
    if (this.notifying) void this.notifyChannels();
  }

  /**
   * Tells every open channel that the calendar changed, as Google does: a
   * bodiless POST naming the channel, its token and `exists`. Resolves once
   * every address answered.
   */
  async notifyChannels(): Promise<void> {
    await Promise.all([...this.channels.values()].map((channel) => this.notify(channel, "exists")));
  }

  private async notify(channel: GoogleChannel, state: "sync" | "exists", token = channel.token): Promise<void> {
    const target = this.fronts.resolve(channel.address);
    let status: number;
    try {
      const headers: Record<string, string> = { "X-Goog-Channel-ID": channel.id, "X-Goog-Resource-ID": channel.resourceId, "X-Goog-Resource-State": state, "X-Goog-Message-Number": String(this.notifications.length + 1) };
      if (token !== undefined) headers["X-Goog-Channel-Token"] = token;
      status = (await fetch(target, { method: "POST", headers })).status;
    } catch {
      status = 0;
    }
    this.notifications.push({ channelId: channel.id, state, status });
  }

  /** A notification of the channel with a token not its own, as a forger would send; the status the address answered. */
  async notifyWithToken(channelId: string, token: string): Promise<number> {
    const channel = this.channels.get(channelId);
    if (!channel) throw new Error(`no channel ${channelId}`);
    await this.notify(channel, "exists", token);
    return this.notifications.at(-1)!.status;
  }

  /** The next calendar calls answer these statuses, one each. */
  failNext(...statuses: number[]): void {
    this.faults.push(...statuses);
  }

  calendarCalls(): GoogleCall[] {
    return this.calls.filter((c) => c.path.startsWith("/calendar/"));
  }

  tokenCalls(): GoogleCall[] {
    return this.calls.filter((c) => c.path === "/token");
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const raw = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c: Buffer) => (data += c.toString("utf8")));
      req.on("end", () => resolve(data));
    });
    const form = req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded");
    const body = raw ? (form ? Object.fromEntries(new URLSearchParams(raw)) : (JSON.parse(raw) as Record<string, unknown>)) : undefined;
    const accessToken = req.headers.authorization?.replace(/^Bearer /, "");
    const call: GoogleCall = { method: req.method ?? "GET", path: url.pathname, query: Object.fromEntries(url.searchParams), body, accessToken };
    this.calls.push(call);
    if (url.pathname === "/token" && req.method === "POST") return this.token(res, (body ?? {}) as Record<string, string>);
    if (!url.pathname.startsWith("/calendar/v3/")) return json(res, 404, { error: { code: 404, message: "Not Found" } });
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    const fault = this.faults.shift();
    if (fault !== undefined) return json(res, fault, { error: { code: fault, message: fault === 429 ? "Rate Limit Exceeded" : "Backend Error", errors: [{ reason: fault === 429 ? "rateLimitExceeded" : "backendError" }] } });
    const expiry = accessToken ? this.accessTokens.get(accessToken) : undefined;
    if (expiry === undefined || expiry <= Date.now()) return json(res, 401, { error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" } });
    return this.calendar(req.method ?? "GET", url, call, res);
  }

  private token(res: ServerResponse, form: Record<string, string>): void {
    const issue = () => {
      const accessToken = `ya29.${randomBytes(12).toString("hex")}`;
      this.accessTokens.set(accessToken, Date.now() + 3_600_000);
      return accessToken;
    };
    if (form.grant_type === "authorization_code") {
      const code = this.codes.get(form.code ?? "");
      if (!code) return json(res, 400, { error: "invalid_grant", error_description: "Malformed auth code." });
      this.codes.delete(form.code!);
      const refreshToken = `1//${randomBytes(12).toString("hex")}`;
      this.refreshTokens.set(refreshToken, { revoked: false });
      const claims = Buffer.from(JSON.stringify({ iss: "https://accounts.google.com", email: code.email, email_verified: true })).toString("base64url");
      return json(res, 200, { access_token: issue(), refresh_token: refreshToken, expires_in: 3599, token_type: "Bearer", scope: "openid email", id_token: `e30.${claims}.sig` });
    }
    if (form.grant_type === "refresh_token") {
      const grant = this.refreshTokens.get(form.refresh_token ?? "");
      if (!grant || grant.revoked) return json(res, 400, { error: "invalid_grant", error_description: "Token has been expired or revoked." });
      return json(res, 200, { access_token: issue(), expires_in: 3599, token_type: "Bearer", scope: "https://www.googleapis.com/auth/calendar.events" });
    }
    return json(res, 400, { error: "unsupported_grant_type" });
  }

  private calendar(method: string, url: URL, call: GoogleCall, res: ServerResponse): void {
    if (method === "POST" && url.pathname === "/calendar/v3/freeBusy") {
      const items = ((call.body?.items as Array<{ id: string }>) ?? []).map((i) => i.id);
      const known = (id: string) => id === "primary" || this.calendarList.some((c) => c.id === id);
      const answer = (id: string) => (known(id) ? { busy: this.calendarBusy.get(id) ?? this.busy } : { errors: [{ domain: "global", reason: "notFound" }], busy: [] });
      return json(res, 200, { kind: "calendar#freeBusy", timeMin: call.body?.timeMin, timeMax: call.body?.timeMax, calendars: Object.fromEntries(items.map((id) => [id, answer(id)])) });
    }
    if (method === "GET" && url.pathname === "/calendar/v3/users/me/calendarList") {
      const size = Number(call.query.maxResults ?? 100);
      const from = Number(call.query.pageToken ?? 0);
      const items = this.calendarList.slice(from, from + size).map((c) => ({ kind: "calendar#calendarListEntry", ...c }));
      return json(res, 200, { kind: "calendar#calendarList", items, ...(from + size < this.calendarList.length ? { nextPageToken: String(from + size) } : {}) });
    }
    const watchOf = /^\/calendar\/v3\/calendars\/[^/]+\/events\/watch$/.exec(url.pathname);
    if (method === "POST" && watchOf) return this.watch(call, res);
    if (method === "POST" && url.pathname === "/calendar/v3/channels/stop") {
      this.channels.delete(String(call.body?.id));
      res.writeHead(204).end();
      return;
    }
    const instancesOf = /^\/calendar\/v3\/calendars\/[^/]+\/events\/([^/]+)\/instances$/.exec(url.pathname);
    if (method === "GET" && instancesOf) return this.instances(decodeURIComponent(instancesOf[1]!), url, res);
    const match = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (!match) return json(res, 404, { error: { code: 404, message: "Not Found" } });
    const eventId = match[2] ? decodeURIComponent(match[2]) : undefined;
    if (method === "GET" && !eventId) {
      // events.list of one page: the live events overlapping [timeMin, timeMax).
      const from = Date.parse(call.query.timeMin ?? "");
      const to = Date.parse(call.query.timeMax ?? "");
      const at = (e: StoredEvent, edge: "start" | "end") => Date.parse(String((e.body[edge] as { dateTime?: string } | undefined)?.dateTime));
      const items = [...this.events.values()].filter((e) => !e.deleted && at(e, "start") < to && at(e, "end") > from).map((e) => ({ kind: "calendar#event", status: "confirmed", ...e.body }));
      return json(res, 200, { kind: "calendar#events", items });
    }
    if (method === "POST" && !eventId) {
      const id = String(call.body?.id ?? randomBytes(8).toString("hex"));
      if (this.events.has(id)) return json(res, 409, { error: { code: 409, message: "The requested identifier already exists." } });
      this.events.set(id, { id, body: { ...call.body, id }, deleted: false });
      return json(res, 200, { kind: "calendar#event", ...call.body, id, status: call.body?.status ?? "confirmed" });
    }
    const stored = eventId ? (this.events.get(eventId) ?? this.instanceOf(eventId)) : undefined;
    if (!stored) return json(res, 404, { error: { code: 404, message: "Not Found" } });
    if (stored.deleted) return json(res, 410, { error: { code: 410, message: "Resource has been deleted" } });
    if (method === "PATCH") {
      stored.body = { ...stored.body, ...call.body };
      return json(res, 200, { kind: "calendar#event", ...stored.body });
    }
    if (method === "DELETE") {
      stored.deleted = true;
      res.writeHead(204).end();
      return;
    }
    return json(res, 405, { error: { code: 405, message: "Method Not Allowed" } });
  }

  /** events.watch: a web_hook channel to an https address, told at once that it is open (`sync`). */
  private watch(call: GoogleCall, res: ServerResponse): void {
    const body = call.body ?? {};
    const address = String(body.address ?? "");
    if (body.type !== "web_hook" || !address.startsWith("https://")) return json(res, 400, { error: { code: 400, message: "WebHook callback must be HTTPS: " + address, errors: [{ reason: "push.webhookUrlNotHttps" }] } });
    const ttl = Number((body.params as { ttl?: string } | undefined)?.ttl ?? 604_800);
    const channel: GoogleChannel = { id: String(body.id), token: body.token === undefined ? undefined : String(body.token), address, resourceId: randomBytes(8).toString("hex"), expiration: Date.now() + Math.min(ttl, 604_800) * 1_000 };
    this.channels.set(channel.id, channel);
    json(res, 200, { kind: "api#channel", id: channel.id, resourceId: channel.resourceId, resourceUri: "https://www.googleapis.com/calendar/v3/calendars/primary/events", token: channel.token, expiration: String(channel.expiration) });
    void this.notify(channel, "sync");
  }

  /** The original starts (UTC, ISO) of a recurring event's instances, as Google expands its rule. */
  instanceStarts(body: Record<string, unknown>): string[] {
    const recurrence = (body.recurrence as string[] | undefined) ?? [];
    const rule = recurrence.find((l) => l.startsWith("RRULE:"));
    const start = body.start as { dateTime: string; timeZone: string } | undefined;
    if (!rule || !start) return [];
    const zone = start.timeZone;
    const wall = DateTime.fromISO(start.dateTime, { zone });
    const floating = new ICAL.Time({ year: wall.year, month: wall.month, day: wall.day, hour: wall.hour, minute: wall.minute, second: wall.second, isDate: false }, ICAL.Timezone.localTimezone);
    const excluded = new Set(
      recurrence
        .filter((l) => l.startsWith("EXDATE"))
        .flatMap((l) => {
          const tzid = /;TZID=([^:;]+)/.exec(l)?.[1];
          return l.slice(l.indexOf(":") + 1).split(",").map((v) => (v.endsWith("Z") ? DateTime.fromFormat(v, "yyyyMMdd'T'HHmmss'Z'", { zone: "UTC" }) : DateTime.fromFormat(v, "yyyyMMdd'T'HHmmss", { zone: tzid ?? zone })).toMillis());
        }),
    );
    const iterator = ICAL.Recur.fromString(rule.slice("RRULE:".length)).iterator(floating);
    const starts: string[] = [];
    for (let next = iterator.next(), n = 0; next && n < 1_000; next = iterator.next(), n++) {
      const at = DateTime.fromObject({ year: next.year, month: next.month, day: next.day, hour: next.hour, minute: next.minute, second: next.second }, { zone });
      if (!excluded.has(at.toMillis())) starts.push(at.toUTC().toISO({ suppressMilliseconds: true })!);
    }
    return starts;
  }

  private instanceId(eventId: string, start: string): string {
    return `${eventId}_${DateTime.fromISO(start, { zone: "UTC" }).toFormat("yyyyMMdd'T'HHmmss'Z'")}`;
  }

  /** An instance not changed yet, by its id: made an event of its own (an exception) on first use, as a patch or delete makes it. */
  private instanceOf(instanceId: string): StoredEvent | undefined {
    const cut = instanceId.lastIndexOf("_");
    const parent = cut > 0 ? this.events.get(instanceId.slice(0, cut)) : undefined;
    if (!parent || parent.deleted) return undefined;
    const start = this.instanceStarts(parent.body).find((s) => this.instanceId(parent.id, s) === instanceId);
    if (!start) return undefined;
    const instance: StoredEvent = { id: instanceId, body: this.instanceBody(parent, start), deleted: false };
    this.events.set(instanceId, instance);
    return instance;
  }

  private instanceBody(parent: StoredEvent, start: string): Record<string, unknown> {
    const { recurrence: _recurrence, ...rest } = parent.body;
    const zone = (parent.body.start as { timeZone: string }).timeZone;
    const lengthMs = DateTime.fromISO((parent.body.end as { dateTime: string }).dateTime).toMillis() - DateTime.fromISO((parent.body.start as { dateTime: string }).dateTime).toMillis();
    const at = DateTime.fromISO(start, { zone });
    return {
      ...rest,
      id: this.instanceId(parent.id, start),
      recurringEventId: parent.id,
      originalStartTime: { dateTime: at.toISO({ suppressMilliseconds: true }), timeZone: zone },
      start: { dateTime: at.toISO({ suppressMilliseconds: true }), timeZone: zone },
      end: { dateTime: at.plus(lengthMs).toISO({ suppressMilliseconds: true }), timeZone: zone },
    };
  }

  /** events.instances: the instances of a recurring event, each as changed since; cancelled ones only with `showDeleted`. */
  private instances(eventId: string, url: URL, res: ServerResponse): void {
    const parent = this.events.get(eventId);
    if (!parent) return json(res, 404, { error: { code: 404, message: "Not Found" } });
    if (parent.deleted) return json(res, 410, { error: { code: 410, message: "Resource has been deleted" } });
    const originalStart = url.searchParams.get("originalStart");
    const wanted = originalStart ? DateTime.fromISO(originalStart).toMillis() : undefined;
    const showDeleted = url.searchParams.get("showDeleted") === "true";
    const items = this.instanceStarts(parent.body)
      .filter((s) => wanted === undefined || DateTime.fromISO(s).toMillis() === wanted)
      .map((s) => this.events.get(this.instanceId(eventId, s)) ?? { id: this.instanceId(eventId, s), body: this.instanceBody(parent, s), deleted: false })
      .filter((e) => showDeleted || !e.deleted)
      .map((e) => ({ kind: "calendar#event", ...e.body, status: e.deleted ? "cancelled" : (e.body.status ?? "confirmed") }));
    return json(res, 200, { kind: "calendar#events", items });
  }
}
