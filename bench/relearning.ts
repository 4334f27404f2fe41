/**
 * npm run bench -- relearning [--quick]
 *
 * ai-ranking's relearning alone, as `creates` drives it but without the rest
 * of the system, so that its cost per run does not move with how many creates
 * a second the loaded machine allows: one organizer with a meeting an hour
 * (each with one of ten guests who hold no account, as `creates` makes them),
 * a history of 3,000 such meetings learned once, then runs that each follow
 * a batch of new meetings (200, about what half a second of creates flat out
 * adds). Per run: CPU µs of this process during relearnQueued, CPU µs of the
 * database backend (one connection: pg_backend_pid), and statements (counted
 * as knex sends them, BEGIN and COMMIT included); beside it, the backend's
 * CPU for storing each run's meetings (saveMeetings, one statement), which
 * the consumption of meeting events costs per batch.
 */
import { openSchema } from "@sched/db";
import { createTestDatabase } from "@sched/testing";
import { loadavg } from "node:os";
import { relearnQueued } from "../services/ai-ranking/src/consumers/relearning.js";
import { saveMeetings, savePerson, type StoredMeeting } from "../services/ai-ranking/src/db/queries.js";
import { aiRankingService } from "../services/ai-ranking/src/index.js";
import { processCpuUs } from "./lib/cpuTime.js";

const HOUR = 3_600_000;
const HISTORY = 3_000;
const PER_RUN = 200;
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function benchRelearning(options: { quick: boolean }): Promise<void> {
  const database = await createTestDatabase();
  const db = await openSchema({ kind: "postgres", url: database.url, poolMax: 1 }, aiRankingService.schema, aiRankingService.migrations);
  try {
    const organizer = { userId: "usr_bench", email: "bench@example.com", name: "Bench", timezone: "UTC", preferences: null };
    await savePerson(db, { ...organizer, updatedAt: new Date() });
    const now = Date.now();
    // As `creates` makes them: from tomorrow on, an hour apart; the history already stored reaches about 125 days ahead.
    const base = Math.ceil(now / HOUR) * HOUR + 24 * HOUR;
    let next = 0;
    const meetings = (n: number): StoredMeeting[] =>
      Array.from({ length: n }, () => {
        const i = next++;
        const start = base + i * HOUR;
        return { meetingId: `mtg_${i}`, mode: "test", sequence: 1, confirmed: true, start: new Date(start), end: new Date(start + HOUR / 2), scheduledAt: new Date(now), attendees: [organizer.email, `guest${i % 10}@example.com`], seriesId: null };
      });
    for (let i = 0; i < HISTORY; i += 500) await saveMeetings(db, meetings(500));
    await relearnQueued(db, now);

    const { rows } = (await db.raw("select pg_backend_pid() as pid")) as { rows: Array<{ pid: number }> };
    const backend = rows[0]!.pid;
    let statements = 0;
    db.on("query", () => statements++);
    const runs = options.quick ? 40 : 120;
    const node: number[] = [];
    const postgres: number[] = [];
    const counted: number[] = [];
    const storing: number[] = [];
    console.log(`relearning: ${HISTORY} meetings learned, then ${runs} runs after ${PER_RUN} new meetings each; load average ${load()}`);
    for (let r = 0; r < runs; r++) {
      const stored = processCpuUs(backend);
      await saveMeetings(db, meetings(PER_RUN));
      storing.push(processCpuUs(backend) - stored);
      const before = { node: process.cpuUsage(), postgres: processCpuUs(backend), statements };
      const relearned = await relearnQueued(db, now);
      const used = process.cpuUsage(before.node);
      node.push(used.user + used.system);
      postgres.push(processCpuUs(backend) - before.postgres);
      counted.push(statements - before.statements);
      if (relearned !== 1) throw new Error(`a run relearned ${relearned} people, not the organizer alone`);
    }
    console.log(`\nper run, median of ${runs} (µs of CPU; Postgres counts in 10 ms ticks, so its median is coarse: the mean beside it)`);
    console.log(`| | median | mean |\n|---|---|---|`);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`| this process (relearnQueued) | ${median(node).toFixed(0)} | ${mean(node).toFixed(0)} |`);
    console.log(`| its Postgres backend | ${median(postgres).toFixed(0)} | ${mean(postgres).toFixed(0)} |`);
    console.log(`| statements | ${median(counted)} | ${mean(counted).toFixed(1)} |`);
    console.log(`| the backend storing the run's ${PER_RUN} meetings (not relearning) | ${median(storing).toFixed(0)} | ${mean(storing).toFixed(0)} |`);
    console.log(`relearning_node_us=${mean(node).toFixed(0)} relearning_postgres_us=${mean(postgres).toFixed(0)} statements_per_run=${mean(counted).toFixed(1)} storing_postgres_us=${mean(storing).toFixed(0)} load=${load()}`);
  } finally {
    await db.destroy();
    await database.drop();
  }
}
