import { ConfigError } from "@sched/config";
import { describe, expect, it } from "vitest";
import { resolveAdminTarget, unreachableMessage, type LocalFiles } from "../src/cli/target.js";

function files(apiUrl?: string, adminToken?: string): LocalFiles {
  return { apiUrl: () => apiUrl, adminToken: () => adminToken, describe: (name) => (name === "apiUrl" ? ".data/api-url" : ".data/admin-token") };
}

describe("admin command line: which API and which token", () => {
  it("takes API_URL and ADMIN_TOKEN from the environment first", () => {
    expect(resolveAdminTarget({ API_URL: "http://api:9000", ADMIN_TOKEN: "adm_env", DATA_DIR: ".data" }, files("http://localhost:3000\n", "adm_file"))).toEqual({
      apiUrl: "http://api:9000",
      adminToken: "adm_env",
      apiUrlSource: "API_URL",
    });
  });

  it("finds a local npm start through its data folder, on whatever port it listens", () => {
    expect(resolveAdminTarget({ DATA_DIR: ".data" }, files("http://localhost:3000\n", "adm_file\n"))).toEqual({
      apiUrl: "http://localhost:3000",
      adminToken: "adm_file",
      apiUrlSource: ".data/api-url",
    });
  });

  it("falls back to the default URL, and says so when it cannot be reached", () => {
    const target = resolveAdminTarget({ ADMIN_TOKEN: "adm_env", DATA_DIR: ".data" }, files());
    expect(target.apiUrl).toBe("http://localhost:8080");
    expect(unreachableMessage(target, "connect ECONNREFUSED 127.0.0.1:8080")).toMatch(/from the default \(API_URL unset\).*\n.*set API_URL/);
  });

  it("without a token anywhere, names ADMIN_TOKEN and the file it looked in", () => {
    expect(() => resolveAdminTarget({ DATA_DIR: ".data" }, files("http://localhost:3000"))).toThrow(ConfigError);
    expect(() => resolveAdminTarget({ DATA_DIR: ".data" }, files())).toThrow(/ADMIN_TOKEN: not set, and no \.data\/admin-token/);
  });
});
