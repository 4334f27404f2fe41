import { AppError, internalError, invalidRequest } from "@sched/errors";
import { Caller, type Endpoint } from "@sched/proto";
import type { Logger } from "@sched/logging";
import type { EndpointBinding, RequestContext } from "./types.js";

export const CALLER_HEADER = "Sched-Caller";

export function encodeCaller(caller: Caller): string {
  return JSON.stringify(caller);
}

/** A missing or malformed caller header means no caller: public handlers then refuse the request. */
export function decodeCaller(raw: string | undefined): Caller | undefined {
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = Caller.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** HTTP route endpoints: requests of `{params, query, body}`, replies an HttpReply. */
export function isHttpRoute(endpoint: Endpoint): boolean {
  return endpoint.subject.includes(".http.");
}

/**
 * Runs one request through validation, the handler and reply validation, the
 * same way on every bus wiring. Anything not an AppError becomes a bare
 * internal_error: no stack, SQL or internal name crosses the bus.
 */
export async function dispatch(binding: EndpointBinding, raw: unknown, ctx: RequestContext, logger: Logger): Promise<unknown> {
  const parsed = binding.endpoint.request.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw invalidRequest(parsed.error, { httpEnvelope: isHttpRoute(binding.endpoint) });
  let reply: unknown;
  try {
    reply = await binding.handler(parsed.data as never, ctx);
  } catch (err) {
    if (err instanceof AppError) throw err;
    logger.error({ err, subject: ctx.subject }, "handler failed");
    throw internalError();
  }
  const checked = binding.endpoint.reply.safeParse(reply);
  if (!checked.success) {
    logger.error({ subject: ctx.subject, issues: checked.error.issues.slice(0, 3) }, "handler reply does not match its contract");
    throw internalError();
  }
  return checked.data;
}
