/**
 * node --conditions=@sched/source --import tsx bench/outboxRelay.ts [rounds]
 *
 * CPU per event of the outbox relay on Postgres, as the meetings service runs
 * it: 3,000 `meeting.created` rows a round are committed to an outbox, then
 * the relay (batches of 50, as configured in production) claims, publishes to
 * JetStream and marks them. Counted apart: this process (the relay and its
 * bus), the Postgres backends of the test database, and a nats-server started
 * for the run alone. The first rounds warm V8 up and are left out of the
 * medians. Reads CPU time, so a busy machine makes it slower, not dearer; to
 * compare two trees, run it in each in turn. Needs the local Postgres.
 */
import { connectNatsBus } from "@sched/bus";
import { openSchema } from "@sched/db";
import { createLogger } from "@sched/logging";
import { outboxMigration, startOutboxRelay } from "@sched/outbox";
import { meetingCreated, meetingStreamEvents } from "@sched/proto";
import { createTestDatabase, POSTGRES_ADMIN_URL, uniqueSuffix } from "@sched/testing";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { processCpuUs } from "./lib/cpuTime.js";
import { createdEvent } from "./lib/meetingEvent.js";
import { backendsOf, startNats } from "./lib/servers.js";

const ROWS = 3_000;
const ROUNDS = Number(process.argv[2] ?? 8);
const WARM_UP_ROUNDS = 2;

const logger = createLogger({ name: "outbox-relay-bench", level: "warn" });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ownCpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const created = createdEvent(0);

const work = mkdtempSync(join(tmpdir(), "outbox-relay-bench-"));
const nats = await startNats(join(work, "jetstream"));
const database = await createTestDatabase();
const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
await admin.connect();
const schema = "outbox_bench";
const db = await openSchema({ kind: "postgres", url: database.url }, schema, [outboxMigration("001_outbox")]);
const bus = await connectNatsBus({ servers: nats.url, namespace: `bench_relay_${uniqueSuffix()}`, name: "outbox-relay-bench", logger });
const relay = startOutboxRelay({ db, bus, logger, events: meetingStreamEvents, pollMs: 60_000 });
try {
  // Not the admin connection: it is on another database.
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  // The relay's backends (their application name is the schema): not the one that inserts the rows and counts what is left, nor autovacuum.
  const backends = async () => backendsOf(admin, new URL(database.url).pathname.slice(1), schema);
  const waitForRelay = async () => {
    while ((await sql.query(`select count(*)::int as c from ${schema}.outbox where published_at is null`)).rows[0].c > 0) await new Promise((r) => setTimeout(r, 100));
  };
  const node: number[] = [];
  const postgres: number[] = [];
  const natsServer: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await sql.query(
      `insert into ${schema}.outbox (subject, payload, msg_id) select $1, $2::jsonb, $3 || g from generate_series(1, ${ROWS}) g`,
      [meetingCreated.subject, JSON.stringify(created), `evt-${round}-${uniqueSuffix()}-`],
    );
    const pids = await backends();
    const before = { node: ownCpu(), pg: pids.map(processCpuUs), nats: processCpuUs(nats.pid) };
    relay.wake();
    await waitForRelay();
    const pidsAfter = await backends();
    const pgUsed = pidsAfter.reduce((sum, pid) => sum + Math.max(0, processCpuUs(pid) - (before.pg[pids.indexOf(pid)] ?? 0)), 0);
    const used = { node: (ownCpu() - before.node) / ROWS, pg: pgUsed / ROWS, nats: (processCpuUs(nats.pid) - before.nats) / ROWS };
    if (round >= WARM_UP_ROUNDS) {
      node.push(used.node);
      postgres.push(used.pg);
      natsServer.push(used.nats);
    }
    console.log(`round ${round + 1}${round < WARM_UP_ROUNDS ? " (warm-up)" : ""}: relay process ${used.node.toFixed(1)}, Postgres ${used.pg.toFixed(1)}, nats-server ${used.nats.toFixed(1)} µs/event`);
  }
  console.log(`median of rounds ${WARM_UP_ROUNDS + 1}–${ROUNDS}: relay process ${median(node).toFixed(1)}, Postgres ${median(postgres).toFixed(1)}, nats-server ${median(natsServer).toFixed(1)} µs/event`);
  await sql.end();
} finally {
  await relay.stop();
  await bus.close();
  await db.destroy();
  await admin.end();
  await database.drop();
  nats.child.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
