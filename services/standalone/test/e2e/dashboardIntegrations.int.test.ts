import { eventually } from "@sched/testing";
import { FakeMicrosoft } from "@sched/testing/microsoft";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium, seriousViolations, signInWithLink } from "../browser.js";
import { Radicale, radicaleInstalled } from "@sched/testing/radicale";
import { WebhookReceiver } from "../fakes/webhookReceiver.js";
import { ADMIN_TOKEN, call, createUserWithKey, systemPerSuite, WIRINGS } from "../harness.js";
import { startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const PASSWORD = "app-password-1";
/** Retries within a test's patience: an endpoint that never answers 2xx is disabled after about 6 s. */
const FAST_RETRIES = { WEBHOOKS_RETRY_BASE_MS: "200", WEBHOOKS_RETRY_MAX_DELAY_MS: "1000", WEBHOOKS_RETRY_WINDOW_MS: "6000", WEBHOOKS_POLL_MS: "100" };
/** Deliveries and retries on a loaded machine. */
const DEADLINE_MS = 60_000;
const meetingBody = (title: string) => ({ title, duration: "30 mins", startTime: "2031-05-04T09:30:00Z", participants: ["guest@example.com"], sendInvites: false });

describe.each(WIRINGS)("the dashboard's webhook endpoints and calendar connections in a headless browser (%s)", async (wiring) => {
  let world: InvitesWorld;
  let radicale: Radicale;
  const receiver = new WebhookReceiver();
  const microsoft = new FakeMicrosoft();
  const suite = await systemPerSuite(wiring, async () => {
    radicale = new Radicale({ ann: PASSWORD });
    await radicale.start();
    await receiver.start();
    const microsoftUrl = await microsoft.start();
    world = await startInvitesWorld(
      wiring,
      { MICROSOFT_CLIENT_ID: microsoft.clientId, MICROSOFT_CLIENT_SECRET: microsoft.clientSecret, MICROSOFT_AUTHORITY: `${microsoftUrl}/common`, MICROSOFT_GRAPH_URL: microsoftUrl },
      { webhooks: FAST_RETRIES },
    );
    return {
      ...world.sys,
      stop: async () => {
        await world.stop();
        await microsoft.stop();
        await receiver.stop();
        await radicale.stop();
      },
    };
  });
  const available = suite.available && chromiumAvailable("the dashboard") && radicaleInstalled();
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dashboard: string;
  let user: { userId: string; email: string; key: string; keyId: string };
  const violations: string[] = [];
  /** Every page's HTML after a secret was shown, to check it never comes back. */
  const seenAfterwards: string[] = [];
  const secrets: string[] = [];

  const check = async () => violations.push(...(await seriousViolations(page)));
  const mainText = () => page.locator("main").innerText();
  const csrfToken = async () => (await page.locator('input[name="_csrf"]').first().getAttribute("value"))!;
  /** The page's main text once reloaded until `wanted` holds. */
  const reloadUntil = (url: string, wanted: (text: string) => boolean) =>
    eventually(
      async () => {
        await page.goto(url);
        const text = await mainText();
        return wanted(text) ? text : undefined;
      },
      DEADLINE_MS,
      250,
    );
  const addEndpoint = async (url: string) => {
    await page.goto(`${dashboard}/webhooks`);
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.locator("#new-secret").textContent())!.trim();
    const detail = page.getByRole("link", { name: `Deliveries and settings of ${url}` });
    const id = (await detail.getAttribute("href"))!.split("/").at(-1)!;
    return { id, secret };
  };

  beforeAll(async () => {
    if (!available) return;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    dashboard = suite.sys.system.dashboardUrl;
    user = await createUserWithKey(suite.url, { name: "Wendy Webhooks" });
    const link = await call(suite.url, "POST", `/admin/v1/users/${user.userId}/sign-in-links`, { headers: admin });
    await signInWithLink(page, (link.body as { url: string }).url);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it.runIf(available)("adds a test endpoint whose secret is shown once, and lists the deliveries of a meeting made with a test key", async () => {
    await page.goto(`${dashboard}/webhooks`);
    await expect(mainText()).resolves.toContain("No test endpoints yet.");
    await check();
    const url = receiver.url(`/dash-${wiring}`);
    const { id, secret } = await addEndpoint(url);
    expect(secret).toMatch(/^whsec_/);
    secrets.push(secret);
    await expect(page.getByRole("button", { name: "Copy secret" }).isVisible()).resolves.toBe(true);
    await check();
    const row = page.getByRole("row").filter({ hasText: url });
    await expect(row.innerText()).resolves.toContain("Enabled");
    await expect(row.innerText()).resolves.toContain("Every event type");

    const meeting = await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Dashboard webhooks") });
    expect(meeting.status).toBe(201);
    const [received] = await eventually(() => receiver.at(`/dash-${wiring}`).length > 0 && receiver.at(`/dash-${wiring}`), DEADLINE_MS, 100);
    const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(received!.headers[h])]));
    const event = new Webhook(secret).verify(received!.body, headers) as { id: string; type: string };
    expect(event.type).toBe("meeting.created");

    const detail = await reloadUntil(`${dashboard}/webhooks/${id}`, (text) => text.includes(event.id) && text.includes("Delivered"));
    expect(detail).toContain("meeting.created");
    const attempts = page.getByRole("table", { name: `Attempts to deliver ${event.id}` });
    // Time, response code, error, duration.
    expect((await attempts.locator("tbody td").allInnerTexts())[1]).toBe("200");
    await check();
    seenAfterwards.push(await page.content());

    await page.getByRole("button", { name: `Resend meeting.created ${event.id}` }).click();
    await page.waitForURL(/\?done=resent$/);
    await expect(page.getByRole("status").filter({ hasText: "queued to be sent again" }).count()).resolves.toBe(1);
    await eventually(() => receiver.at(`/dash-${wiring}`).filter((r) => r.headers["webhook-id"] === event.id).length === 2, DEADLINE_MS, 100);
  });

  it.runIf(available)("rolls the secret, shown once, which then signs the deliveries", async () => {
    await page.goto(`${dashboard}/webhooks`);
    await page.getByRole("link", { name: /^Deliveries and settings of .*\/dash-/ }).click();
    await page.getByRole("button", { name: "Roll secret" }).click();
    const rolled = (await page.locator("#new-secret").textContent())!.trim();
    expect(rolled).toMatch(/^whsec_/);
    expect(rolled).not.toBe(secrets[0]);
    secrets.push(rolled);
    await check();
    await page.reload();
    seenAfterwards.push(await page.content());
    await page.goto(`${dashboard}/webhooks`);
    seenAfterwards.push(await page.content());
    for (const html of seenAfterwards) for (const secret of secrets) expect(html).not.toContain(secret);
  });

  it.runIf(available)("shows an endpoint disabled after its deliveries failed for the whole retry window, and enables it again", { timeout: 120_000 }, async () => {
    const url = receiver.url(`/down-${wiring}`, Array<number>(500).fill(503));
    const { id } = await addEndpoint(url);
    await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Never received") });
    const detail = await reloadUntil(`${dashboard}/webhooks/${id}`, (text) => text.includes("Disabled: no events are sent here"));
    expect(detail).toContain("Deliveries to it failed for the whole retry window");
    expect(detail).toContain("Failed");
    expect(detail).toContain("503");
    await check();
    await page.goto(`${dashboard}/webhooks`);
    await expect(page.getByRole("row").filter({ hasText: url }).innerText()).resolves.toContain("Disabled");

    await page.getByRole("link", { name: `Deliveries and settings of ${url}` }).click();
    await page.getByRole("button", { name: "Enable endpoint" }).click();
    await page.waitForURL(/\?done=enabled$/);
    await expect(page.getByRole("heading", { name: /Disabled/ }).count()).resolves.toBe(0);
    const api = await call(suite.url, "GET", `/v1/webhook-endpoints/${id}`, { key: user.key });
    expect(api.body.enabled).toBe(true);

    await page.getByRole("button", { name: "Delete endpoint" }).click();
    await page.waitForURL(/\/webhooks$/);
    expect(await mainText()).not.toContain(url);
    expect((await call(suite.url, "GET", `/v1/webhook-endpoints/${id}`, { key: user.key })).status).toBe(404);
  });

  it.runIf(available)("keeps test and live endpoints apart, refuses a form without its CSRF token, and never shows another user's endpoint: 404", async () => {
    await page.goto(`${dashboard}/webhooks`);
    await page.getByRole("button", { name: /switch to live/ }).click();
    await page.waitForURL(/\/webhooks$/);
    await expect(mainText()).resolves.toContain("No live endpoints yet.");
    await page.getByLabel("Endpoint URL").fill("http://example.com/plain");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByRole("alert").innerText()).resolves.toMatch(/https/);
    await expect(page.getByLabel("Endpoint URL").inputValue()).resolves.toBe("http://example.com/plain");
    await check();
    await page.getByRole("button", { name: /switch to test/ }).click();

    const forged = await page.request.post(`${dashboard}/webhooks`, { form: { url: receiver.url("/forged"), events: "*" }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);

    const other = await createUserWithKey(suite.url);
    const theirs = await call(suite.url, "POST", "/v1/webhook-endpoints", { key: other.key, body: { url: receiver.url("/theirs") } });
    expect(theirs.status).toBe(201);
    expect((await page.goto(`${dashboard}/webhooks/${theirs.body.id}`))!.status()).toBe(404);
    await page.goto(`${dashboard}/webhooks`);
    const token = await csrfToken();
    for (const action of ["delete", "disable", "roll-secret"]) {
      const res = await page.request.post(`${dashboard}/webhooks/${theirs.body.id}/${action}`, { form: { _csrf: token }, maxRedirects: 0 });
      expect(res.status()).toBe(404);
    }
    const still = await call(suite.url, "GET", `/v1/webhook-endpoints/${theirs.body.id}`, { key: other.key });
    expect(still.body.enabled).toBe(true);
    expect(await mainText()).not.toContain("/theirs");
  });

  it.runIf(available)("connects CalDAV: a wrong password is refused with the server's reason, the right one connects; busy calendars, default and disconnect", async () => {
    const own = await radicale.client("ann");
    await own.makeCalendar({ url: `${radicale.url}ann/work/`, props: { displayname: "Work" } });
    await own.makeCalendar({ url: `${radicale.url}ann/home/`, props: { displayname: "Home" } });

    await page.goto(`${dashboard}/calendars`);
    await expect(mainText()).resolves.toContain("No calendar connected");
    await check();
    await page.getByLabel("Server URL").fill(radicale.url);
    await page.getByLabel("User name").fill("ann");
    await page.getByLabel("App password").fill("not-it");
    await page.getByRole("button", { name: "Connect CalDAV calendar" }).click();
    await expect(page.getByRole("alert").innerText()).resolves.toMatch(/refused the username or password/);
    await expect(page.getByLabel("User name").inputValue()).resolves.toBe("ann");
    await expect(page.getByLabel("App password").inputValue()).resolves.toBe("");
    await check();
    expect(await page.content()).not.toContain("not-it");

    await page.getByLabel("App password").fill(PASSWORD);
    await page.getByRole("button", { name: "Connect CalDAV calendar" }).click();
    await page.waitForURL(/\/calendars\?done=connected$/);
    const row = page.getByRole("row").filter({ hasText: radicale.url });
    await expect(row.innerText()).resolves.toContain("Active");
    expect(await page.content()).not.toContain(PASSWORD);
    await check();

    await page.getByRole("link", { name: `Busy calendars of CalDAV ${radicale.url}` }).click();
    await expect(page.getByLabel("Work").isChecked()).resolves.toBe(true);
    await expect(page.getByLabel("Home").isChecked()).resolves.toBe(true);
    await check();
    await page.getByLabel("Home").uncheck();
    await page.getByRole("button", { name: "Save busy calendars" }).click();
    await page.waitForURL(/\?saved=1$/);
    await expect(page.getByLabel("Home").isChecked()).resolves.toBe(false);
    await expect(page.getByLabel("Work").isChecked()).resolves.toBe(true);

    await page.goto(`${dashboard}/calendars`);
    await page.getByRole("button", { name: `Make default: CalDAV ${radicale.url}` }).click();
    await page.waitForURL(/\?done=default$/);
    await expect(page.getByRole("row").filter({ hasText: radicale.url }).innerText()).resolves.toContain("Default");

    await page.getByRole("button", { name: `Disconnect CalDAV ${radicale.url}` }).click();
    await page.waitForURL(/\?done=disconnected$/);
    await expect(mainText()).resolves.toContain("No calendar connected");
  });

  it.runIf(available)("connects Google through its consent page, shows a connection that needs reconnecting, and never another user's: 404", async () => {
    await page.goto(`${dashboard}/calendars`);
    await page.getByRole("button", { name: "Connect Google Calendar" }).click();
    await page.waitForURL(/\/o\/oauth2\/v2\/auth\?/);
    const state = new URL(page.url()).searchParams.get("state")!;
    // As Google would after consent: back to the API's callback, with a code.
    const code = world.google.issueCode("wendy@gmail.com");
    const back = await page.goto(`${suite.url}/v1/calendar-connections/google/callback?state=${state}&code=${encodeURIComponent(code)}`);
    expect(back!.status()).toBe(200);
    // The callback sent the browser on (303) to the dashboard's calendars page, with the outcome only.
    const callbackAnswer = await back!.request().redirectedFrom()!.response();
    expect(callbackAnswer!.status()).toBe(303);
    expect(callbackAnswer!.headers().location).toBe(`${dashboard}/calendars?consent=connected&provider=google`);
    expect(page.url()).toBe(`${dashboard}/calendars?consent=connected&provider=google`);
    await expect(page.getByRole("main").getByRole("status").innerText()).resolves.toBe("Google Calendar connected.");
    const row = page.getByRole("row").filter({ hasText: "wendy@gmail.com" });
    await expect(row.innerText()).resolves.toContain("Google Calendar");
    await expect(row.innerText()).resolves.toContain("Active");

    // The grant stops working at Google; the invites service marks the connection, and the page says what to do.
    const marked = await suite.sys.system.database("invites")("calendar_connections").where({ account_email: "wendy@gmail.com" }).update({ status: "broken" });
    expect(marked).toBe(1);
    await page.reload();
    await expect(page.getByRole("row").filter({ hasText: "wendy@gmail.com" }).innerText()).resolves.toContain("Needs reconnecting");
    await check();

    const other = await createUserWithKey(suite.url, { mode: "live" });
    const theirs = await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: other.key, body: { serverUrl: radicale.url, username: "ann", password: PASSWORD } });
    expect(theirs.status).toBe(201);
    expect((await page.goto(`${dashboard}/calendars/${theirs.body.id}`))!.status()).toBe(404);
    await page.goto(`${dashboard}/calendars`);
    const token = await csrfToken();
    for (const action of ["disconnect", "default"]) {
      const res = await page.request.post(`${dashboard}/calendars/${theirs.body.id}/${action}`, { form: { _csrf: token }, maxRedirects: 0 });
      expect(res.status()).toBe(404);
    }
    const busy = await page.request.post(`${dashboard}/calendars/${theirs.body.id}`, { form: { _csrf: token, busy: `${radicale.url}ann/work/` }, maxRedirects: 0 });
    expect(busy.status()).toBe(404);
    const still = await call(suite.url, "GET", "/v1/calendar-connections", { key: other.key });
    expect(still.body.data).toMatchObject([{ id: theirs.body.id, default: false, busyCalendars: null }]);
    expect(await mainText()).not.toContain(theirs.body.id);
  });

  it.runIf(available)("comes back from a consent refused at Google, or with a code Google does not accept, to the calendars page saying so, with nothing connected", async () => {
    const consentState = async () => {
      await page.goto(`${dashboard}/calendars`);
      await page.getByRole("button", { name: "Connect Google Calendar", exact: true }).click();
      await page.waitForURL(/\/o\/oauth2\/v2\/auth\?/);
      return new URL(page.url()).searchParams.get("state")!;
    };
    const before = (await call(suite.url, "GET", "/v1/calendar-connections", { key: user.key })).body.data;

    // As Google does when the person clicks Cancel on its consent screen.
    await page.goto(`${suite.url}/v1/calendar-connections/google/callback?state=${await consentState()}&error=access_denied`);
    expect(page.url()).toBe(`${dashboard}/calendars?consent=refused&provider=google`);
    await expect(page.getByRole("main").getByRole("status").innerText()).resolves.toBe("Google Calendar was not connected: access was not granted on the consent screen.");
    await check();

    await page.goto(`${suite.url}/v1/calendar-connections/google/callback?state=${await consentState()}&code=4%2Fnever-issued`);
    expect(page.url()).toBe(`${dashboard}/calendars?consent=error&provider=google`);
    await expect(page.getByRole("main").getByRole("status").innerText()).resolves.toBe("Google Calendar could not be connected. Please try again.");

    expect((await call(suite.url, "GET", "/v1/calendar-connections", { key: user.key })).body.data).toEqual(before);
    // A state used up or never issued cannot say where it started: the API's own answer, not a redirect to anywhere.
    const unknown = await page.goto(`${suite.url}/v1/calendar-connections/google/callback?state=made-up&error=access_denied`);
    expect(unknown!.status()).toBe(400);
    expect(page.url()).toContain("/v1/calendar-connections/google/callback");
  });

  it.runIf(available)("connects Microsoft through its consent page and comes back to the calendars page with the new connection", async () => {
    await page.goto(`${dashboard}/calendars`);
    await page.getByRole("button", { name: "Connect Microsoft 365 / Outlook.com", exact: true }).click();
    await page.waitForURL(/\/common\/oauth2\/v2\.0\/authorize\?/);
    const consent = new URL(page.url());
    const code = microsoft.issueCode("Wendy@Contoso.example", consent.searchParams.get("redirect_uri")!);
    await page.goto(`${suite.url}/v1/calendar-connections/microsoft/callback?code=${encodeURIComponent(code)}&state=${consent.searchParams.get("state")!}&session_state=abc-123`);
    expect(page.url()).toBe(`${dashboard}/calendars?consent=connected&provider=microsoft`);
    await expect(page.getByRole("main").getByRole("status").innerText()).resolves.toBe("Microsoft 365 / Outlook.com connected.");
    const row = page.getByRole("row").filter({ hasText: "wendy@contoso.example" });
    await expect(row.innerText()).resolves.toContain("Microsoft 365 / Outlook.com");
    await expect(row.innerText()).resolves.toContain("Active");
    await check();
  });

  it.runIf(available)("counts usage per UTC day: requests either side of midnight UTC on their own days, and no day the log holds only in part", async () => {
    const made = await call(suite.url, "POST", `/admin/v1/users/${user.userId}/api-keys`, { headers: admin, body: { mode: "test", name: "usage probe" } });
    expect(made.status).toBe(201);
    const now = Date.now();
    const midnight = Math.floor(now / 86_400_000) * 86_400_000;
    // The log's oldest minute lies inside a day it no longer holds whole.
    const partialDay = now - 7 * 86_400_000 + 60_000;
    const logged = (at: number, status: number, n: number) => ({
      at: new Date(at),
      request_id: `req_usage_${wiring}_${n}`,
      api_key_id: made.body.id,
      user_id: user.userId,
      mode: "test",
      method: "GET",
      path: "/v1/me",
      status,
      duration_ms: 5,
    });
    await suite.sys.system.database("dashboard")("request_log").insert([logged(midnight, 200, 1), logged(midnight - 1, 503, 2), logged(midnight - 1_000, 429, 3), logged(partialDay, 200, 4)]);

    await page.goto(`${dashboard}/usage`);
    const probeRows = page.getByRole("row").filter({ hasText: "usage probe" });
    const rows: string[][] = [];
    for (let i = 0; i < (await probeRows.count()); i++) rows.push(await probeRows.nth(i).locator("td").allInnerTexts());
    const day = (at: number) => new Date(at).toISOString().slice(0, 10);
    // Day, key, requests, 4xx (429 included), 429, 5xx.
    expect(rows).toEqual([
      [day(midnight), "usage probe", "1", "0", "0", "0"],
      [day(midnight - 1), "usage probe", "2", "1", "1", "1"],
    ]);
    expect(rows.map((r) => r[0])).not.toContain(day(partialDay));
    await check();
  });

  it.runIf(available)("has no serious or critical accessibility violations on the new pages", () => {
    expect(violations).toEqual([]);
  });
});
