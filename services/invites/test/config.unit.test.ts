import { ConfigError, parseConfig } from "@sched/config";
import { describe, expect, it } from "vitest";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

const problems = (env: Record<string, string>): string[] => {
  try {
    parseConfig(invitesService.config, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe("invites configuration", () => {
  it("needs a 32-byte token key in a service process, naming the variable", () => {
    expect(problems({})).toEqual([expect.stringMatching(/^CALENDAR_TOKEN_KEY: .*\(not set\)$/)]);
    expect(problems({ CALENDAR_TOKEN_KEY: Buffer.alloc(16).toString("base64") })).toEqual([expect.stringMatching(/^CALENDAR_TOKEN_KEY: must be 32 bytes/)]);
    expect(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")).toHaveLength(32);
    // Standalone mode (local development) may also reach a CalDAV server on this machine; a service process may not.
    expect(invitesService.standaloneEnv).toEqual({ CALENDAR_TOKEN_KEY: DEV_CALENDAR_TOKEN_KEY, CALDAV_ALLOW_PRIVATE: "true" });
    expect(parseConfig(invitesService.config, { CALENDAR_TOKEN_KEY: DEV_CALENDAR_TOKEN_KEY }).CALDAV_ALLOW_PRIVATE).toBe(false);
  });

  it("listens for replies only with a domain for their addresses", () => {
    const key = { CALENDAR_TOKEN_KEY: DEV_CALENDAR_TOKEN_KEY };
    expect(problems({ ...key, INBOUND_SMTP_PORT: "2525" })).toEqual([expect.stringMatching(/^INBOUND_EMAIL_DOMAIN: is required when INBOUND_SMTP_PORT is set/)]);
    expect(problems({ ...key, INBOUND_SMTP_PORT: "2525", INBOUND_EMAIL_DOMAIN: "replies.example.com" })).toEqual([]);
    expect(problems({ ...key, INBOUND_SMTP_PORT: "70000", INBOUND_EMAIL_DOMAIN: "replies.example.com" })).toEqual([expect.stringMatching(/^INBOUND_SMTP_PORT: /)]);
    expect(parseConfig(invitesService.config, { ...key, INBOUND_SMTP_PORT: "" }).INBOUND_SMTP_PORT).toBeUndefined();
  });

  it("takes an SMTP URL only as smtp:// or smtps://, and treats empty optional values as unset", () => {
    const key = { CALENDAR_TOKEN_KEY: DEV_CALENDAR_TOKEN_KEY };
    expect(problems({ ...key, SMTP_URL: "http://mail.example.com" })).toEqual([expect.stringMatching(/^SMTP_URL: /)]);
    const parsed = parseConfig(invitesService.config, { ...key, SMTP_URL: "", GOOGLE_CLIENT_ID: "" });
    expect(parsed.SMTP_URL).toBeUndefined();
    expect(parsed.GOOGLE_CLIENT_ID).toBeUndefined();
    expect(parseConfig(invitesService.config, { ...key, SMTP_URL: "smtps://u:p@smtp.example.com:465" }).SMTP_URL).toBe("smtps://u:p@smtp.example.com:465");
    expect(problems({ ...key, INVITE_MAX_ATTEMPTS: "0" })).toEqual([expect.stringMatching(/^INVITE_MAX_ATTEMPTS: /)]);
  });
});
