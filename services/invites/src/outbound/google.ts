import { formatTimestamp, type Meeting, type SeriesOfEvent } from "@sched/proto";
// The calendar API's own package: `googleapis` holds every Google API (209 MB installed).
import { auth as googleAuth, calendar as googleCalendar, type calendar_v3 } from "@googleapis/calendar";
import { meetingEndMs } from "../domain/meetingTimes.js";
import { occurrenceStart, recurrenceLines } from "../domain/series.js";
import { inZone } from "../domain/seriesZone.js";
import { DeliveryFailure, failureKindOfStatus } from "../domain/retry.js";
import type { ProviderTokens } from "../domain/tokenCipher.js";

type OAuth2Client = InstanceType<typeof googleAuth.OAuth2>;

export interface GoogleSettings {
  clientId?: string;
  clientSecret?: string;
  redirectUrl: string;
  /** Root of the Google APIs (`https://www.googleapis.com/`); tests point it at a loopback server. */
  apiRootUrl: string;
  authUrl: string;
  tokenUrl: string;
  timeoutMs: number;
}

/** What the invites need and nothing more: events they create, the list of the user's calendars (to choose the busy ones), and their free/busy. */
const GOOGLE_SCOPES = ["openid", "email", "https://www.googleapis.com/auth/calendar.events", "https://www.googleapis.com/auth/calendar.freebusy", "https://www.googleapis.com/auth/calendar.calendarlist.readonly"];

/** A user's grant in use: the calendar client and the way to learn of refreshed tokens. */
export interface GoogleSession {
  calendar: calendar_v3.Calendar;
}

/**
 * Google Calendar through `@googleapis/calendar`: OAuth 2.0 consent and code exchange,
 * events that carry the meeting to its participants (Google sends the
 * invitations: `sendUpdates: "all"`), and free/busy. Retries are the
 * worker's, not the client's: `retry: false`, so every attempt is counted.
 */
export class GoogleCalendar {
  constructor(private readonly settings: GoogleSettings) {}

  get configured(): boolean {
    return Boolean(this.settings.clientId && this.settings.clientSecret);
  }

  private oauthClient(): OAuth2Client {
    return new googleAuth.OAuth2({
      clientId: this.settings.clientId,
      clientSecret: this.settings.clientSecret,
      redirectUri: this.settings.redirectUrl,
      endpoints: { oauth2TokenUrl: this.settings.tokenUrl, oauth2AuthBaseUrl: this.settings.authUrl },
    });
  }

  consentUrl(state: string): string {
    return this.oauthClient().generateAuthUrl({ access_type: "offline", prompt: "consent", include_granted_scopes: true, scope: GOOGLE_SCOPES, state });
  }

  /** Trades the consent's code for tokens; the account's address comes from the ID token when Google sent one. */
  async exchangeCode(code: string): Promise<{ tokens: ProviderTokens; accountEmail: string | null }> {
    const { tokens } = await this.oauthClient().getToken(code);
    if (!tokens.access_token || !tokens.refresh_token) throw new DeliveryFailure("permanent", "Google granted no offline access (no refresh token).");
    return {
      tokens: { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, ...(tokens.expiry_date ? { expiresAt: tokens.expiry_date } : {}) },
      accountEmail: emailOfIdToken(tokens.id_token),
    };
  }

  /**
   * A calendar client on the user's tokens. The OAuth client refreshes an
   * expired access token by itself; `onRefresh` receives the new tokens so
   * they are stored before the next use.
   */
  session(tokens: ProviderTokens, onRefresh: (tokens: ProviderTokens) => void): GoogleSession {
    const auth = this.oauthClient();
    auth.setCredentials({ access_token: tokens.accessToken, refresh_token: tokens.refreshToken, expiry_date: tokens.expiresAt ?? null });
    auth.on("tokens", (fresh) => {
      if (!fresh.access_token) return;
      onRefresh({ accessToken: fresh.access_token, refreshToken: fresh.refresh_token ?? tokens.refreshToken, ...(fresh.expiry_date ? { expiresAt: fresh.expiry_date } : {}) });
    });
    return { calendar: googleCalendar({ version: "v3", auth, rootUrl: this.settings.apiRootUrl, retry: false, timeout: this.settings.timeoutMs }) };
  }
}

/** Google event ids are base32hex (0-9, a-v), 5–1024 long: the hex of the meeting id is one, and the same on every try. */
export function googleEventId(meetingId: string): string {
  return Buffer.from(meetingId, "utf8").toString("hex");
}

/**
 * The event as Google stores it: the meeting, its participants as attendees,
 * times in UTC. A series is one recurring event: its rule and cancelled
 * occurrences as `recurrence` lines, its times in its zone (Google expands
 * the rule in the start's `timeZone`, so 09:00 Berlin stays 09:00 Berlin); an
 * occurrence changed on its own is the body of that instance, without a rule.
 */
export function googleEventBody(meeting: Meeting, sequence: number, organizerEmail: string, series?: SeriesOfEvent | null): calendar_v3.Schema$Event {
  const zone = series && series.timeZone !== "UTC" ? series.timeZone : undefined;
  const time = (instant: string) => (zone ? { dateTime: inZone(instant, zone).toISO({ suppressMilliseconds: true }), timeZone: zone } : { dateTime: instant, timeZone: "UTC" });
  return {
    summary: meeting.title,
    description: meeting.description,
    start: time(meeting.startTime),
    end: time(formatTimestamp(meetingEndMs(meeting))),
    ...(series && !occurrenceStart(meeting) ? { recurrence: recurrenceLines(series, zone) } : {}),
    attendees: meeting.participants.filter((p) => p !== organizerEmail).map((email) => ({ email })),
    status: meeting.status === "cancelled" ? "cancelled" : "confirmed",
    sequence,
  };
}

/** A Google client (gaxios) error as the worker acts on it. */
export function googleFailure(err: unknown): DeliveryFailure {
  if (err instanceof DeliveryFailure) return err;
  const e = err as { status?: number; response?: { status?: number; data?: { error?: unknown } }; message?: string };
  const status = e.status ?? e.response?.status;
  const oauthError = typeof e.response?.data?.error === "string" ? e.response.data.error : undefined;
  const message = `Google: ${status ?? "no answer"} ${e.message ?? String(err)}`.trim();
  // The token endpoint says invalid_grant when the user revoked access or the grant expired.
  if (oauthError === "invalid_grant") return new DeliveryFailure("revoked", message);
  return new DeliveryFailure(failureKindOfStatus(status), message);
}

export function statusOf(err: unknown): number | undefined {
  const e = err as { status?: number; response?: { status?: number } };
  return e.status ?? e.response?.status;
}

function emailOfIdToken(idToken: string | null | undefined): string | null {
  const payload = idToken?.split(".")[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { email?: unknown };
    return typeof claims.email === "string" ? claims.email.toLowerCase() : null;
  } catch {
    return null;
  }
}
