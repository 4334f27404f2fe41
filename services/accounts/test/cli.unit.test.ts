import { describe, expect, it } from "vitest";
import { UsageError, adminRequest, failureMessage, parseCliArgs, requestUrl } from "../src/cli/commands.js";

function usageError(argv: string[]): string {
  try {
    parseCliArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error("expected a UsageError");
}

describe("admin command line: arguments", () => {
  it("reads user:create with and without a time zone", () => {
    expect(parseCliArgs(["user:create", "--email", "a@b.c", "--name", "Ann Smith"])).toEqual({ command: "user:create", email: "a@b.c", name: "Ann Smith" });
    expect(parseCliArgs(["user:create", "--email=a@b.c", "--name", "Ann", "--timezone", "Europe/Berlin"])).toEqual({
      command: "user:create",
      email: "a@b.c",
      name: "Ann",
      timezone: "Europe/Berlin",
    });
  });

  it("reads user:find, key:create and key:revoke", () => {
    expect(parseCliArgs(["user:find", "--email", "a@b.c"])).toEqual({ command: "user:find", email: "a@b.c" });
    expect(parseCliArgs(["key:create", "--user", "usr_x", "--mode", "live"])).toEqual({ command: "key:create", userId: "usr_x", mode: "live" });
    expect(parseCliArgs(["key:create", "--user", "usr_x", "--mode", "test", "--scopes", "meetings:read, contacts:read,", "--name", "ci"])).toEqual({
      command: "key:create",
      userId: "usr_x",
      mode: "test",
      scopes: ["meetings:read", "contacts:read"],
      name: "ci",
    });
    expect(parseCliArgs(["key:revoke", "--key", "key_x"])).toEqual({ command: "key:revoke", keyId: "key_x" });
  });

  it("reads user:sign-in-link, and makes it the admin API's sign-in-link call", () => {
    expect(parseCliArgs(["user:sign-in-link", "--user", "usr_x"])).toEqual({ command: "user:sign-in-link", userId: "usr_x" });
    expect(usageError(["user:sign-in-link"])).toContain("--user");
    expect(adminRequest({ command: "user:sign-in-link", userId: "usr/x" })).toEqual({ method: "POST", path: "/admin/v1/users/usr%2Fx/sign-in-links" });
  });

  it("reads key:limits with numbers or default, and refuses anything else", () => {
    expect(parseCliArgs(["key:limits", "--key", "key_x", "--standard", "5000"])).toEqual({ command: "key:limits", keyId: "key_x", rateLimits: { standardPerMinute: 5000 } });
    expect(parseCliArgs(["key:limits", "--key", "key_x", "--standard", "1000000"])).toEqual({ command: "key:limits", keyId: "key_x", rateLimits: { standardPerMinute: 1_000_000 } });
    expect(parseCliArgs(["key:limits", "--key", "key_x", "--standard", "default", "--ai", "40"])).toEqual({
      command: "key:limits",
      keyId: "key_x",
      rateLimits: { standardPerMinute: null, aiPerMinute: 40 },
    });
    expect(adminRequest({ command: "key:limits", keyId: "key_x", rateLimits: { aiPerMinute: 40 } })).toEqual({
      method: "PATCH",
      path: "/admin/v1/api-keys/key_x",
      body: { rateLimits: { aiPerMinute: 40 } },
    });
    for (const bad of [["--standard", "0"], ["--ai", "1.5"], ["--ai", "-3"], ["--standard", "lots"], ["--standard", "1000001"], []]) {
      expect(() => parseCliArgs(["key:limits", "--key", "key_x", ...bad]), bad.join(" ")).toThrow(UsageError);
    }
  });

  it.each([["help"], ["--help"], ["-h"]])("reads %s as help", (arg) => {
    expect(parseCliArgs([arg])).toEqual({ command: "help" });
  });

  it("when something is wrong, then the message says what", () => {
    expect(usageError([])).toBe("Missing command.");
    expect(usageError(["user:delete"])).toBe("Unknown command: user:delete.");
    expect(usageError(["user:create", "--email", "a@b.c"])).toBe("user:create: missing --name.");
    expect(usageError(["user:create", "--email", "a@b.c", "--name", "  "])).toBe("user:create: missing --name.");
    expect(usageError(["key:create", "--user", "usr_x", "--mode", "prod"])).toBe("key:create: --mode must be test or live.");
    expect(usageError(["key:create", "--user", "usr_x", "--mode", "test", "--scopes", ","])).toBe("key:create: --scopes lists no scope.");
    expect(usageError(["user:find", "--email", "a@b.c", "--name", "Ann"])).toContain("--name");
    expect(usageError(["user:find", "--email", "a@b.c", "extra"])).toContain("user:find");
    expect(usageError(["user:find", "--email"])).toContain("--email");
  });
});

describe("admin command line: requests", () => {
  it("maps each command to its admin API call", () => {
    expect(adminRequest({ command: "user:create", email: "a@b.c", name: "Ann", timezone: "UTC" })).toEqual({
      method: "POST",
      path: "/admin/v1/users",
      body: { email: "a@b.c", name: "Ann", timezone: "UTC" },
    });
    expect(adminRequest({ command: "user:find", email: "a+b@c.d" })).toEqual({ method: "GET", path: "/admin/v1/users?email=a%2Bb%40c.d" });
    expect(adminRequest({ command: "key:create", userId: "usr_x", mode: "test", scopes: ["meetings:read"] })).toEqual({
      method: "POST",
      path: "/admin/v1/users/usr_x/api-keys",
      body: { mode: "test", scopes: ["meetings:read"] },
    });
    expect(adminRequest({ command: "key:revoke", keyId: "key/../x" })).toEqual({ method: "DELETE", path: "/admin/v1/api-keys/key%2F..%2Fx" });
  });

  it("reads calendar:attach and maps it to the admin attach call", () => {
    const command = parseCliArgs(["calendar:attach", "--user", "usr_x", "--access-token", "ya29.a", "--refresh-token", "1//r", "--expires-at", "2030-01-01T00:00:00Z"]);
    expect(command).toEqual({ command: "calendar:attach", userId: "usr_x", accessToken: "ya29.a", refreshToken: "1//r", expiresAt: "2030-01-01T00:00:00Z" });
    expect(adminRequest(command as Exclude<typeof command, { command: "help" }>)).toEqual({
      method: "POST",
      path: "/admin/v1/users/usr_x/calendar-connections",
      body: { provider: "google", accessToken: "ya29.a", refreshToken: "1//r", expiresAt: "2030-01-01T00:00:00Z" },
    });
    expect(() => parseCliArgs(["calendar:attach", "--user", "usr_x", "--access-token", "a"])).toThrow(/missing --refresh-token/);
    const microsoft = parseCliArgs(["calendar:attach", "--user", "usr_x", "--access-token", "EwB.a", "--refresh-token", "M.R3_r", "--account-email", "ann@contoso.com", "--provider", "microsoft"]);
    expect(adminRequest(microsoft as Exclude<typeof microsoft, { command: "help" }>)).toMatchObject({ body: { provider: "microsoft", accountEmail: "ann@contoso.com", accessToken: "EwB.a" } });
  });

  it("appends the path to the base URL, keeping a path prefix", () => {
    expect(requestUrl("http://localhost:8080", "/admin/v1/users")).toBe("http://localhost:8080/admin/v1/users");
    expect(requestUrl("https://api.example.com/base/", "/admin/v1/users")).toBe("https://api.example.com/base/admin/v1/users");
  });

  it("reports the API's error message, or the raw text when the body is not an API error", () => {
    expect(failureMessage(409, JSON.stringify({ error: { code: "user_exists", message: "A user with this e-mail address already exists." } }))).toBe(
      "Error 409 user_exists: A user with this e-mail address already exists.",
    );
    expect(failureMessage(502, "<html>Bad gateway</html>")).toBe("Error 502: <html>Bad gateway</html>");
    expect(failureMessage(500, "")).toBe("Error 500.");
  });
});
