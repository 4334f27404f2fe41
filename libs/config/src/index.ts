import { z } from "zod";

/** Thrown when the environment does not satisfy a service's schema. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the environment once, at start-up. Every problem names its variable,
 * so a bad deployment fails with a message an operator can act on.
 */
export function parseConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const variable = issue.path.join(".") || "(environment)";
    const value = env[variable];
    return value === undefined ? `${variable}: ${issue.message} (not set)` : `${variable}: ${issue.message}`;
  });
  throw new ConfigError(problems);
}

/** Parses config or ends the process with the message naming the variable. */
export function loadConfigOrExit<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  try {
    return parseConfig(schema, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

/** Unset, empty or blank all mean "not given": deployment files pass an unset variable through as "". */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema.optional());

/** Reusable pieces of service config schemas. */
export const env = {
  optional,
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: (fallback: string) => z.string().url().default(fallback),
  /** Where clients reach the deployment (`https://api.example.com`, or under a path): http(s), no query or fragment; kept without a trailing slash. */
  publicBaseUrl: () =>
    optional(
      z
        .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
        .refine((v) => !v.includes("?") && !v.includes("#"), "must have no query or fragment")
        .transform((v) => v.replace(/\/+$/, "")),
    ),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  /** A positive number, fractions allowed (`0.5`). */
  positiveNumber: (fallback: number) => z.coerce.number().positive().default(fallback),
  /** "true"/"false"/"1"/"0" only; anything else is an error, not false. */
  flag: (fallback: boolean) =>
    z
      .enum(["true", "false", "1", "0"])
      .default(fallback ? "true" : "false")
      .transform((v) => v === "true" || v === "1"),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Subject and stream namespace, so several deployments can share one NATS. */
  busNamespace: () =>
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, "letters, digits, _ or -, at most 32")
      .default("sched"),
  /** A required AES-256 key: 32 random bytes, base64 (`openssl rand -base64 32`). */
  aesKey: () =>
    z
      .string({ error: "is required (32 random bytes, base64)" })
      .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded (openssl rand -base64 32)"),
};

export { LOCAL_API_FILES, localApiFile } from "./localApi.js";
export { declareSettings, setting, type EnvironmentShape, type SettingDeclaration, type SettingsOf } from "./settings.js";
