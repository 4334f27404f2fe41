import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";

/** Debian's chromium; in CI (CI=true) a missing browser is a failure, not a skip. */
export function chromiumAvailable(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === "true") throw new Error(`${what} must be checked in a browser in CI, but ${CHROMIUM} is missing`);
  console.warn(`skipping the browser check of ${what}: ${CHROMIUM} is missing (apt-get install chromium)`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * The page's serious and critical accessibility violations by axe-core. It is
 * evaluated through the DevTools protocol, which the page's CSP (no inline
 * script) does not govern, so the page keeps its real policy while checked.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // Run in the page, where the document is; this file is type-checked without the DOM's types.
    const { axe, document } = globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> }; document: unknown };
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${page.url()}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

/** Opens a sign-in link and presses its one button; resolves on the keys page. */
export async function signInWithLink(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard\/keys$/);
}

/** Makes a key on the keys page and returns it as the page shows it, this once. */
export async function createKeyInPage(page: Page, name: string): Promise<string> {
  await page.getByLabel("Name").fill(name);
  await page.getByRole("button", { name: /Create.*key/ }).click();
  return (await page.locator("#new-key").textContent())!.trim();
}
