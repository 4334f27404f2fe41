import { isSuccess, type Answer, type Attempt } from "./domain/attempts.js";
import { retryDelayMs, worthRetrying } from "./domain/retry.js";
import type { Verdict } from "./domain/writes.js";

export interface ClientLimits {
  /** The client's own deadline for one try; past it the try counts as a timeout. */
  answerTimeoutMs: number;
  /** How long a write is retried before the client gives up without a verdict. */
  retryBudgetMs: number;
}

/**
 * A correct client of the meetings API with one API key: every write is
 * retried unchanged (a create with its Idempotency-Key) while the answers
 * say nothing was decided, and every try is recorded.
 */
export class WriteClient {
  readonly attempts: Attempt[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly limits: ClientLimits,
  ) {}

  create(idempotencyKey: string, body: Record<string, unknown>): Promise<Verdict> {
    return this.untilDecided("POST", "/v1/meetings", body, { "idempotency-key": idempotencyKey });
  }

  update(meetingId: string, body: Record<string, unknown>): Promise<Verdict> {
    return this.untilDecided("PATCH", `/v1/meetings/${meetingId}`, body, {});
  }

  private async untilDecided(method: string, path: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<Verdict> {
    const giveUpAt = Date.now() + this.limits.retryBudgetMs;
    for (let tries = 1; ; tries++) {
      const { attempt, id } = await this.send(method, path, JSON.stringify(body), headers);
      this.attempts.push(attempt);
      if (isSuccess(attempt.answer)) return { kind: "accepted", id: id ?? "" };
      if (typeof attempt.answer === "number" && !worthRetrying(attempt.answer)) return { kind: "refused", status: attempt.answer };
      const wait = retryDelayMs(attempt.retryAfter, tries);
      if (Date.now() + wait > giveUpAt) return { kind: "unknown" };
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async send(method: string, path: string, body: string, headers: Record<string, string>): Promise<{ attempt: Attempt; id?: string }> {
    const sentAt = Date.now();
    const done = (answer: Answer, retryAfter?: string | null) => ({ sentAt, answeredAt: Date.now(), answer, ...(retryAfter ? { retryAfter } : {}) });
    try {
      const res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, "content-type": "application/json", ...headers },
        body,
        signal: AbortSignal.timeout(this.limits.answerTimeoutMs),
      });
      const text = await res.text();
      const attempt = done(res.status, res.headers.get("retry-after"));
      if (!isSuccess(res.status)) return { attempt };
      return { attempt, id: meetingId(text) };
    } catch (err) {
      return { attempt: done((err as Error).name === "TimeoutError" ? "timeout" : "connection") };
    }
  }
}

function meetingId(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { id?: string }).id;
  } catch {
    return undefined;
  }
}
