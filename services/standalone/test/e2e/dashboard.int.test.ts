import { eventually } from "@sched/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable, createKeyInPage, launchChromium, seriousViolations, signInWithLink } from "../browser.js";
import { ADMIN_TOKEN, call, createUserWithKey, systemPerSuite, WIRINGS } from "../harness.js";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
/** Long enough for a batch of the request log to reach the dashboard on a loaded machine. */
const LOG_DEADLINE_MS = 30_000;

/** The page's text once reloaded until `wanted` is in it. */
async function reloadUntil(page: Page, url: string, wanted: string): Promise<string> {
  return eventually(
    async () => {
      await page.goto(url);
      const text = await page.locator("main").innerText();
      return text.includes(wanted) ? text : undefined;
    },
    LOG_DEADLINE_MS,
    200,
  );
}

describe.each(WIRINGS)("the dashboard in a headless browser (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const available = suite.available && chromiumAvailable("the dashboard");
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dashboard: string;
  const violations: string[] = [];
  /** Every dashboard page's HTML after the key was shown, and the API answers, to check the key never comes back. */
  const seenAfterCreation: string[] = [];
  let user: { id: string; email: string };
  let key: string;
  let keyId: string;
  const requestIds: string[] = [];

  const check = async () => violations.push(...(await seriousViolations(page)));
  const linkFor = async (userId: string) => {
    const res = await call(suite.url, "POST", `/admin/v1/users/${userId}/sign-in-links`, { headers: admin });
    expect(res.status).toBe(201);
    return res.body as { url: string; expiresAt: string };
  };
  const csrfToken = async () => (await page.locator('input[name="_csrf"]').first().getAttribute("value"))!;

  beforeAll(async () => {
    if (!available) return;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    dashboard = suite.sys.system.dashboardUrl;
    const created = await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email: `dash-${Date.now()}@example.com`, name: "Dana Dashboard" } });
    user = created.body as { id: string; email: string };
  });
  afterAll(async () => {
    await browser?.close();
  });

  it.runIf(suite.available)("is named in the API's index where the API serves its pages (standalone), not where it has an origin of its own", async () => {
    const index = await call(suite.url, "GET", "/");
    expect(index.status).toBe(200);
    expect(index.body.dashboard).toBe(wiring === "standalone" ? "/dashboard" : undefined);
  });

  it.runIf(available)("signs in with an operator's link: one button, a rotated session cookie that scripts cannot read", async () => {
    const link = await linkFor(user.id);
    expect(link.url.startsWith(`${dashboard}/sign-in?token=sil_`)).toBe(true);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    await page.goto(`${dashboard}/sign-in`);
    await check();
    await page.goto(link.url);
    await expect(page.locator("main").innerText()).resolves.toContain(user.email);
    await check();
    const response = await page.request.get(link.url);
    expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(response.headers()["content-security-policy"]).toMatch(/script-src 'self'(;|$)/);
    await signInWithLink(page, link.url);
    const session = (await context.cookies()).find((c) => c.name === "sched_session")!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/dashboard" });
    await check();

    // A second sign-in replaces the session: the old cookie no longer opens anything.
    const second = await linkFor(user.id);
    await signInWithLink(page, second.url);
    const rotated = (await context.cookies()).find((c) => c.name === "sched_session")!;
    expect(rotated.value).not.toBe(session.value);
    const stale = await fetch(`${dashboard}/keys`, { headers: { Cookie: `sched_session=${session.value}` }, redirect: "manual" });
    expect(stale.status).toBe(303);
  });

  it.runIf(available)("refuses a used link and an expired one", async () => {
    const used = await linkFor(user.id);
    const fresh = await browser.newContext();
    const other = await fresh.newPage();
    await signInWithLink(other, used.url);
    await other.goto(used.url);
    expect(await other.locator("h1").innerText()).toBe("This sign-in link does not work");
    violations.push(...(await seriousViolations(other)));
    await fresh.close();

    const expired = await linkFor(user.id);
    // Fifteen minutes pass for every unused link of the user: only their expiry changes.
    await suite.sys.system.database("dashboard")("sign_in_links").where({ user_id: user.id }).whereNull("used_at").update({ expires_at: new Date(Date.now() - 1000) });
    const res = await fetch(expired.url);
    expect(res.status).toBe(400);
  });

  it.runIf(available)("creates a test key, shown once with a copy button, that works at once against /v1", async () => {
    await page.goto(`${dashboard}/keys`);
    key = await createKeyInPage(page, "e2e key");
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);
    await expect(page.getByRole("button", { name: "Copy key" }).isVisible()).resolves.toBe(true);
    await check();

    const me = await call(suite.url, "GET", "/v1/me", { key });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(user.email);
    requestIds.push(me.headers.get("x-request-id")!);
    const missing = await call(suite.url, "GET", "/v1/meetings/mtg_000000000000000000000000", { key });
    expect(missing.status).toBe(404);
    requestIds.push(missing.headers.get("x-request-id")!);
    seenAfterCreation.push(JSON.stringify(me.body), JSON.stringify(missing.body));

    await page.goto(`${dashboard}/keys`);
    const row = page.getByRole("row").filter({ hasText: "e2e key" });
    await expect(row.innerText()).resolves.toContain(`sk_test_…${key.slice(-4)}`);
    keyId = (await row.locator("form").getAttribute("action"))!.split("/").at(-2)!;
    seenAfterCreation.push(await page.content());
  });

  it.runIf(available)("shows the calls just made in the request log, with their request ids, and counts them in the usage", async () => {
    const log = await reloadUntil(page, `${dashboard}/requests`, requestIds[1]!);
    expect(log).toContain(requestIds[0]);
    expect(log).toContain("/v1/meetings/:id");
    await check();
    seenAfterCreation.push(await page.content());

    await page.getByRole("link", { name: requestIds[0] }).click();
    await page.waitForURL(new RegExp(`/requests/${requestIds[0]}$`));
    const line = await page.locator("tbody").innerText();
    expect(line).toContain("/v1/me");
    expect(line).toContain("200");
    await check();

    await page.goto(`${dashboard}/requests?status=4xx`);
    const clientErrors = await page.locator("main").innerText();
    expect(clientErrors).toContain(requestIds[1]);
    expect(clientErrors).not.toContain(requestIds[0]);

    await page.goto(`${dashboard}/usage`);
    const usage = page.getByRole("row").filter({ hasText: "e2e key" });
    // Day, key, requests, 4xx, 429, 5xx.
    expect((await usage.locator("td").allInnerTexts()).slice(1)).toEqual(["e2e key", "2", "1", "0", "0"]);
    await check();
    seenAfterCreation.push(await page.content());
  });

  it.runIf(available)("edits the time zone, which the API then uses", async () => {
    await page.goto(`${dashboard}/profile`);
    await check();
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    await page.getByRole("button", { name: "Save profile" }).click();
    await page.waitForURL(/\/profile\?saved=1$/);
    await expect(page.getByRole("status").filter({ hasText: "Saved." }).count()).resolves.toBe(1);
    const me = await call(suite.url, "GET", "/v1/me", { key });
    expect(me.body.timezone).toBe("Europe/Berlin");
    seenAfterCreation.push(await page.content(), JSON.stringify(me.body));

    await page.getByLabel("Time zone").fill("Mars/Olympus");
    await page.getByRole("button", { name: "Save profile" }).click();
    await expect(page.getByRole("alert").innerText()).resolves.toMatch(/time zone/i);
    await check();
  });

  it.runIf(available)("refuses a state-changing request without the CSRF token, or with a wrong one", async () => {
    const before = (await call(suite.url, "GET", "/v1/me", { key })).status;
    expect(before).toBe(200);
    for (const form of [{ name: "forged" }, { name: "forged", _csrf: "csrf_wrong" }] as Array<Record<string, string>>) {
      const res = await page.request.post(`${dashboard}/keys`, { form, maxRedirects: 0 });
      expect(res.status()).toBe(403);
    }
    const revoke = await page.request.post(`${dashboard}/keys/${keyId}/revoke`, { form: {}, maxRedirects: 0 });
    expect(revoke.status()).toBe(403);
    await page.goto(`${dashboard}/keys`);
    expect(await page.getByRole("row").filter({ hasText: "forged" }).count()).toBe(0);
    expect((await call(suite.url, "GET", "/v1/me", { key })).status).toBe(200);
  });

  it.runIf(available)("never shows another user's keys or requests: 404", async () => {
    const other = await createUserWithKey(suite.url);
    const theirs = await call(suite.url, "GET", "/v1/me", { key: other.key });
    const theirRequest = theirs.headers.get("x-request-id")!;
    await page.goto(`${dashboard}/keys`);
    const token = await csrfToken();
    const revoke = await page.request.post(`${dashboard}/keys/${other.keyId}/revoke`, { form: { _csrf: token }, maxRedirects: 0 });
    expect(revoke.status()).toBe(404);
    expect((await call(suite.url, "GET", "/v1/me", { key: other.key })).status).toBe(200);
    // Once it is surely in the log, it is still not this user's to see.
    await eventually(async () => (await suite.sys.system.database("dashboard")("request_log").where({ request_id: theirRequest }).first()) !== undefined, LOG_DEADLINE_MS, 200);
    const response = await page.goto(`${dashboard}/requests/${theirRequest}`);
    expect(response!.status()).toBe(404);
    await page.goto(`${dashboard}/requests`);
    expect(await page.locator("main").innerText()).not.toContain(theirRequest);
  });

  it.runIf(available)("switches to live data and back", async () => {
    await page.goto(`${dashboard}/keys`);
    await page.getByRole("button", { name: /switch to live/ }).click();
    await page.waitForURL(/\/keys$/);
    const live = await page.locator("main").innerText();
    expect(live).toContain("No live keys yet.");
    expect(live).not.toContain("e2e key");
    await check();
    await page.goto(`${dashboard}/requests`);
    expect(await page.locator("main").innerText()).not.toContain(requestIds[0]);
    await page.getByRole("button", { name: /switch to test/ }).click();
    await page.waitForURL(/\/requests$/);
    expect(await page.locator("main").innerText()).toContain(requestIds[0]);
  });

  it.runIf(available)("revokes the key, which the API then refuses within a second; the key never appeared again", async () => {
    await page.goto(`${dashboard}/keys`);
    await page.getByRole("button", { name: "Revoke e2e key" }).click();
    await page.waitForURL(/\/keys$/);
    const revokedAt = Date.now();
    await eventually(async () => (await call(suite.url, "GET", "/v1/me", { key })).status === 401, 1_000, 25);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
    expect(await page.getByRole("row").filter({ hasText: "e2e key" }).innerText()).toContain("Revoked");
    seenAfterCreation.push(await page.content());
    for (const text of seenAfterCreation) expect(text).not.toContain(key);
  });

  it.runIf(available)("has no serious or critical accessibility violations on any page", () => {
    expect(violations).toEqual([]);
  });

  it.runIf(available)("ends the session at sign-out", async () => {
    await page.goto(`${dashboard}/keys`);
    await page.getByRole("button", { name: /Sign out/ }).click();
    await page.waitForURL(/\/sign-in$/);
    await page.goto(`${dashboard}/keys`);
    await page.waitForURL(/\/sign-in$/);
  });

  it.runIf(available)("with sign-up off, answers an unknown address as any other and makes no account", async () => {
    const email = `stranger-${Date.now()}@example.com`;
    await page.goto(`${dashboard}/sign-in`);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByRole("button", { name: "E-mail me a sign-in link" }).click();
    await expect(page.getByRole("status").innerText()).resolves.toContain("If the address may sign in here, a link is on its way.");
    const found = await call(suite.url, "GET", `/admin/v1/users?email=${encodeURIComponent(email)}`, { headers: admin });
    expect(found.body.data).toEqual([]);
  });
});
