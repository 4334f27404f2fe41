import { formatTimestamp } from "@sched/proto";
import { FakeMicrosoft } from "@sched/testing/microsoft";
import { SmtpFake } from "@sched/testing/smtp";
import ICAL from "ical.js";
import { GoogleFake } from "./fakes/googleFake.js";
import { call, perSuite, startTestSystem, ADMIN_TOKEN, type TestSystem, type WiringKind } from "./harness.js";

/** The parts of an invite an e-mail client reads, from an independent iCalendar parser. */
export interface ParsedInvite {
  method: string;
  uid: string;
  sequence: number;
  status: string | null;
  summary: string;
  /** DTSTART and DTEND as ical.js spells them; a UTC time ends in Z. */
  start: string;
  end: string;
  attendees: string[];
  organizer: string;
}

export function parseInvite(ics: string): ParsedInvite {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  const event = calendar.getFirstSubcomponent("vevent");
  if (!event) throw new Error("no VEVENT in the invite");
  const text = (name: string) => String(event.getFirstPropertyValue(name) ?? "");
  const time = (name: string) => {
    const value = event.getFirstPropertyValue(name) as InstanceType<typeof ICAL.Time>;
    if (value.zone !== ICAL.Timezone.utcTimezone) throw new Error(`${name} is not in UTC: ${value.toString()}`);
    return value.toString();
  };
  return {
    method: String(calendar.getFirstPropertyValue("method")),
    uid: text("uid"),
    sequence: Number(event.getFirstPropertyValue("sequence")),
    status: event.getFirstPropertyValue("status") === null ? null : text("status"),
    summary: text("summary"),
    start: time("dtstart"),
    end: time("dtend"),
    attendees: event.getAllProperties("attendee").map((p) => String(p.getFirstValue()).replace(/^mailto:/i, "").toLowerCase()),
    organizer: text("organizer").replace(/^mailto:/i, "").toLowerCase(),
  };
}

export interface InvitesWorld {
  sys: TestSystem;
  url: string;
  smtp: SmtpFake;
  /** Where the SMTP fake listens, for invites replicas that join the system. */
  smtpUrl: string;
  google: GoogleFake;
  stop(): Promise<void>;
}

/** The whole system with its invites service pointed at a loopback SMTP server and a loopback Google; `otherEnv` sets other services'. */
export async function startInvitesWorld(
  kind: WiringKind,
  invitesEnv: Record<string, string> = {},
  otherEnv: Record<string, Record<string, string>> = {},
  gateway: Parameters<typeof startTestSystem>[1] = {},
): Promise<InvitesWorld> {
  const smtp = new SmtpFake();
  const google = new GoogleFake();
  const smtpUrl = await smtp.start();
  const googleUrl = await google.start();
  // Tests poll the invites: a roomy rate limit keeps the polling from being the thing tested. They make
  // meetings in bursts, which a busy machine serves slowly: a roomy deadline keeps a 503 from being tested either.
  const sys = await startTestSystem(kind, { standardPerMinute: 100_000, busTimeoutMs: 30_000, ...gateway }, {
    invites: {
      SMTP_URL: smtpUrl,
      GOOGLE_CLIENT_ID: "client-123.apps.googleusercontent.com",
      GOOGLE_CLIENT_SECRET: "test-secret",
      GOOGLE_API_ROOT_URL: `${googleUrl}/`,
      GOOGLE_OAUTH_TOKEN_URL: `${googleUrl}/token`,
      GOOGLE_OAUTH_AUTH_URL: `${googleUrl}/o/oauth2/v2/auth`,
      INVITE_RETRY_BASE_MS: "20",
      INVITE_MAX_ATTEMPTS: "4",
      INVITE_TIMEOUT_MS: "2000",
      ...invitesEnv,
    },
    ...otherEnv,
  });
  return {
    sys,
    url: sys.url,
    smtp,
    smtpUrl,
    google,
    stop: async () => {
      await sys.stop();
      await smtp.stop();
      await google.stop();
    },
  };
}

/** Attaches a Google grant the fake honours to a user, through the admin API. */
export async function attachGoogle(world: InvitesWorld, userId: string, grant: { accessToken: string; refreshToken: string; expiresAt: number }): Promise<string> {
  const res = await call(world.url, "POST", `/admin/v1/users/${userId}/calendar-connections`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { provider: "google", accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: formatTimestamp(grant.expiresAt) },
  });
  if (res.status !== 201) throw new Error(`attach failed: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** The invites settings that point Microsoft's identity platform and Graph at a started loopback fake. */
function fakeMicrosoftEnv(microsoft: FakeMicrosoft): Record<string, string> {
  return { MICROSOFT_CLIENT_ID: microsoft.clientId, MICROSOFT_CLIENT_SECRET: microsoft.clientSecret, MICROSOFT_AUTHORITY: `${microsoft.url}/common`, MICROSOFT_GRAPH_URL: microsoft.url };
}

/**
 * One wiring's suite against a fake Microsoft on loopback: the fake and an
 * invites world pointed at it, started before the suite and stopped after.
 */
export async function microsoftWorldPerSuite(wiring: WiringKind, invitesEnv: Record<string, string> = {}) {
  const microsoft = new FakeMicrosoft();
  const suite = await perSuite(wiring, async () => {
    await microsoft.start();
    const world = await startInvitesWorld(wiring, { ...fakeMicrosoftEnv(microsoft), ...invitesEnv });
    return { world, stop: async () => Promise.all([world.stop(), microsoft.stop()]) };
  });
  return {
    available: suite.available,
    microsoft,
    get world(): InvitesWorld {
      return suite.started.world;
    },
  };
}

/** Attaches a Microsoft grant the fake honours to a user, through the admin API; the connection's id. */
export async function attachMicrosoft(world: InvitesWorld, userId: string, grant: { accessToken: string; refreshToken: string; accountEmail: string }): Promise<string> {
  const res = await call(world.url, "POST", `/admin/v1/users/${userId}/calendar-connections`, {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { provider: "microsoft", accountEmail: grant.accountEmail, accessToken: grant.accessToken, refreshToken: grant.refreshToken },
  });
  if (res.status !== 201) throw new Error(`attach failed: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
