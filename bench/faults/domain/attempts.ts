/**
 * What the clients saw during one fault: every HTTP attempt, its answer and
 * how long it took, summed up into the figures the fault report prints.
 */

/** An HTTP status, or no answer: the client's own deadline passed, or the connection failed (refused, reset). */
export type Answer = number | "timeout" | "connection";

export interface Attempt {
  /** Epoch milliseconds. */
  sentAt: number;
  answeredAt: number;
  answer: Answer;
  /** The Retry-After header of the answer, when it had one. */
  retryAfter?: string;
}

export interface AttemptStats {
  requests: number;
  /** Answers by status ("201", "503", "timeout", "connection"), in order of first appearance. */
  answers: Record<string, number>;
  longestMs: number;
  /** Attempts not answered within the bound (the client's own timeout included). */
  hangs: number;
  /** What those late attempts were answered in the end, by status. */
  hangAnswers: Record<string, number>;
  /** 5xx other than 503: a failure the client cannot tell from a bug (500) or a broken edge. */
  serverErrors: number;
  /** 503 without Retry-After: the client is not told when to come back. */
  unavailableWithoutRetryAfter: number;
  /** From the fault to the last failed answer after it; 0 when the clients saw no failure. */
  recoveryMs: number;
}

export const isSuccess = (answer: Answer): boolean => typeof answer === "number" && answer >= 200 && answer < 300;

export function attemptStats(attempts: readonly Attempt[], window: { faultAt: number; hangBoundMs: number }): AttemptStats {
  const answers: Record<string, number> = {};
  let longestMs = 0;
  let hangs = 0;
  const hangAnswers: Record<string, number> = {};
  let serverErrors = 0;
  let unavailableWithoutRetryAfter = 0;
  let lastFailureAt = window.faultAt;
  for (const a of attempts) {
    const key = String(a.answer);
    answers[key] = (answers[key] ?? 0) + 1;
    const tookMs = a.answeredAt - a.sentAt;
    longestMs = Math.max(longestMs, tookMs);
    if (a.answer === "timeout" || tookMs > window.hangBoundMs) {
      hangs++;
      hangAnswers[key] = (hangAnswers[key] ?? 0) + 1;
    }
    if (typeof a.answer === "number" && a.answer >= 500 && a.answer !== 503) serverErrors++;
    if (a.answer === 503 && !a.retryAfter) unavailableWithoutRetryAfter++;
    if (!isSuccess(a.answer)) lastFailureAt = Math.max(lastFailureAt, a.answeredAt);
  }
  return { requests: attempts.length, answers, longestMs, hangs, hangAnswers, serverErrors, unavailableWithoutRetryAfter, recoveryMs: lastFailureAt - window.faultAt };
}
