import { describe, expect, it } from "vitest";
import { z } from "zod";
import { declareSettings, env, parseConfig, setting } from "../src/index.js";

const group = declareSettings({
  perMinute: setting("PER_MINUTE", env.positiveInt(100)),
  mode: setting("MODE", z.enum(["fast", "slow"]).default("fast")),
});

describe("settings declared once", () => {
  it("reads each setting from its own variable", () => {
    expect(group.fromEnvironment(parseConfig(group.environment, { PER_MINUTE: "7", MODE: "slow" }))).toEqual({ perMinute: 7, mode: "slow" });
  });

  it("takes each declared default when the environment says nothing", () => {
    expect(group.defaults).toEqual({ perMinute: 100, mode: "fast" });
  });

  it("names the variable, not the setting, when a value is wrong", () => {
    expect(() => parseConfig(group.environment, { PER_MINUTE: "-1" })).toThrow(/PER_MINUTE/);
    expect(() => parseConfig(group.environment, { MODE: "medium" })).toThrow(/MODE/);
  });
});
