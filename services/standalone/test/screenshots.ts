import { createLogger } from "@sched/logging";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { System } from "../src/system.js";
import { createKeyInPage, launchChromium, signInWithLink } from "./browser.js";
import { Radicale, radicaleInstalled } from "@sched/testing/radicale";
import { WebhookReceiver } from "./fakes/webhookReceiver.js";

/**
 * `npm run screenshots`: the dashboard's main pages as docs/dashboard.md shows
 * them, made against a fresh standalone system in memory with a user, a key,
 * some requests, webhook endpoints on a loopback receiver (one that always
 * fails, so it is disabled soon) and a CalDAV calendar on Radicale, so they
 * can be made again whenever the pages change.
 */
const out = fileURLToPath(new URL("../../../docs/images/", import.meta.url));
mkdirSync(out, { recursive: true });
const adminToken = "adm_screenshots_0123456789abcdef";
// Retries give up within seconds rather than days, so that the failing endpoint is shown disabled.
const webhooks = { WEBHOOKS_RETRY_BASE_MS: "200", WEBHOOKS_RETRY_MAX_DELAY_MS: "1000", WEBHOOKS_RETRY_WINDOW_MS: "4000", WEBHOOKS_POLL_MS: "100" };
const system = await new System({ wiring: { kind: "standalone" }, logger: createLogger({ name: "screenshots", level: "silent" }), port: 0, adminToken, serviceEnv: { webhooks } }).start();
const receiver = await new WebhookReceiver().start();
const radicale = radicaleInstalled() ? new Radicale({ ada: "app-password-1" }) : undefined;
await radicale?.start();
const admin = { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" };
const post = async (path: string, body?: unknown) => (await fetch(`${system.url}${path}`, { method: "POST", headers: admin, ...(body ? { body: JSON.stringify(body) } : {}) })).json() as Promise<Record<string, string>>;
const browser = await launchChromium();
try {
  const user = await post("/admin/v1/users", { email: "ada@example.com", name: "Ada Lovelace", timezone: "Europe/London" });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const shoot = async (name: string) => {
    await page.screenshot({ path: `${out}dashboard-${name}.png`, fullPage: true });
    process.stdout.write(`docs/images/dashboard-${name}.png\n`);
  };
  const link = await post(`/admin/v1/users/${user.id}/sign-in-links`);
  await page.goto(link.url!);
  await shoot("sign-in");
  await signInWithLink(page, link.url!);
  await createKeyInPage(page, "reporting job");
  const key = await createKeyInPage(page, "billing server");
  await shoot("new-key");
  const api = (path: string) => fetch(`${system.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  for (const path of ["/v1/me", "/v1/meetings", "/v1/contacts", "/v1/meetings/mtg_000000000000000000000000", "/v1/me"]) await api(path);
  // The gateway sends the request log in batches, about once a second.
  await page.goto(`${system.dashboardUrl}/requests`);
  for (let tries = 0; tries < 50 && (await page.locator("tbody tr").count()) < 5; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    await page.reload();
  }
  await shoot("requests");
  await page.goto(`${system.dashboardUrl}/keys`);
  await shoot("keys");
  await page.goto(`${system.dashboardUrl}/usage`);
  await shoot("usage");
  await page.goto(`${system.dashboardUrl}/profile`);
  await shoot("profile");

  const until = async (url: string, wanted: string) => {
    for (let tries = 0; tries < 150; tries++) {
      await page.goto(url);
      if ((await page.locator("main").innerText()).includes(wanted)) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const addEndpoint = async (url: string, description: string) => {
    await page.goto(`${system.dashboardUrl}/webhooks`);
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByLabel("Description (optional)").fill(description);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    return (await page.getByRole("link", { name: `Deliveries and settings of ${url}` }).getAttribute("href"))!;
  };
  const failing = await addEndpoint(receiver.url("/crm/down", Array<number>(100).fill(503)), "Old CRM sync");
  const endpoint = await addEndpoint(receiver.url("/billing/webhooks"), "Billing server");
  await shoot("new-endpoint");
  for (const title of ["Kick-off", "Design review"]) {
    await fetch(`${system.url}/v1/meetings`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ title, duration: "30 mins", startTime: "2031-05-04T09:30:00Z", participants: ["guest@example.com"], sendInvites: false }),
    });
  }
  await until(`${system.dashboardUrl}/webhooks`, "Disabled");
  await shoot("webhooks");
  await until(new URL(endpoint, system.dashboardUrl).href, "Delivered");
  await shoot("webhook-endpoint");
  await page.goto(new URL(failing, system.dashboardUrl).href);
  await shoot("webhook-disabled");

  await page.goto(`${system.dashboardUrl}/calendars`);
  if (radicale) {
    const own = await radicale.client("ada");
    await own.makeCalendar({ url: `${radicale.url}ada/work/`, props: { displayname: "Work" } });
    await own.makeCalendar({ url: `${radicale.url}ada/family/`, props: { displayname: "Family" } });
    await page.getByLabel("Server URL").fill(radicale.url);
    await page.getByLabel("User name").fill("ada");
    await page.getByLabel("App password").fill("app-password-1");
    await page.getByRole("button", { name: "Connect CalDAV calendar" }).click();
    await page.waitForURL(/done=connected/);
    await page.getByLabel("Server URL").fill(radicale.url);
    await page.getByLabel("User name").fill("ada");
    await page.getByLabel("App password").fill("a-wrong-password");
    await page.getByRole("button", { name: "Connect CalDAV calendar" }).click();
  }
  await shoot("calendars");
  if (radicale) {
    await page.getByRole("link", { name: /^Busy calendars of / }).click();
    await shoot("busy-calendars");
  }
} finally {
  await browser.close();
  await system.stop();
  await receiver.stop();
  await radicale?.stop();
}
