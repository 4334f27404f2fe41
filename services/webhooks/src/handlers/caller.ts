import type { RequestContext } from "@sched/bus";
import { AppError } from "@sched/errors";
import type { Caller } from "@sched/proto";

/** Public routes act only for a caller the gateway has authenticated. */
export function requireCaller(ctx: RequestContext): Caller {
  if (!ctx.caller) throw new AppError("unauthorized", "Authentication required.");
  return ctx.caller;
}
