import { pino, type Logger } from "pino";

export type { Logger } from "pino";

/**
 * Paths that may hold secrets or personal data. Bodies are never logged on
 * purpose; these redactions catch what slips into structured fields anyway.
 */
const REDACT = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "key",
  "*.key",
  "apiKey",
  "*.apiKey",
  "token",
  "*.token",
  "adminToken",
  "body",
  "*.body",
];

/** The process logger: JSON lines on stdout, one child per service. */
export function createLogger(options: { name: string; level?: string }): Logger {
  return pino({
    name: options.name,
    level: options.level ?? process.env.LOG_LEVEL ?? "info",
    redact: { paths: REDACT, censor: "[redacted]" },
    base: { service: options.name },
  });
}
