import { SCOPES } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { formatWorkingHours, parseBusyCalendars, parseCalDavAccount, parseNewEndpoint, parseNewKey, parseProfile, parseWorkingHours } from "../src/domain/forms.js";
import { parseStatusFilter, statusRange, logHorizon } from "../src/domain/requestLog.js";
import { html } from "../src/inbound/http/html.js";

describe("the create-key form", () => {
  it("when a name, a mode and scopes are given, then the key asks for exactly those, in canonical order", () => {
    expect(parseNewKey({ name: " billing ", mode: "live", scopes: ["contacts:read", "meetings:read"] }, "test")).toEqual({
      ok: true,
      value: { name: "billing", mode: "live", scopes: ["meetings:read", "contacts:read"] },
    });
  });

  it("when the name and mode are left out, then the key gets a default name and the mode being viewed", () => {
    expect(parseNewKey({ scopes: [...SCOPES] }, "test")).toEqual({ ok: true, value: { name: "API key", mode: "test", scopes: [...SCOPES] } });
  });

  it("when no scope, an unknown scope or an unknown mode is sent, then the form is refused naming the field", () => {
    expect(parseNewKey({ name: "x" }, "test")).toMatchObject({ ok: false, field: "scopes" });
    expect(parseNewKey({ scopes: ["meetings:read", "admin:all"] }, "test")).toMatchObject({ ok: false, field: "scopes" });
    expect(parseNewKey({ scopes: "meetings:read", mode: "prod" }, "test")).toMatchObject({ ok: false, field: "mode" });
  });
});

describe("working hours as text", () => {
  it("when hours are written out and read back, then they are the same", () => {
    const hours = [
      { day: "monday" as const, start: "09:00", end: "12:00" },
      { day: "monday" as const, start: "13:00", end: "17:00" },
    ];
    expect(parseWorkingHours(formatWorkingHours(hours))).toEqual({ ok: true, value: hours });
  });

  it("when a line is not a weekday and two times, then the line is named", () => {
    expect(parseWorkingHours("monday 09:00-17:00\nsomeday 09:00-10:00")).toMatchObject({ ok: false, message: expect.stringContaining("Line 2") });
  });

  it("when the profile form is read, then numbers, days and the zone become the account's change", () => {
    expect(parseProfile({ name: "Ann", timezone: "Europe/Berlin", workingHours: "", bufferMinutes: "15", maxMeetingsPerDay: "", avoidDays: ["sunday", "friday"] })).toEqual({
      ok: true,
      value: { name: "Ann", timezone: "Europe/Berlin", workingHours: [], preferences: { avoidDays: ["friday", "sunday"], bufferMinutes: 15, maxMeetingsPerDay: null } },
    });
    expect(parseProfile({ bufferMinutes: "ten" })).toMatchObject({ ok: false, field: "bufferMinutes" });
  });
});

describe("the request log's filters", () => {
  it("when a status filter is named, then it keeps its range; anything else keeps every status", () => {
    expect(statusRange(parseStatusFilter("4xx"))).toEqual({ min: 400, max: 499 });
    expect(statusRange(parseStatusFilter("429"))).toEqual({ min: 429, max: 429 });
    expect(statusRange(parseStatusFilter("5xx"))).toEqual({ min: 500, max: 599 });
    expect(statusRange(parseStatusFilter(["4xx"]))).toBeUndefined();
    expect(statusRange(parseStatusFilter("teapot"))).toBeUndefined();
  });

  it("when the log is shown, then it goes back 7 days", () => {
    expect(logHorizon(new Date("2026-05-08T12:00:00Z")).toISOString()).toBe("2026-05-01T12:00:00.000Z");
  });
});

describe("page templates", () => {
  it("when a user's text is put into a page, then it is escaped, and markup made by the template is not", () => {
    const name = `<script>alert("x")</script>&'`;
    expect(html`<p title="${name}">${[html`<b>${name}</b>`, 1, null, false]}</p>`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"><b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</b>1</p>',
    );
  });
});

describe("the webhook endpoint form", () => {
  it("when every type is ticked beside single ones, then the endpoint gets every type", () => {
    expect(parseNewEndpoint({ url: " https://example.com/hook ", events: ["*", "meeting.created"] })).toEqual({ ok: true, value: { url: "https://example.com/hook", events: ["*"], description: "" } });
  });

  it("when single types are ticked, then exactly those, in the list's order", () => {
    const parsed = parseNewEndpoint({ url: "https://example.com/hook", events: ["invite.sent", "meeting.created"], description: "CRM" });
    expect(parsed).toEqual({ ok: true, value: { url: "https://example.com/hook", events: ["meeting.created", "invite.sent"], description: "CRM" } });
  });

  it("when no type, an unknown one or no URL is sent, then the form says which", () => {
    expect(parseNewEndpoint({ url: "https://example.com/hook" })).toMatchObject({ ok: false, field: "events" });
    expect(parseNewEndpoint({ url: "https://example.com/hook", events: "meeting.exploded" })).toMatchObject({ ok: false, field: "events" });
    expect(parseNewEndpoint({ url: "  ", events: "*" })).toMatchObject({ ok: false, field: "url" });
  });
});

describe("the CalDAV form", () => {
  it("when all three fields are there, then the password is kept as typed", () => {
    expect(parseCalDavAccount({ serverUrl: " https://dav.example.com/ ", username: "ann", password: " pass word " })).toEqual({ ok: true, value: { serverUrl: "https://dav.example.com/", username: "ann", password: " pass word " } });
  });

  it("when a field is missing, then the form names it", () => {
    expect(parseCalDavAccount({ serverUrl: "https://dav.example.com/", username: "ann" })).toMatchObject({ ok: false, field: "password" });
    expect(parseCalDavAccount({ username: "ann", password: "x" })).toMatchObject({ ok: false, field: "serverUrl" });
  });

  it("when calendars are ticked as busy, then each is listed once", () => {
    expect(parseBusyCalendars({ busy: ["a", "b", "a"] })).toEqual(["a", "b"]);
    expect(parseBusyCalendars({})).toEqual([]);
  });
});
