import type { Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { Mode, UserProfile } from "@sched/proto";
import express, { type NextFunction, type Request, type Response } from "express";
import type { SignInMailer } from "../../outbound/mail.js";
import type { AccountsClient } from "../../outbound/accounts.js";
import type { CalendarsClient } from "../../outbound/calendars.js";
import type { WebhooksClient } from "../../outbound/webhooks.js";
import { countAndRecordAttempt, deleteSession, findSession, insertSession, touchSession, type StoredSession } from "../../db/queries.js";
import { parseCookies } from "../../domain/cookies.js";
import { hashSecret, newSecret, secretsMatch } from "../../domain/secrets.js";
import { needsTouch, sessionCookieOptions, sessionExpired, type SessionPolicy } from "../../domain/sessions.js";
import { signInAllowed, type SignInLimits } from "../../domain/signIn.js";
import type { SafeHtml } from "./html.js";
import { BASE, type Viewer } from "./pages/layout.js";
import { refusedPage } from "./pages/signIn.js";
import { accountRoutes } from "./routes/account.js";
import { calendarRoutes } from "./routes/calendars.js";
import { signInRoutes } from "./routes/signIn.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { securityHeaders, serveAssets } from "./security.js";

export interface DashboardHttpDeps {
  db: Knex;
  accounts: AccountsClient;
  webhooks: WebhooksClient;
  calendars: CalendarsClient;
  mailer: SignInMailer;
  logger: Logger;
  /** The dashboard's public address, `/dashboard` included: links point there, and https there makes cookies Secure. */
  dashboardUrl: string;
  signUp: boolean;
  sessions: SessionPolicy;
  signInLimits: SignInLimits;
  trustProxy: string;
}

const SESSION_COOKIE = "sched_session";
/** Before sign-in there is no session: the sign-in forms carry this cookie's value instead (double submit). */
const PRE_SESSION_COOKIE = "sched_presession";

/** What a signed-in request carries, once the session is checked. */
interface SignedIn {
  session: StoredSession;
  user: UserProfile;
  viewer: Viewer;
}

/** Helpers the route modules share. */
export interface DashboardContext extends DashboardHttpDeps {
  send(res: Response, status: number, page: SafeHtml): void;
  secure(req: Request): boolean;
  /** A new session for the user, replacing any the browser held (a new token at every sign-in). */
  startSession(req: Request, res: Response, userId: string): Promise<void>;
  endSession(req: Request, res: Response): Promise<void>;
  /** The pre-session token of this browser, set when it has none. */
  preSessionToken(req: Request, res: Response): string;
  checkPreSession(req: Request): void;
  /** Counts a sign-in attempt; past the allowance, a 429 page. */
  limitSignIn(req: Request, email?: string): Promise<void>;
  signedIn(res: Response): SignedIn;
  mode(res: Response): Mode;
}

class CsrfError extends Error {}
class TooManyAttempts extends Error {}

/**
 * The dashboard's pages under /dashboard: sign-in by link, keys, usage, the
 * request log, webhook endpoints, calendar connections and the profile. Server-rendered HTML; the browser holds only a
 * session cookie, and every form that changes something carries a CSRF token.
 */
export function createDashboardApp(deps: DashboardHttpDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("trust proxy", deps.trustProxy === "false" ? false : deps.trustProxy === "true" ? true : /^\d+$/.test(deps.trustProxy) ? Number(deps.trustProxy) : deps.trustProxy);
  const httpsUrl = deps.dashboardUrl.startsWith("https:");

  const ctx: DashboardContext = {
    ...deps,
    send: (res, status, page) => void res.status(status).type("html").send(page.text),
    secure: (req) => httpsUrl || req.secure,
    async startSession(req, res, userId) {
      await ctx.endSession(req, res);
      const token = newSecret("ses");
      await insertSession(deps.db, { tokenHash: hashSecret(token), userId, csrfToken: newSecret("csrf") });
      res.cookie(SESSION_COOKIE, token, sessionCookieOptions(ctx.secure(req), deps.sessions));
      res.clearCookie(PRE_SESSION_COOKIE, { path: BASE });
    },
    async endSession(req, res) {
      const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
      if (token) await deleteSession(deps.db, hashSecret(token));
      res.clearCookie(SESSION_COOKIE, { path: BASE });
    },
    preSessionToken(req, res) {
      const existing = parseCookies(req.headers.cookie).get(PRE_SESSION_COOKIE);
      if (existing && /^csrf_[0-9A-Za-z]{43}$/.test(existing)) return existing;
      const token = newSecret("csrf");
      res.cookie(PRE_SESSION_COOKIE, token, { httpOnly: true, sameSite: "lax", secure: ctx.secure(req), path: BASE, maxAge: 60 * 60_000 });
      return token;
    },
    checkPreSession(req) {
      const cookie = parseCookies(req.headers.cookie).get(PRE_SESSION_COOKIE);
      if (!cookie || !secretsMatch(formText(req, "_csrf"), cookie)) throw new CsrfError();
    },
    async limitSignIn(req, email) {
      const since = new Date(Date.now() - deps.signInLimits.windowMs);
      const counts = await countAndRecordAttempt(deps.db, { address: (req.ip ?? "unknown").slice(0, 64), ...(email ? { email } : {}) }, since);
      if (!signInAllowed(counts, deps.signInLimits)) throw new TooManyAttempts();
    },
    signedIn: (res) => res.locals.signedIn as SignedIn,
    mode: (res) => ctx.signedIn(res).session.mode,
  };

  const inner = express.Router();
  inner.use(securityHeaders);
  inner.use(express.urlencoded({ extended: false, limit: "32kb", parameterLimit: 100 }));
  inner.use((req, _res, next) => {
    req.body ??= {};
    next();
  });
  serveAssets(inner);
  signInRoutes(inner, ctx);
  inner.use(async (req, res, next) => {
    const signedIn = await loadSession(req, ctx);
    if (!signedIn) {
      if (req.method === "GET" || req.method === "HEAD") return res.redirect(303, `${BASE}/sign-in`);
      return ctx.send(res, 403, refusedPage("Signed out", "Your session has ended. Sign in again."));
    }
    if (req.method === "POST" && !secretsMatch(formText(req, "_csrf"), signedIn.session.csrfToken)) throw new CsrfError();
    res.locals.signedIn = signedIn;
    next();
  });
  accountRoutes(inner, ctx);
  webhookRoutes(inner, ctx);
  calendarRoutes(inner, ctx);
  inner.use((_req, res) => ctx.send(res, 404, refusedPage("Not found", "There is no such page, or it is not yours.")));
  inner.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof CsrfError) return ctx.send(res, 403, refusedPage("Refused", "The form was missing its security token, or it was stale. Reload the page and try again."));
    if (err instanceof TooManyAttempts) return ctx.send(res.set("Retry-After", "60"), 429, refusedPage("Too many attempts", "Too many sign-in attempts from here or for this address. Wait a few minutes and try again."));
    if (err instanceof AppError && err.code === "not_found") return ctx.send(res, 404, refusedPage("Not found", "There is no such page, or it is not yours."));
    if (err instanceof AppError && err.status === 503) return ctx.send(res.set("Retry-After", "1"), 503, refusedPage("Unavailable", "A part of the service did not answer in time. Try again in a moment."));
    if (err instanceof AppError && err.status < 500) return ctx.send(res, err.status, refusedPage("Refused", err.message));
    deps.logger.error({ err }, "dashboard request failed");
    return ctx.send(res, 500, refusedPage("Something went wrong", "The page could not be made. Try again in a moment."));
  });

  app.use(BASE, inner);
  return app;
}

/** The value of a text field of the posted form, if it is one. */
export function formText(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** The signed-in user of the request, or undefined when the session is missing, unknown, idle too long or too old. */
async function loadSession(req: Request, ctx: DashboardContext): Promise<SignedIn | undefined> {
  const token = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
  if (!token) return undefined;
  const session = await findSession(ctx.db, hashSecret(token));
  if (!session) return undefined;
  const now = new Date();
  if (sessionExpired(session, now, ctx.sessions)) {
    await deleteSession(ctx.db, session.tokenHash);
    return undefined;
  }
  if (needsTouch(session.lastSeenAt, now, ctx.sessions)) await touchSession(ctx.db, session.tokenHash);
  const user = await ctx.accounts.userById(session.userId);
  if (!user) return undefined;
  return { session, user, viewer: { name: user.name, email: user.email, mode: session.mode, csrfToken: session.csrfToken } };
}
