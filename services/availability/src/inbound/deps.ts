import type { Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import type { Logger } from "@sched/logging";

/** What the handlers share. */
export interface AvailabilityDeps {
  bus: Bus;
  logger: Logger;
  /** Epoch milliseconds; injected so that "today" and "never in the past" can be tested. */
  now: () => number;
  /** How long a recommendation with `useAI` waits for ai-ranking before the heuristic answers. */
  aiRankingTimeoutMs: number;
  /** How long the day view waits for busy time from a connected calendar before going without it. */
  calendarBusyTimeoutMs: number;
}

/**
 * The deadline of each question to accounts, contacts and meetings. A
 * recommendation asks them one after the other (then ai-ranking), so three of
 * these plus the ranking deadline stay well inside the gateway's 5 s: a sibling
 * that does not answer becomes 503 service_unavailable here, not a gateway timeout.
 */
export const SIBLING_TIMEOUT_MS = 1_000;

/** A domain refusal ({param, message}) as the 400 that names the field. */
export function invalidParam(refusal: { param: string; message: string }): AppError {
  return new AppError("invalid_request", `Invalid ${refusal.param}: ${refusal.message.replace(/\.?$/, ".")}`, { param: refusal.param });
}

export { formatTimestamp } from "@sched/proto";

const digit = (text: string, at: number) => text.charCodeAt(at) - 48;

/**
 * The instant of a Timestamp (`YYYY-MM-DDTHH:mm:ssZ`, the contract's one shape,
 * already validated by the bus). Busy replies carry tens of thousands of them;
 * reading the digits directly costs half of Date.parse.
 */
export function parseTimestamp(text: string): number {
  return Date.UTC(
    digit(text, 0) * 1000 + digit(text, 1) * 100 + digit(text, 2) * 10 + digit(text, 3),
    digit(text, 5) * 10 + digit(text, 6) - 1,
    digit(text, 8) * 10 + digit(text, 9),
    digit(text, 11) * 10 + digit(text, 12),
    digit(text, 14) * 10 + digit(text, 15),
    digit(text, 17) * 10 + digit(text, 18),
  );
}
