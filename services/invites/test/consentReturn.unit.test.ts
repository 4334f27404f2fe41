import { describe, expect, it } from "vitest";
import { dashboardReturnUrl, refusalOutcome } from "../src/domain/consentReturn.js";

describe("the end of a consent started in the dashboard", () => {
  it("sends the browser to the dashboard's calendars page with the outcome and provider only", () => {
    expect(dashboardReturnUrl("https://sched.example.com/dashboard", "google", "connected")).toBe("https://sched.example.com/dashboard/calendars?consent=connected&provider=google");
    expect(dashboardReturnUrl("http://localhost:8080/dashboard/", "microsoft", "refused")).toBe("http://localhost:8080/dashboard/calendars?consent=refused&provider=microsoft");
  });

  it("keeps the configured address's own origin and path, whatever the outcome", () => {
    for (const outcome of ["connected", "refused", "error"] as const) {
      const url = new URL(dashboardReturnUrl("https://app.example.org/tools/dashboard", "google", outcome));
      expect(url.origin).toBe("https://app.example.org");
      expect(url.pathname).toBe("/tools/dashboard/calendars");
      expect([...url.searchParams.keys()].sort()).toEqual(["consent", "provider"]);
      expect(url.searchParams.get("consent")).toBe(outcome);
    }
  });

  it("reads the person's own no as refused and any other provider error as an error", () => {
    expect(refusalOutcome("access_denied")).toBe("refused");
    expect(refusalOutcome("consent_required")).toBe("error");
    expect(refusalOutcome("server_error")).toBe("error");
  });
});
