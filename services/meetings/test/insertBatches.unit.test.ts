import type { Knex } from "@sched/db";
import { deadlinePassed, withDeadline } from "@sched/errors";
import { describe, expect, it } from "vitest";
import { MeetingInserts } from "../src/db/insertBatches.js";
import type { NewMeetingRow } from "../src/db/queries.js";
import { batchRetryAfter } from "../src/domain/batchFailure.js";

const row = (id: string) => ({ meeting: { id } }) as unknown as NewMeetingRow;
const idsOf = (rows: readonly NewMeetingRow[]) => rows.map((r) => r.meeting.id);
const errorWith = (fields: Record<string, string>) => Object.assign(new Error(fields.message ?? "failed"), fields);

/**
 * A writer whose first statement (the row that came alone) waits until
 * `release` is called, so the inserts made meanwhile go together in the
 * second; `fail` decides, statement by statement, what it throws.
 */
function holdingWriter(fail: (ids: string[], call: number) => Error | undefined | Promise<Error | undefined>) {
  const statements: string[][] = [];
  let release!: () => void;
  const first = new Promise<void>((resolve) => (release = resolve));
  const write = async (_db: Knex, rows: readonly NewMeetingRow[]) => {
    const ids = idsOf(rows);
    statements.push(ids);
    if (statements.length === 1) await first;
    const err = await fail(ids, statements.length);
    if (err) throw err;
  };
  return { statements, write, release: () => release() };
}

const settled = (inserts: Promise<void>[]) => Promise.allSettled(inserts).then((all) => all.map((s) => s.status));

describe("MeetingInserts after a shared insert failed", () => {
  it("when the database refuses connections, then every row of the batch is refused at once, none tried again alone", async () => {
    const refused = errorWith({ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" });
    const writer = holdingWriter(() => refused);
    const inserts = new MeetingInserts({} as Knex, writer.write);
    const all = ["a", "b", "c", "d", "e"].map((id) => inserts.insert(row(id)));
    writer.release();
    expect(await settled(all)).toEqual(["rejected", "rejected", "rejected", "rejected", "rejected"]);
    expect(writer.statements).toEqual([["a"], ["b", "c", "d", "e"]]);
    await expect(all[3]).rejects.toBe(refused);
  });

  it("when one row breaks a constraint, then the rows are tried one by one and only that row's insert fails", async () => {
    const writer = holdingWriter((ids) => (ids.includes("c") ? errorWith({ code: "23505", message: "duplicate key" }) : undefined));
    const inserts = new MeetingInserts({} as Knex, writer.write);
    const all = ["a", "b", "c", "d"].map((id) => inserts.insert(row(id)));
    writer.release();
    expect(await settled(all)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(writer.statements).toEqual([["a"], ["b", "c", "d"], ["b"], ["c"], ["d"]]);
  });

  it("when the wait for a connection runs out at the earliest deadline, then that row is refused and the others are written together", async () => {
    const poolTimeout = Object.assign(new Error("Knex: Timeout acquiring a connection."), { name: "KnexTimeoutError" });
    // The shared statement's wait for a connection outlasts the hurried row's deadline.
    const writer = holdingWriter(async (_ids, call) => (call === 2 ? new Promise<Error>((resolve) => setTimeout(() => resolve(poolTimeout), 30)) : undefined));
    const inserts = new MeetingInserts({} as Knex, writer.write);
    const first = inserts.insert(row("a"));
    const hurried = withDeadline(Date.now() + 20, () => inserts.insert(row("b")));
    const patient = ["c", "d"].map((id) => withDeadline(Date.now() + 60_000, () => inserts.insert(row(id))));
    writer.release();
    expect(await settled([first, hurried, ...patient])).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(writer.statements).toEqual([["a"], ["b", "c", "d"], ["c", "d"]]);
  });
});

describe("MeetingInserts gathering a turn (the embedded database)", () => {
  it("when creates come in one turn of the event loop, then the first waits for the others and all go in one statement", async () => {
    const statements: string[][] = [];
    const inserts = new MeetingInserts({} as Knex, async (_db, rows) => void statements.push(idsOf(rows)), { gathersTurn: true });
    const all = ["a", "b", "c"].map((id) => inserts.insert(row(id)));
    expect(statements).toEqual([]);
    expect(await settled(all)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(statements).toEqual([["a", "b", "c"]]);
  });

  it("when a create comes alone, then it is written in the next turn, and one of a later turn in a statement of its own", async () => {
    const statements: string[][] = [];
    const inserts = new MeetingInserts({} as Knex, async (_db, rows) => void statements.push(idsOf(rows)), { gathersTurn: true });
    await inserts.insert(row("a"));
    await inserts.insert(row("b"));
    expect(statements).toEqual([["a"], ["b"]]);
  });

  it("without it, the first create of a quiet moment is written at once, before the others of its turn come", async () => {
    const statements: string[][] = [];
    const inserts = new MeetingInserts({} as Knex, async (_db, rows) => void statements.push(idsOf(rows)));
    const all = ["a", "b", "c"].map((id) => inserts.insert(row(id)));
    expect(statements).toEqual([["a"]]);
    await Promise.all(all);
    expect(statements).toEqual([["a"], ["b", "c"]]);
  });
});

describe("batchRetryAfter", () => {
  it("tells an outage, a deadline and a bad row apart", () => {
    expect(batchRetryAfter(errorWith({ code: "57P03", message: "the database system is starting up" }))).toBe("none");
    expect(batchRetryAfter(errorWith({ code: "57014", message: "canceling statement due to statement timeout" }))).toBe("none");
    expect(batchRetryAfter(errorWith({ message: "Connection terminated unexpectedly" }))).toBe("none");
    expect(batchRetryAfter(deadlinePassed())).toBe("unexpired");
    expect(batchRetryAfter(Object.assign(new Error("timeout"), { name: "KnexTimeoutError" }))).toBe("unexpired");
    expect(batchRetryAfter(errorWith({ code: "23505", message: "duplicate key" }))).toBe("each");
    expect(batchRetryAfter(errorWith({ code: "22P02", message: "invalid input syntax" }))).toBe("each");
  });
});
