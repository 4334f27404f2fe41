import type express from "express";
import type { Response } from "express";
import { parseNewEndpoint } from "../../../domain/forms.js";
import { formText, type DashboardContext } from "../app.js";
import { BASE } from "../pages/layout.js";
import { endpointPage, endpointsPage, type EndpointsView, type EndpointView } from "../pages/webhooks.js";
import { refusalOf } from "./refusals.js";

/** Deliveries an endpoint's page shows, newest first. */
const RECENT_DELIVERIES = 20;

const NOTICES: Record<string, string> = {
  resent: "The event is queued to be sent again.",
  "resent-none": "Nothing was queued: no enabled endpoint takes this event's type now.", enabled: "Enabled: deliveries resume.", disabled: "Disabled: nothing is sent until you enable it again." };

/** Webhook endpoints of the mode shown: list, add (the secret shown once), enable or disable, roll the secret, delete, deliveries and resend. */
export function webhookRoutes(router: express.Router, ctx: DashboardContext): void {
  const showList = async (res: Response, status: number, extra: Omit<EndpointsView, "endpoints">) => {
    const { user, viewer } = ctx.signedIn(res);
    ctx.send(res, status, endpointsPage(viewer, { endpoints: await ctx.webhooks.list(user, viewer.mode), ...extra }));
  };

  const showEndpoint = async (res: Response, id: string, extra: Pick<EndpointView, "rolled" | "notice">) => {
    const { user, viewer } = ctx.signedIn(res);
    const endpoint = await ctx.webhooks.get(user, viewer.mode, id);
    const deliveries = await ctx.webhooks.deliveries(user, viewer.mode, id, RECENT_DELIVERIES);
    ctx.send(res, 200, endpointPage(viewer, { endpoint, deliveries: deliveries.data, hasMore: deliveries.hasMore, ...extra }));
  };

  router.get("/webhooks", (_req, res) => showList(res, 200, {}));

  router.post("/webhooks", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const body = req.body as Record<string, unknown>;
    const typed = { url: formText(req, "url") ?? "", description: formText(req, "description") ?? "", events: ([] as unknown[]).concat(body.events ?? []).filter((e): e is string => typeof e === "string") };
    const parsed = parseNewEndpoint(body);
    if (!parsed.ok) return showList(res, 400, { error: parsed.message, form: typed });
    const created = await refusalOf(() => ctx.webhooks.create(user, viewer.mode, parsed.value));
    if (!created.ok) return showList(res, created.status, { error: created.message, form: typed });
    // Answered here rather than after a redirect: the secret must never be kept anywhere to show it later.
    return showList(res, 200, { created: { url: created.value.url, secret: created.value.secret } });
  });

  router.get("/webhooks/:id", (req, res) => showEndpoint(res, String(req.params.id), { ...(typeof req.query.done === "string" && NOTICES[req.query.done] ? { notice: NOTICES[req.query.done] } : {}) }));

  for (const [action, enabled] of [["enable", true], ["disable", false]] as const) {
    router.post(`/webhooks/:id/${action}`, async (req, res) => {
      const { user, viewer } = ctx.signedIn(res);
      const endpoint = await ctx.webhooks.setEnabled(user, viewer.mode, String(req.params.id), enabled);
      return res.redirect(303, `${BASE}/webhooks/${endpoint.id}?done=${action}d`);
    });
  }

  router.post("/webhooks/:id/roll-secret", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    const id = String(req.params.id);
    const rolled = await ctx.webhooks.rollSecret(user, viewer.mode, id);
    return showEndpoint(res, id, { rolled });
  });

  router.post("/webhooks/:id/delete", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    await ctx.webhooks.remove(user, viewer.mode, String(req.params.id));
    return res.redirect(303, `${BASE}/webhooks`);
  });

  router.post("/webhooks/:id/resend", async (req, res) => {
    const { user, viewer } = ctx.signedIn(res);
    // The endpoint is looked up first: another user's (or a made-up) one is a 404 before anything is sent.
    const endpoint = await ctx.webhooks.get(user, viewer.mode, String(req.params.id));
    const queued = await ctx.webhooks.resend(user, viewer.mode, formText(req, "eventId") ?? "");
    return res.redirect(303, `${BASE}/webhooks/${endpoint.id}?done=${queued > 0 ? "resent" : "resent-none"}`);
  });
}
