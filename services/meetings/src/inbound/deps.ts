import type { Knex } from "@sched/db";
import type { OutboxRelay } from "@sched/outbox";
import type { MeetingInserts } from "../db/insertBatches.js";
import type { SeriesStore } from "../db/seriesStore.js";

/** What the handlers share. */
export interface MeetingsDeps {
  db: Knex;
  /** New meetings outside a transaction: inserted together with those created at the same time. */
  inserts: Pick<MeetingInserts, "insert">;
  /** Woken after each commit that wrote an event. */
  relay: Pick<OutboxRelay, "wake">;
  now: () => Date;
  /** The largest message the bus carries (undefined: no limit); a list page stays below it. */
  maxMessageBytes: () => number | undefined;
  /** The series this replica has read, under their versions: lists and busy time read them from here. */
  series: SeriesStore;
}
