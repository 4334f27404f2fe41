import type { Knex } from "@sched/db";
import { remainingMs } from "@sched/errors";
import { AsyncResource } from "node:async_hooks";
import { batchRetryAfter } from "../domain/batchFailure.js";
import { insertMeetings, type NewMeetingRow } from "./queries.js";

/** The most meetings one statement inserts. */
const MOST_PER_STATEMENT = 64;

interface Waiting {
  row: NewMeetingRow;
  /** When its request gives up (epoch ms; Infinity outside a request). */
  deadline: number;
  /** Its request's context: its deadline bounds the wait for a connection, as when it wrote alone. */
  scope: AsyncResource;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Inserts new meetings (each with its participants and outbox row) as they
 * come, in one statement per turn rather than one each: while a statement is
 * on its way, the creates that arrive wait and go together in the next one,
 * so a create alone waits for nothing, and creates at a busy time share one
 * statement and one commit. Each caller is answered once its row is
 * committed. A shared statement waits for a connection no longer than the
 * earliest deadline among its requests, so none is written after it gave
 * up; should it fail, its rows are tried again one by one, each in its own
 * request's context, so that one row's failure is that row's caller's alone,
 * unless the database is out of reach, when every row is refused at once
 * (see batchRetryAfter).
 *
 * On the embedded database every statement is a hop to the database's thread
 * and back, on a session that serves one statement at a time, so creates read
 * in one turn of the event loop are worth one statement: there (`gathersTurn`)
 * the first insert of a turn is written once they have come as well.
 */
export class MeetingInserts {
  private readonly waiting: Waiting[] = [];
  private writing = false;

  constructor(
    private readonly db: Knex,
    /** Writes rows in one statement (insertMeetings; another in tests that make it fail). */
    private readonly writeRows: (db: Knex, rows: readonly NewMeetingRow[]) => Promise<void> = insertMeetings,
    private readonly options: { gathersTurn?: boolean } = {},
  ) {}

  insert(row: NewMeetingRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ row, deadline: Date.now() + (remainingMs() ?? Infinity), scope: new AsyncResource("meeting-insert"), resolve, reject });
      if (!this.writing) {
        this.writing = true;
        if (this.options.gathersTurn) setImmediate(() => void this.write());
        else void this.write();
      }
    });
  }

  private async write(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const taken = this.waiting.splice(0, MOST_PER_STATEMENT);
        // A row whose request gave up while it waited is refused on its own (it is not written), so it does not cut the others' wait short.
        const now = Date.now();
        for (const w of taken) if (w.deadline <= now) await this.one(w);
        const batch = taken.filter((w) => w.deadline > now);
        if (batch.length <= 1) {
          if (batch[0]) await this.one(batch[0]);
          continue;
        }
        const soonest = batch.reduce((a, b) => (b.deadline < a.deadline ? b : a));
        try {
          await soonest.scope.runInAsyncScope(() => this.writeRows(this.db, batch.map((w) => w.row)));
          for (const w of batch) w.resolve();
        } catch (err) {
          await this.afterFailure(batch, err);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private async afterFailure(batch: Waiting[], err: unknown): Promise<void> {
    const retry = batchRetryAfter(err);
    if (retry === "each") {
      for (const w of batch) await this.one(w);
      return;
    }
    const now = Date.now();
    const unexpired = retry === "unexpired" ? batch.filter((w) => w.deadline > now) : [];
    // A wait that ran out before any deadline (the pool's own limit) would run out again: nothing is tried again.
    if (unexpired.length === batch.length) unexpired.length = 0;
    for (const w of batch) if (!unexpired.includes(w)) w.reject(err);
    // Ahead of the rows that came since, in their order: the next turn writes them together again.
    this.waiting.unshift(...unexpired);
  }

  private async one(w: Waiting): Promise<void> {
    try {
      await w.scope.runInAsyncScope(() => this.writeRows(this.db, [w.row]));
      w.resolve();
    } catch (err) {
      w.reject(err);
    }
  }
}
