import type { RequestContext } from "@sched/bus";
import { AppError } from "@sched/errors";
import type { Owner } from "../db/queries.js";

/** The authenticated user a public request acts for. */
export interface Me extends Owner {
  email: string;
}

/** Public routes act only for a caller the gateway has authenticated. */
export function requireCaller(ctx: RequestContext): Me {
  const caller = ctx.caller;
  if (!caller) throw new AppError("unauthorized", "Authentication required.");
  return { userId: caller.userId, mode: caller.mode, email: caller.email };
}
