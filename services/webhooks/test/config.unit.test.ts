import { parseConfig } from "@sched/config";
import { describe, expect, it } from "vitest";
import { DEV_WEBHOOKS_SECRET_KEY, webhooksService } from "../src/service.js";

describe("webhooks settings", () => {
  it("needs a 32-byte secret key and says so by name", () => {
    expect(() => parseConfig(webhooksService.config, {})).toThrow(/WEBHOOKS_SECRET_KEY/);
    expect(() => parseConfig(webhooksService.config, { WEBHOOKS_SECRET_KEY: Buffer.from("short").toString("base64") })).toThrow(/32 bytes/);
  });

  it("refuses private addresses unless told otherwise, and retries for 3 days", () => {
    const config = parseConfig(webhooksService.config, { WEBHOOKS_SECRET_KEY: DEV_WEBHOOKS_SECRET_KEY });
    expect(config.WEBHOOKS_ALLOW_PRIVATE).toBe(false);
    expect(config.WEBHOOKS_RETRY_WINDOW_MS).toBe(3 * 24 * 3_600_000);
    expect(config.WEBHOOKS_TIMEOUT_MS).toBe(10_000);
    expect(webhooksService.standaloneEnv?.WEBHOOKS_ALLOW_PRIVATE).toBe("true");
    expect(() => parseConfig(webhooksService.config, { WEBHOOKS_SECRET_KEY: DEV_WEBHOOKS_SECRET_KEY, WEBHOOKS_ALLOW_PRIVATE: "yes" })).toThrow(/WEBHOOKS_ALLOW_PRIVATE/);
  });
});
