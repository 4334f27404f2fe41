import { parseConfig } from "@sched/config";
import { describe, expect, it } from "vitest";
import { DEV_IDEMPOTENCY_SEAL_KEY, GATEWAY_DEFAULTS, gatewayConfigSchema, settingsOf } from "../src/service.js";

const IDEMPOTENCY_SEAL_KEY = DEV_IDEMPOTENCY_SEAL_KEY;

describe("the gateway's settings from its environment", () => {
  it("takes the same defaults as standalone mode when the environment sets nothing but the admin token and the seal key", () => {
    const settings = settingsOf(gatewayConfigSchema.parse({ ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY }));
    expect(settings).toEqual({ ...GATEWAY_DEFAULTS, adminToken: "adm_0123456789abcdef" });
  });

  it("hands every variable to its own setting", () => {
    const env = {
      ADMIN_TOKEN: "adm_fedcba9876543210",
      IDEMPOTENCY_SEAL_KEY,
      BUS_TIMEOUT_MS: "1001",
      AUTH_CACHE_TTL_MS: "1002",
      RATE_LIMIT_STANDARD_PER_MINUTE: "1003",
      RATE_LIMIT_AI_PER_MINUTE: "1004",
      RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: "1005",
      RATE_LIMIT_WINDOW_SECONDS: "1006",
      MAX_HEADER_BYTES: "1007",
      MAX_URL_BYTES: "1008",
      HEADERS_TIMEOUT_MS: "1009",
      REQUEST_TIMEOUT_MS: "1010",
      KEEP_ALIVE_TIMEOUT_MS: "1011",
      MAX_IN_FLIGHT: "1012",
      MAX_IN_FLIGHT_SHARE_PERCENT: "13",
      MAX_JSON_DEPTH: "1014",
      TRUST_PROXY: "loopback",
      PUBLIC_BASE_URL: "https://api.example.com/scheduling/",
    };
    expect(settingsOf(gatewayConfigSchema.parse(env))).toEqual({
      adminToken: "adm_fedcba9876543210",
      busTimeoutMs: 1001,
      authCacheTtlMs: 1002,
      standardPerMinute: 1003,
      aiPerMinute: 1004,
      authFailuresPerMinute: 1005,
      rateWindowSeconds: 1006,
      maxHeaderBytes: 1007,
      maxUrlBytes: 1008,
      headersTimeoutMs: 1009,
      requestTimeoutMs: 1010,
      keepAliveTimeoutMs: 1011,
      maxInFlight: 1012,
      inFlightSharePercent: 13,
      maxJsonDepth: 1014,
      trustProxy: "loopback",
      publicBaseUrl: "https://api.example.com/scheduling",
    });
  });

  it("refuses a share of the places in progress over 100 percent, naming the variable", () => {
    expect(() => parseConfig(gatewayConfigSchema, { ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY, MAX_IN_FLIGHT_SHARE_PERCENT: "150" })).toThrow(/MAX_IN_FLIGHT_SHARE_PERCENT/);
    expect(() => parseConfig(gatewayConfigSchema, { ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY, MAX_JSON_DEPTH: "0" })).toThrow(/MAX_JSON_DEPTH/);
  });

  it("requires the seal key of idempotency records, 32 bytes in base64, naming the variable", () => {
    expect(() => parseConfig(gatewayConfigSchema, { ADMIN_TOKEN: "adm_0123456789abcdef" })).toThrow(/IDEMPOTENCY_SEAL_KEY: .*\(not set\)/);
    expect(() => parseConfig(gatewayConfigSchema, { ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY: Buffer.alloc(16).toString("base64") })).toThrow(/IDEMPOTENCY_SEAL_KEY: must be 32 bytes/);
    expect(gatewayConfigSchema.parse({ ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY }).IDEMPOTENCY_SEAL_KEY).toBe(IDEMPOTENCY_SEAL_KEY);
  });

  it("refuses a public base URL that is not an http(s) address without query or fragment, naming the variable; blank is none", () => {
    const token = { ADMIN_TOKEN: "adm_0123456789abcdef", IDEMPOTENCY_SEAL_KEY };
    for (const bad of ["api.example.com", "ftp://api.example.com", "https://api.example.com/?a=1", "https://api.example.com/#x"]) {
      expect(() => parseConfig(gatewayConfigSchema, { ...token, PUBLIC_BASE_URL: bad }), bad).toThrow(/PUBLIC_BASE_URL/);
    }
    expect(settingsOf(parseConfig(gatewayConfigSchema, { ...token, PUBLIC_BASE_URL: " " })).publicBaseUrl).toBeUndefined();
  });
});
