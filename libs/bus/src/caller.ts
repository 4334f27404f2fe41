import { AppError } from "@sched/errors";
import type { Caller } from "@sched/proto";
import type { RequestContext } from "./types.js";

/**
 * The caller the gateway authenticated for a public route, or 401: a public
 * handler acts for nobody else. The e-mail comes lower-cased, the form
 * participants and contacts are stored and compared in.
 */
export function requireCaller(ctx: RequestContext): Caller {
  if (!ctx.caller) throw new AppError("unauthorized", "This request needs an authenticated caller.");
  return { ...ctx.caller, email: ctx.caller.email.toLowerCase() };
}
