import { AppError } from "@sched/errors";
import { Email } from "@sched/proto";
import type express from "express";
import { consumeSignInLink, findUsableLink } from "../../../db/queries.js";
import { hashSecret } from "../../../domain/secrets.js";
import { issueSignInLink } from "../../links.js";
import { formText, type DashboardContext } from "../app.js";
import { BASE } from "../pages/layout.js";
import { confirmSignInPage, linkRefusedPage, signInPage } from "../pages/signIn.js";

const SENT = "If the address may sign in here, a link is on its way. It works once, within 15 minutes.";

/** The pages of someone not signed in: ask for a link by e-mail, and sign in with one. */
export function signInRoutes(router: express.Router, ctx: DashboardContext): void {
  router.get("/sign-in", async (req, res) => {
    const csrfToken = ctx.preSessionToken(req, res);
    const token = typeof req.query.token === "string" ? req.query.token : undefined;
    if (token === undefined) return ctx.send(res, 200, signInPage({ csrfToken, signUp: ctx.signUp }));
    await ctx.limitSignIn(req);
    const userId = await findUsableLink(ctx.db, hashSecret(token));
    const user = userId ? await ctx.accounts.userById(userId) : undefined;
    if (!user) return ctx.send(res, 400, linkRefusedPage());
    return ctx.send(res, 200, confirmSignInPage({ csrfToken, token, email: user.email }));
  });

  router.post("/sign-in/link", async (req, res) => {
    ctx.checkPreSession(req);
    await ctx.limitSignIn(req);
    const token = formText(req, "token") ?? "";
    const userId = await consumeSignInLink(ctx.db, hashSecret(token));
    if (!userId) return ctx.send(res, 400, linkRefusedPage());
    await ctx.startSession(req, res, userId);
    return res.redirect(303, `${BASE}/keys`);
  });

  router.post("/sign-in/email", async (req, res) => {
    ctx.checkPreSession(req);
    const parsed = Email.safeParse(formText(req, "email") ?? "");
    const csrfToken = ctx.preSessionToken(req, res);
    if (!parsed.success) return ctx.send(res, 400, signInPage({ csrfToken, signUp: ctx.signUp, message: "That is not an e-mail address." }));
    const email = parsed.data;
    await ctx.limitSignIn(req, email);
    let userId = await ctx.accounts.userIdByEmail(email);
    if (!userId && ctx.signUp) userId = await signUp(ctx, email);
    if (userId) {
      const link = await issueSignInLink(ctx.db, ctx.dashboardUrl, userId);
      await ctx.mailer.send(email, link.url);
    }
    // The same answer whether or not the address has an account: the page tells nobody who is a user.
    return ctx.send(res, 200, signInPage({ csrfToken, signUp: ctx.signUp, message: SENT }));
  });
}

/** A new account named after the address; one made by a racing request is as good. */
async function signUp(ctx: DashboardContext, email: string): Promise<string | undefined> {
  try {
    return await ctx.accounts.createUser(email, email.split("@")[0]!);
  } catch (err) {
    if (err instanceof AppError && err.code === "user_exists") return ctx.accounts.userIdByEmail(email);
    throw err;
  }
}
