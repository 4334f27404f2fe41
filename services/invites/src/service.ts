import { env } from "@sched/config";
import { startOutboxRelay } from "@sched/outbox";
import { inviteEvents } from "@sched/proto";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { TokenCipher } from "./domain/tokenCipher.js";
import { EmailSender } from "./outbound/email.js";
import { GoogleCalendar } from "./outbound/google.js";
import { pollGoogleAnswers } from "./outbound/googleAnswers.js";
import { MicrosoftCalendar } from "./outbound/microsoft.js";
import { pollMicrosoftAnswers } from "./outbound/microsoftAnswers.js";
import { ConnectionVault } from "./outbound/vault.js";
import { pollCalDavAnswers } from "./outbound/caldavAnswers.js";
import { keepAnswerWatches } from "./outbound/answerWatches.js";
import { providerNotificationBindings } from "./inbound/providerNotifications.js";
import { DeliveryWorker } from "./outbound/worker.js";
import { answerResetsOf, organizerOf } from "./db/queries.js";
import { migrations } from "./db/migrations/index.js";
import { calendarBusyBindings } from "./inbound/calendarBusy.js";
import { connectionBindings } from "./inbound/connections.js";
import { consentBindings } from "./inbound/consent.js";
import { connectionSettingsBindings } from "./inbound/connectionSettings.js";
import { inviteRouteBindings } from "./inbound/invites.js";
import { consumeMeetingEvents } from "./consumers/meetingEvents.js";
import { startReplyListener } from "./inbound/replyMail.js";
import { ReplyAddresses } from "./domain/replyAddress.js";

/** How often the outbox is looked at besides the wakes (rows another replica committed before it died). */
const RELAY_POLL_MS = 1_000;

const config = z.object({
  /** 32 bytes, base64: the AES-256-GCM key of stored provider tokens. */
  CALENDAR_TOKEN_KEY: z
    .string({ error: "is required (32 random bytes, base64)" })
    .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded (openssl rand -base64 32)"),
  SMTP_URL: env.optional(z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" })),
  INVITES_FROM: z.string().min(3).default("Scheduling API <invites@localhost>"),
  /** The domain part of iCalendar UIDs and Message-IDs. */
  INVITES_UID_DOMAIN: z.string().regex(/^[A-Za-z0-9.-]+$/, "must be a domain name").default("sched.invalid"),
  INVITE_MAX_ATTEMPTS: env.positiveInt(8),
  INVITE_RETRY_BASE_MS: env.positiveInt(2_000),
  INVITE_TIMEOUT_MS: env.positiveInt(10_000),
  GOOGLE_CLIENT_ID: env.optional(z.string()),
  GOOGLE_CLIENT_SECRET: env.optional(z.string()),
  GOOGLE_REDIRECT_URL: env.url("http://localhost:8080/v1/calendar-connections/google/callback"),
  GOOGLE_API_ROOT_URL: env.url("https://www.googleapis.com/"),
  GOOGLE_OAUTH_AUTH_URL: env.url("https://accounts.google.com/o/oauth2/v2/auth"),
  GOOGLE_OAUTH_TOKEN_URL: env.url("https://oauth2.googleapis.com/token"),
  /** The application (client) id and a client secret of the app registered in Microsoft Entra; unset: no Microsoft calendars. */
  /** The deployment's dashboard: where a calendar consent started there returns (its calendars page). */
  DASHBOARD_URL: env.url("http://localhost:8080/dashboard"),
  MICROSOFT_CLIENT_ID: env.optional(z.string()),
  MICROSOFT_CLIENT_SECRET: env.optional(z.string()),
  MICROSOFT_REDIRECT_URL: env.url("http://localhost:8080/v1/calendar-connections/microsoft/callback"),
  /** The identity platform's authority: `common` takes work, school and personal accounts; a tenant id only that tenant's. */
  MICROSOFT_AUTHORITY: env.url("https://login.microsoftonline.com/common"),
  MICROSOFT_GRAPH_URL: env.url("https://graph.microsoft.com"),
  /** How often answers are read back from organizers' Microsoft calendars (one request per connection each time). */
  MICROSOFT_ANSWERS_POLL_MS: env.positiveInt(5 * 60_000),
  /** How often answers are read back from organizers' Google calendars (one request per connection each time). */
  GOOGLE_ANSWERS_POLL_MS: env.positiveInt(5 * 60_000),
  /**
   * Where providers reach the API (the gateway's public address). An https one opens a push channel on each
   * Google and Microsoft calendar with meetings of ours: answers arrive as they change, and polling slows down.
   */
  PUBLIC_BASE_URL: env.publicBaseUrl(),
  /** How often Google and Microsoft calendars whose push channel is live are read anyway, in case a notification was lost. */
  PROVIDER_ANSWERS_WATCHED_POLL_MS: env.positiveInt(60 * 60_000),
  /** How often each connection's push channel is looked at: opened when missing, renewed before it lapses. */
  PROVIDER_WATCH_CHECK_MS: env.positiveInt(5 * 60_000),
  /** How many days ahead the answers to meetings are read back from Google and Microsoft calendars. */
  PROVIDER_ANSWERS_WINDOW_DAYS: env.positiveInt(366),
  FREEBUSY_TIMEOUT_MS: env.positiveInt(700),
  FREEBUSY_CACHE_MS: env.positiveInt(60_000),
  /** How often answers are read back from organizers' CalDAV calendars (a few requests per connection each time). */
  CALDAV_ANSWERS_POLL_MS: env.positiveInt(5 * 60_000),
  /** Whether users may connect CalDAV servers on loopback or private addresses: standalone mode (local development) only by default. */
  CALDAV_ALLOW_PRIVATE: env.flag(false),
  /** The domain of the reply addresses of e-mail invites; its MX points at INBOUND_SMTP_PORT. Unset: replies go to the organizer. */
  INBOUND_EMAIL_DOMAIN: env.optional(z.string().regex(/^[A-Za-z0-9.-]+$/, "must be a domain name")),
  /** Where the SMTP listener for replies to e-mail invites listens; unset: no listener. */
  INBOUND_SMTP_PORT: env.optional(z.coerce.number().int().min(1).max(65535)),
  INBOUND_SMTP_HOST: z.string().min(1).default("0.0.0.0"),
  /** Messages one sending address may hand the listener a minute (a relay in front sends them all: raise it there). */
  INBOUND_SMTP_MESSAGES_PER_MINUTE: env.positiveInt(120),
}).refine((c) => c.INBOUND_SMTP_PORT === undefined || c.INBOUND_EMAIL_DOMAIN !== undefined, {
  message: "is required when INBOUND_SMTP_PORT is set (the domain the reply addresses are at)",
  path: ["INBOUND_EMAIL_DOMAIN"],
});

/**
 * A development-only token key for standalone mode and tests, so `npm start`
 * needs no setup. Anything holding real grants sets its own CALENDAR_TOKEN_KEY.
 */
export const DEV_CALENDAR_TOKEN_KEY = Buffer.from("sched-standalone-dev-only-key-32").toString("base64");

/**
 * Invites: turns meeting events into calendar invites through the
 * organizer's connected Google, Microsoft or CalDAV calendar or by iCalendar e-mail, each exactly
 * once; and owns the calendar connections (OAuth grants, sealed at rest).
 * Every settled delivery is an event on the INVITES stream, through the outbox.
 */
export const invitesService = defineService({
  name: "invites",
  schema: "invites",
  migrations,
  config,
  standaloneEnv: { CALENDAR_TOKEN_KEY: DEV_CALENDAR_TOKEN_KEY, CALDAV_ALLOW_PRIVATE: "true" },
  async start({ bus, db, logger, config: c }) {
    const relay = startOutboxRelay({ db, bus, logger, events: inviteEvents, pollMs: RELAY_POLL_MS });
    const tokenKey = Buffer.from(c.CALENDAR_TOKEN_KEY, "base64");
    const google = new GoogleCalendar({
      clientId: c.GOOGLE_CLIENT_ID,
      clientSecret: c.GOOGLE_CLIENT_SECRET,
      redirectUrl: c.GOOGLE_REDIRECT_URL,
      apiRootUrl: c.GOOGLE_API_ROOT_URL,
      authUrl: c.GOOGLE_OAUTH_AUTH_URL,
      tokenUrl: c.GOOGLE_OAUTH_TOKEN_URL,
      timeoutMs: c.INVITE_TIMEOUT_MS,
    });
    const microsoft = new MicrosoftCalendar({
      clientId: c.MICROSOFT_CLIENT_ID,
      clientSecret: c.MICROSOFT_CLIENT_SECRET,
      redirectUrl: c.MICROSOFT_REDIRECT_URL,
      authority: c.MICROSOFT_AUTHORITY,
      graphUrl: c.MICROSOFT_GRAPH_URL,
      timeoutMs: c.INVITE_TIMEOUT_MS,
    });
    const vault = new ConnectionVault(db, new TokenCipher(tokenKey), google, logger, c.CALDAV_ALLOW_PRIVATE, microsoft);
    const replies = c.INBOUND_EMAIL_DOMAIN ? new ReplyAddresses(tokenKey, c.INBOUND_EMAIL_DOMAIN) : undefined;
    const email = new EmailSender({ smtpUrl: c.SMTP_URL, from: c.INVITES_FROM, uidDomain: c.INVITES_UID_DOMAIN, timeoutMs: c.INVITE_TIMEOUT_MS, replies });
    const worker = new DeliveryWorker({
      db,
      logger,
      email,
      google,
      microsoft,
      vault,
      settled: () => relay.wake(),
      settings: { uidDomain: c.INVITES_UID_DOMAIN, providerTimeoutMs: c.INVITE_TIMEOUT_MS, maxAttempts: c.INVITE_MAX_ATTEMPTS, retryBaseMs: c.INVITE_RETRY_BASE_MS, leaseMs: c.INVITE_TIMEOUT_MS * 6, batch: 8, pollMs: 1_000 },
    });
    const microsoftAnswers = pollMicrosoftAnswers(db, bus, vault, logger, { everyMs: c.MICROSOFT_ANSWERS_POLL_MS, watchedEveryMs: c.PROVIDER_ANSWERS_WATCHED_POLL_MS, windowDays: c.PROVIDER_ANSWERS_WINDOW_DAYS, timeoutMs: c.INVITE_TIMEOUT_MS });
    const googleAnswers = pollGoogleAnswers(db, bus, vault, logger, { everyMs: c.GOOGLE_ANSWERS_POLL_MS, watchedEveryMs: c.PROVIDER_ANSWERS_WATCHED_POLL_MS, windowDays: c.PROVIDER_ANSWERS_WINDOW_DAYS, timeoutMs: c.INVITE_TIMEOUT_MS });
    const served = await bus.serve({ name: "invites", version: "1.0.0", description: "Calendar invites and calendar connections" }, [
      ...inviteRouteBindings(db, bus),
      ...connectionBindings({ db, bus, vault, logger }),
      ...consentBindings({ db, bus, logger, vault, google, microsoft, dashboardUrl: c.DASHBOARD_URL }),
      ...connectionSettingsBindings({ db, bus, logger, vault, caldavTimeoutMs: c.INVITE_TIMEOUT_MS }),
      ...calendarBusyBindings(db, vault, logger, { timeoutMs: c.FREEBUSY_TIMEOUT_MS, cacheMs: c.FREEBUSY_CACHE_MS }),
      ...providerNotificationBindings({ db, logger, wake: { google: () => googleAnswers.wake(), microsoft: () => microsoftAnswers.wake() } }),
    ]);
    // Test mode's simulated deliveries are settled as they are recorded: their events wait in the outbox.
    const events = await consumeMeetingEvents(bus, db, logger, () => worker.wake(), () => relay.wake());
    const replyMail =
      replies && c.INBOUND_SMTP_PORT !== undefined
        ? await startReplyListener(bus, logger, replies, {
            ...{ host: c.INBOUND_SMTP_HOST, port: c.INBOUND_SMTP_PORT, uidDomain: c.INVITES_UID_DOMAIN, messagesPerMinute: c.INBOUND_SMTP_MESSAGES_PER_MINUTE },
            answersResetAt: async (meetingId) => (await answerResetsOf(db, [meetingId])).get(meetingId),
            organizerOf: (meetingId) => organizerOf(db, meetingId),
          })
        : undefined;
    const caldavAnswers = pollCalDavAnswers(db, bus, vault, logger, { everyMs: c.CALDAV_ANSWERS_POLL_MS, timeoutMs: c.INVITE_TIMEOUT_MS, uidDomain: c.INVITES_UID_DOMAIN });
    const pushProviders = [...(google.configured ? (["google"] as const) : []), ...(microsoft.configured ? (["microsoft"] as const) : [])];
    // Providers deliver only to https: without such an address the answers are polled, as before.
    const watches = c.PUBLIC_BASE_URL?.startsWith("https://") ? keepAnswerWatches(db, vault, logger, { publicBaseUrl: c.PUBLIC_BASE_URL, checkMs: c.PROVIDER_WATCH_CHECK_MS, providers: pushProviders }) : undefined;
    worker.start();
    return {
      stop: async () => {
        await served.stop();
        await watches?.stop();
        await events.stop();
        await replyMail?.stop();
        await caldavAnswers.stop();
        await microsoftAnswers.stop();
        await googleAnswers.stop();
        await worker.stop();
        await relay.stop();
        email.close();
      },
    };
  },
});
