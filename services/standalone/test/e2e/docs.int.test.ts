import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS, errorSectionAnchor, type ErrorCode } from "@sched/proto";
import { chromiumAvailable, launchChromium } from "../browser.js";
import { call, expectError, startTestSystem, type TestSystem } from "../harness.js";

/** Overwritten on every run, so a look at the last rendering is always one file away. */
const SCREENSHOT = join(tmpdir(), "sched-api-reference.png");

const OPERATIONS = [
  "List the meetings of the user's calendar",
  "Create a meeting and optionally send invites",
  "Update a meeting (organizer only)",
  "Free and busy slots of one date, in the user's zone",
  "Recommended meeting times across participants",
  "Add a trusted contact",
  "Create an API key; the key is shown only here",
];

describe("the API reference page in a headless browser", () => {
  const available = chromiumAvailable("the reference page");
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    if (!available) return;
    sys = await startTestSystem("standalone");
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  it.runIf(available)("renders the operations from the gateway's own bundle and document, fetching nothing elsewhere", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const origin = new URL(sys.url).origin;
    const isForeign = (raw: string) => {
      const url = new URL(raw);
      return url.origin !== origin && url.protocol !== "blob:" && url.protocol !== "data:";
    };
    const attempted: string[] = [];
    const loaded: string[] = [];
    const problems: string[] = [];
    page.on("request", (req) => {
      if (isForeign(req.url())) attempted.push(req.url());
    });
    page.on("requestfinished", (req) => {
      if (isForeign(req.url())) loaded.push(req.url());
    });
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(msg.text());
    });
    page.on("pageerror", (err) => problems.push(String(err)));

    const response = await page.goto(`${sys.url}/docs`);
    expect(response?.status()).toBe(200);
    const create = page.getByRole("heading", { name: "Create a meeting and optionally send invites" });
    await create.waitFor({ timeout: 30_000 });
    await create.scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });

    expect(await page.getByRole("heading", { name: /Scheduling API/ }).first().isVisible()).toBe(true);
    for (const summary of OPERATIONS) {
      expect(await page.getByRole("heading", { name: summary }).first().isVisible(), summary).toBe(true);
    }
    // The error envelope and a header of the document made it onto the page.
    expect(await page.getByText("X-RateLimit-Remaining").first().count()).toBe(1);
    // Redoc's sidebar asks for Redocly's logo from their CDN; the page's policy refuses it, and nothing else leaves.
    const REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
    expect(loaded).toEqual([]);
    expect(attempted.filter((u) => u !== REDOCLY_LOGO)).toEqual([]);
    expect(problems.filter((p) => !(p.includes("Content Security Policy") && p.includes(REDOCLY_LOGO)))).toEqual([]);
    expect((await stat(SCREENSHOT)).size).toBeGreaterThan(20_000);
  }, 60_000);

  it.runIf(available)("has the section every error's docUrl points at, for every code, and opens an error's docUrl at its section", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const notFound = await call(sys.url, "GET", "/v1/no-such-thing");
    expectError(notFound, 404, "not_found");
    await page.goto(new URL(notFound.body.error.docUrl, sys.url).href);
    const section = page.locator(`[id="${errorSectionAnchor("not_found")}"]`);
    await section.waitFor({ timeout: 30_000 });
    // Opened at the section: it is on screen, not somewhere below the introduction.
    await expect.poll(() => section.isVisible(), { timeout: 10_000 }).toBe(true);
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      expect(await page.locator(`[id="${errorSectionAnchor(code)}"]`).count(), code).toBe(1);
    }
  }, 60_000);
});
