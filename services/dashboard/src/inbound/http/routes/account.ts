import { AppError } from "@sched/errors";
import { MODES } from "@sched/proto";
import type express from "express";
import type { Response } from "express";
import { lastUseByKey, listRequests, setSessionMode, usageByKeyAndDay } from "../../../db/queries.js";
import { parseNewKey, parseProfile } from "../../../domain/forms.js";
import { logHorizon, parseStatusFilter, statusRange, usageSince } from "../../../domain/requestLog.js";
import { formText, type DashboardContext } from "../app.js";
import { keysPage, type KeysView } from "../pages/keys.js";
import { BASE, SECTIONS } from "../pages/layout.js";
import { profilePage } from "../pages/profile.js";
import { requestPage, requestsPage, usagePage } from "../pages/requests.js";

const LOG_PAGE_SIZE = 200;
const ZONES = Intl.supportedValuesOf("timeZone");

/** The pages of a signed-in user; the gate before them checked the session and, on a POST, the CSRF token. */
export function accountRoutes(router: express.Router, ctx: DashboardContext): void {
  const keyNames = async (userId: string) => new Map((await ctx.accounts.keys(userId)).map((k) => [k.id, k.name ?? k.preview]));

  const showKeys = async (res: Response, status: number, extra: Pick<KeysView, "created" | "error">) => {
    const { user, viewer } = ctx.signedIn(res);
    const [keys, lastUse] = await Promise.all([ctx.accounts.keys(user.id), lastUseByKey(ctx.db, user.id)]);
    ctx.send(res, status, keysPage(viewer, { keys, lastUse, ...extra }));
  };

  router.get("/", (_req, res) => res.redirect(303, `${BASE}/keys`));
  router.get("/keys", (_req, res) => showKeys(res, 200, {}));

  router.post("/keys", async (req, res) => {
    const { user } = ctx.signedIn(res);
    const parsed = parseNewKey(req.body as Record<string, unknown>, ctx.mode(res));
    if (!parsed.ok) return showKeys(res, 400, { error: { field: parsed.field, message: parsed.message } });
    const created = await ctx.accounts.createKey(user.id, parsed.value);
    // Answered here rather than after a redirect: the key must never be kept anywhere to show it later.
    return showKeys(res, 200, { created: { name: parsed.value.name, key: created.key } });
  });

  router.post("/keys/:id/revoke", async (req, res) => {
    await ctx.accounts.revokeKey(ctx.signedIn(res).user.id, String(req.params.id));
    return res.redirect(303, `${BASE}/keys`);
  });

  router.post("/mode", async (req, res) => {
    const mode = MODES.find((m) => m === formText(req, "mode"));
    if (!mode) throw new AppError("invalid_request", "The mode is test or live.");
    await setSessionMode(ctx.db, ctx.signedIn(res).session.tokenHash, mode);
    const back = SECTIONS.find((s) => s.id === formText(req, "back"))?.id ?? "keys";
    return res.redirect(303, `${BASE}/${back}`);
  });

  router.get("/requests", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const filter = parseStatusFilter(req.query.status);
    const [requests, names] = await Promise.all([
      listRequests(ctx.db, { userId: user.id, mode: viewer.mode }, { since: logHorizon(new Date()), status: statusRange(filter), limit: LOG_PAGE_SIZE }),
      keyNames(user.id),
    ]);
    ctx.send(res, 200, requestsPage(viewer, { requests, filter, keyNames: names }));
  });

  router.get("/requests/:requestId", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const [request] = await listRequests(ctx.db, { userId: user.id, mode: viewer.mode }, { since: logHorizon(new Date()), requestId: String(req.params.requestId), limit: 1 });
    if (!request) throw new AppError("not_found", "No such request.");
    ctx.send(res, 200, requestPage(viewer, request, await keyNames(user.id)));
  });

  router.get("/usage", async (_req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const [usage, names] = await Promise.all([usageByKeyAndDay(ctx.db, { userId: user.id, mode: viewer.mode }, usageSince(new Date())), keyNames(user.id)]);
    ctx.send(res, 200, usagePage(viewer, { usage, keyNames: names }));
  });

  router.get("/profile", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    ctx.send(res, 200, profilePage(viewer, { profile: await ctx.accounts.profile(user), zones: ZONES, ...(req.query.saved === "1" ? { saved: true } : {}) }));
  });

  router.post("/profile", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const parsed = parseProfile(req.body as Record<string, unknown>);
    const refuse = async (message: string) => ctx.send(res, 400, profilePage(viewer, { profile: await ctx.accounts.profile(user), zones: ZONES, error: message }));
    if (!parsed.ok) return refuse(parsed.message);
    try {
      await ctx.accounts.updateProfile(user, parsed.value);
    } catch (err) {
      if (err instanceof AppError && err.code === "invalid_request") return refuse(err.message);
      throw err;
    }
    return res.redirect(303, `${BASE}/profile?saved=1`);
  });

  router.post("/sign-out", async (req, res) => {
    await ctx.endSession(req, res);
    return res.redirect(303, `${BASE}/sign-in`);
  });
}
