import type { RequestContext } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import type { OutboxRelay } from "@sched/outbox";
import type { Caller } from "@sched/proto";

/** What the handlers share. */
export interface MeetingsDeps {
  db: Knex;
  /** Woken after each commit that wrote an event. */
  relay: Pick<OutboxRelay, "wake">;
  now: () => Date;
  /** The largest message the bus carries (undefined: no limit); a list page stays below it. */
  maxMessageBytes: () => number | undefined;
}

/** The authenticated caller, with the e-mail in the lower-cased form participants are stored in. */
export function requireCaller(ctx: RequestContext): Caller {
  if (!ctx.caller) throw new AppError("unauthorized", "This request needs an authenticated caller.");
  return { ...ctx.caller, email: ctx.caller.email.toLowerCase() };
}
