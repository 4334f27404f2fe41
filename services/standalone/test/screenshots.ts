import { createLogger } from "@sched/logging";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { System } from "../src/system.js";
import { createKeyInPage, launchChromium, signInWithLink } from "./browser.js";

/**
 * `npm run screenshots`: the dashboard's main pages as docs/dashboard.md shows
 * them, made against a fresh standalone system in memory with a user, a key
 * and some requests, so they can be made again whenever the pages change.
 */
const out = fileURLToPath(new URL("../../../docs/images/", import.meta.url));
mkdirSync(out, { recursive: true });
const adminToken = "adm_screenshots_0123456789abcdef";
const system = await new System({ wiring: { kind: "standalone" }, logger: createLogger({ name: "screenshots", level: "silent" }), port: 0, adminToken }).start();
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
} finally {
  await browser.close();
  await system.stop();
}
