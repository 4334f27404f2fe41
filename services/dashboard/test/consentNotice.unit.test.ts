import { describe, expect, it } from "vitest";
import { consentNotice } from "../src/domain/consentNotice.js";

describe("the calendars page's message after a consent", () => {
  it("says the provider connected", () => {
    expect(consentNotice("connected", "Google Calendar")).toEqual({ text: "Google Calendar connected.", failed: false });
  });

  it("says access was not granted when the person refused, and asks to try again on an error", () => {
    expect(consentNotice("refused", "Microsoft 365 / Outlook.com")).toEqual({ text: "Microsoft 365 / Outlook.com was not connected: access was not granted on the consent screen.", failed: true });
    expect(consentNotice("error", "Google Calendar")).toEqual({ text: "Google Calendar could not be connected. Please try again.", failed: true });
  });
});
