import type express from "express";
import type { Request, Response } from "express";
import { ConsentOutcome } from "@sched/proto";
import { consentNotice, type Notice } from "../../../domain/consentNotice.js";
import { parseBusyCalendars, parseCalDavAccount } from "../../../domain/forms.js";
import { OAUTH_PROVIDERS } from "../../../outbound/calendars.js";
import { formText, type DashboardContext } from "../app.js";
import { busyCalendarsPage, connectionsPage, consentPage, type ConnectionsView } from "../pages/calendars.js";
import { BASE } from "../pages/layout.js";
import { refusalOf } from "./refusals.js";

const NOTICES: Record<string, string> = { connected: "Connected.", disconnected: "Disconnected: invites from it go by e-mail now.", default: "Invites now go through this connection." };

/** What the page says on arrival: after one of its own forms (`done`), or back from a provider's consent (`consent`, `provider`). */
function arrivalNotice(query: Request["query"]): Notice | undefined {
  if (typeof query.done === "string" && NOTICES[query.done]) return { text: NOTICES[query.done]!, failed: false };
  const outcome = ConsentOutcome.safeParse(query.consent);
  const provider = OAUTH_PROVIDERS.find((p) => p.provider === query.provider);
  return outcome.success && provider ? consentNotice(outcome.data, provider.label) : undefined;
}

/** Calendar connections: list, connect by consent or CalDAV, disconnect, the default one and the busy calendars. */
export function calendarRoutes(router: express.Router, ctx: DashboardContext): void {
  const showList = async (res: Response, status: number, extra: Omit<ConnectionsView, "connections" | "oauthProviders">) => {
    const { user, viewer } = ctx.signedIn(res);
    ctx.send(res, status, connectionsPage(viewer, { connections: await ctx.calendars.list(user), oauthProviders: OAUTH_PROVIDERS, ...extra }));
  };

  router.get("/calendars", (req, res) => {
    const notice = arrivalNotice(req.query);
    return showList(res, 200, notice ? { notice } : {});
  });

  router.post("/calendars/connect/:provider", async (req, res) => {
    const provider = OAUTH_PROVIDERS.find((p) => p.provider === req.params.provider);
    if (!provider) return showList(res, 404, { error: { form: "oauth", message: "There is no such calendar provider." } });
    // Not configured on this server is a 503 whose words say so: shown on the page, not as an outage.
    const started = await refusalOf(() => ctx.calendars.startConsent(ctx.signedIn(res).user, provider), ["service_unavailable"]);
    if (!started.ok) return showList(res, started.status, { error: { form: "oauth", message: started.message } });
    return ctx.send(res, 200, consentPage(ctx.signedIn(res).viewer, { label: provider.label, authorizationUrl: started.value }));
  });

  router.post("/calendars/caldav", async (req, res) => {
    const typed = { serverUrl: formText(req, "serverUrl") ?? "", username: formText(req, "username") ?? "" };
    const parsed = parseCalDavAccount(req.body as Record<string, unknown>);
    if (!parsed.ok) return showList(res, 400, { error: { form: "caldav", message: parsed.message }, caldav: typed });
    const connected = await refusalOf(() => ctx.calendars.connectCalDav(ctx.signedIn(res).user, parsed.value));
    if (!connected.ok) return showList(res, connected.status, { error: { form: "caldav", message: connected.message }, caldav: typed });
    return res.redirect(303, `${BASE}/calendars?done=connected`);
  });

  router.post("/calendars/:id/disconnect", async (req, res) => {
    await ctx.calendars.remove(ctx.signedIn(res).user, String(req.params.id));
    return res.redirect(303, `${BASE}/calendars?done=disconnected`);
  });

  router.post("/calendars/:id/default", async (req, res) => {
    await ctx.calendars.makeDefault(ctx.signedIn(res).user, String(req.params.id));
    return res.redirect(303, `${BASE}/calendars?done=default`);
  });

  router.get("/calendars/:id", async (req, res, next) => {
    const { user, viewer } = ctx.signedIn(res);
    // The list is the one way to read a single connection; another user's is not in it, so it is a 404.
    const connection = (await ctx.calendars.list(user)).find((c) => c.id === req.params.id);
    if (!connection) return next();
    const calendars = await ctx.calendars.calendars(user, connection.id);
    ctx.send(res, 200, busyCalendarsPage(viewer, { connection, calendars, ...(req.query.saved === "1" ? { saved: true } : {}) }));
  });

  router.post("/calendars/:id", async (req, res) => {
    const updated = await ctx.calendars.setBusyCalendars(ctx.signedIn(res).user, String(req.params.id), parseBusyCalendars(req.body as Record<string, unknown>));
    return res.redirect(303, `${BASE}/calendars/${updated.id}?saved=1`);
  });
}
