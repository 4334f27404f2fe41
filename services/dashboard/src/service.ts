import { env } from "@sched/config";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { pruneExpired } from "./db/queries.js";
import { migrations } from "./db/migrations/index.js";
import { logHorizon } from "./domain/requestLog.js";
import { DEFAULT_SESSION_POLICY } from "./domain/sessions.js";
import { DEFAULT_SIGN_IN_LIMITS } from "./domain/signIn.js";
import { signInLinkBindings } from "./inbound/bus/signInLinks.js";
import { consumeRequestLog } from "./consumers/requestLog.js";
import { createDashboardApp } from "./inbound/http/app.js";
import { AccountsClient } from "./outbound/accounts.js";
import { CalendarsClient } from "./outbound/calendars.js";
import { WebhooksClient } from "./outbound/webhooks.js";
import { SignInMailer } from "./outbound/mail.js";

const PRUNE_EVERY_MS = 60 * 60_000;

/** The web dashboard (api-decisions 11): sessions, sign-in links and the request log. */
export const dashboardService = defineService({
  name: "dashboard",
  schema: "dashboard",
  migrations,
  config: z.object({
    /** The port of its pages in a process of its own; in standalone mode they are under /dashboard on the API's port. */
    DASHBOARD_PORT: env.port(8081),
    /** Where users reach the dashboard, `/dashboard` included: sign-in links point there, and an https address makes cookies Secure. */
    DASHBOARD_URL: env.url("http://localhost:8080/dashboard"),
    /** Whether an unknown e-mail address may sign up (a sign-in link by e-mail makes the account). */
    DASHBOARD_SIGNUP: env.flag(false),
    /** Minutes a session may sit unused before it ends. */
    DASHBOARD_IDLE_MINUTES: env.positiveNumber(DEFAULT_SESSION_POLICY.idleMs / 60_000),
    SMTP_URL: env.optional(z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" })),
    DASHBOARD_MAIL_FROM: z.string().min(3).default("Scheduling API <no-reply@localhost>"),
    /** Express "trust proxy" setting, for the client address the sign-in limits count and for https behind a proxy. */
    TRUST_PROXY: z.string().default("false"),
  }),
  async start({ bus, db, logger, config }) {
    const accounts = new AccountsClient(bus);
    const mailer = new SignInMailer({ smtpUrl: config.SMTP_URL, from: config.DASHBOARD_MAIL_FROM, timeoutMs: 10_000 }, logger);
    const sessions = { ...DEFAULT_SESSION_POLICY, idleMs: config.DASHBOARD_IDLE_MINUTES * 60_000 };
    const served = await bus.serve({ name: "dashboard", version: "1.0.0", description: "Dashboard sign-in links" }, signInLinkBindings(db, accounts, config.DASHBOARD_URL));
    const requestLog = await consumeRequestLog(bus, db);
    const prune = () => {
      const now = Date.now();
      pruneExpired(db, { logBefore: logHorizon(new Date(now)), sessionsSeenBefore: new Date(now - sessions.idleMs), attemptsBefore: new Date(now - DEFAULT_SIGN_IN_LIMITS.windowMs) }).catch((err: unknown) =>
        logger.warn({ err }, "pruning the request log and old sessions failed; the next round tries again"),
      );
    };
    prune();
    const pruning = setInterval(prune, PRUNE_EVERY_MS);
    pruning.unref();
    const app = createDashboardApp({
      db,
      accounts,
      webhooks: new WebhooksClient(bus),
      calendars: new CalendarsClient(bus),
      mailer,
      logger,
      dashboardUrl: config.DASHBOARD_URL,
      signUp: config.DASHBOARD_SIGNUP,
      sessions,
      signInLimits: DEFAULT_SIGN_IN_LIMITS,
      trustProxy: config.TRUST_PROXY,
    });
    return {
      http: { handler: app, port: config.DASHBOARD_PORT, mountPath: "/dashboard" },
      stop: async () => {
        clearInterval(pruning);
        await served.stop();
        await requestLog.stop();
        mailer.close();
      },
    };
  },
});
