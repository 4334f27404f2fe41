import type { Knex } from "@sched/db";
import type { OutboxRelay } from "@sched/outbox";

/** What the handlers share. */
export interface MeetingsDeps {
  db: Knex;
  /** Woken after each commit that wrote an event. */
  relay: Pick<OutboxRelay, "wake">;
  now: () => Date;
  /** The largest message the bus carries (undefined: no limit); a list page stays below it. */
  maxMessageBytes: () => number | undefined;
}
