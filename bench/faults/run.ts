/**
 * npm run faults -- [--faults kill,nats,postgres,redis] [--rate 20] [--seconds 20] [--logs <dir>]
 *
 * Runs the system as `npm run cluster` does, every service and the gateway a
 * process of its own, on throwaway servers of the suite's own (NATS with
 * JetStream, Redis, a fresh Postgres cluster, an SMTP catcher; all on free
 * loopback ports, all removed at the end). Under steady meeting writes from
 * live keys it breaks one thing at a time: kill -9 of each process (then
 * restarted), a NATS restart, a Postgres fast shutdown and start, a Redis
 * restart. Once the system has settled it compares what the clients were
 * told with the meetings that exist and the invites that were e-mailed, prints
 * a summary per fault and exits 1 when anything was lost, doubled, a 5xx
 * other than 503 or a hang.
 */
import { DEV_IDEMPOTENCY_SEAL_KEY, GATEWAY_DEFAULTS } from "@sched/gateway";
import { SmtpFake } from "@sched/testing/smtp";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { arch, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { allReady, PROCESS_NAMES, startProducts, type Products } from "./cluster.js";
import { attemptStats } from "./domain/attempts.js";
import { findings, type FaultResult } from "./domain/findings.js";
import { checkInvites } from "./domain/invites.js";
import { checkWrites } from "./domain/writes.js";
import { parseOptions, USAGE, type FaultOptions } from "./options.js";
import { runPhase, type PhaseRun } from "./phase.js";
import { listMeetings, mailsTo, owingMeetings } from "./readback.js";
import { printReport } from "./report.js";
import { startServers, type Servers } from "./servers.js";

/** A request answered later than the gateway's bus deadline plus this margin is a hang. */
const HANG_MARGIN_MS = 2_000;
const HANG_BOUND_MS = GATEWAY_DEFAULTS.busTimeoutMs + HANG_MARGIN_MS;
/**
 * A write is retried for this long before the client gives up: past the
 * 60 s after which meetings takes over an idempotency claim left by a
 * process that died holding it.
 */
const RETRY_BUDGET_MS = 75_000;
/** After a fault: how long its invites may take to arrive; after the last, how long the catcher must then stay quiet. */
const SETTLE_MS = 180_000;
const QUIET_MS = 5_000;
const UID_DOMAIN = "faults.invalid";

let options: FaultOptions;
try {
  options = parseOptions(process.argv.slice(2), PROCESS_NAMES);
} catch (err) {
  console.error(`${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}

const began = Date.now();
const say = (line: string) => console.log(`[${((Date.now() - began) / 1_000).toFixed(0).padStart(4)} s] ${line}`);
const cpu = cpus();
console.log(
  `fault suite: node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "?"} (${arch()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}; ${options.rate} writes/s for ${options.seconds} s around each of: ${options.faults.join(", ")}`,
);

const dir = mkdtempSync(join(tmpdir(), "sched-faults-"));
const logs = options.logs ?? join(dir, "logs");
mkdirSync(logs, { recursive: true });
const smtp = new SmtpFake();
let servers: Servers | undefined;
let products: Products | undefined;

/** Stops every process the suite started, then removes the temporary folder. Runs once. */
let cleaning: Promise<void> | undefined;
const cleanUp = () =>
  (cleaning ??= (async () => {
    const daemons = [...(products?.processes.values() ?? [])];
    await Promise.all(daemons.map((d) => d.stop("SIGKILL")));
    if (servers) await Promise.all([servers.nats.stop("SIGTERM"), servers.redis.stop("SIGTERM"), servers.postgres.stop("SIGINT")]);
    await Promise.all([...daemons, ...(servers ? [servers.nats, servers.redis, servers.postgres] : [])].map((d) => d.close()));
    await smtp.stop();
    rmSync(dir, { recursive: true, force: true });
  })());
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping and cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}
// Whatever goes wrong, nothing the suite started outlives it.
process.once("uncaughtException", (err) => {
  console.error(err);
  void cleanUp().finally(() => process.exit(2));
});

try {
  const smtpUrl = await smtp.start();
  servers = await startServers(dir, logs);
  say(`NATS ${servers.natsUrl}, Redis ${servers.redisUrl}, Postgres ${servers.databaseUrl}, SMTP ${smtpUrl}; starting ${PROCESS_NAMES.join(", ")}`);
  const adminToken = `adm_faults_${randomBytes(16).toString("hex")}`;
  const env = {
    NATS_URL: servers.natsUrl,
    DATABASE_URL: servers.databaseUrl,
    REDIS_URL: servers.redisUrl,
    BUS_NAMESPACE: "faults",
    ADMIN_TOKEN: adminToken,
    IDEMPOTENCY_SEAL_KEY: DEV_IDEMPOTENCY_SEAL_KEY,
    LOG_LEVEL: "warn",
    SMTP_URL: smtpUrl,
    INVITES_UID_DOMAIN: UID_DOMAIN,
  };
  const started = await startProducts(env, logs);
  products = started;
  say(`gateway on ${started.gatewayUrl}; logs in ${logs}`);

  const runs: PhaseRun[] = [];
  for (const fault of options.faults) {
    const run = await runPhase({
      fault,
      gatewayUrl: started.gatewayUrl,
      adminToken,
      rate: options.rate,
      seconds: options.seconds,
      limits: { answerTimeoutMs: HANG_BOUND_MS + 10_000, retryBudgetMs: RETRY_BUDGET_MS },
      inject: () => inject(fault, servers!, started),
    });
    runs.push(run);
    const stats = attemptStats(run.attempts, { faultAt: run.faultAt, hangBoundMs: HANG_BOUND_MS });
    say(`${fault}: ${run.creates.length} creates, ${run.updates.length} updates, ${stats.requests} requests; restart took ${(run.faultMs / 1_000).toFixed(1)} s`);
    await until(() => allReady(started), 120_000, `every process ready after ${fault}`);
    // The next fault must not strike this one's invites still on their way: each fault is judged on its own.
    await settle([run], started.gatewayUrl, 0);
  }

  say("settling: waiting for every invite owed and a quiet mail catcher");
  const results = await settle(runs, started.gatewayUrl, QUIET_MS);
  say("settled");
  printReport(results, HANG_BOUND_MS);
  const failed = results.filter((r) => findings(r).length > 0);
  console.log(`\n${failed.length === 0 ? "every fault survived" : `${failed.length} of ${results.length} faults found problems`}; ${((Date.now() - began) / 1_000).toFixed(0)} s`);
  await cleanUp();
  process.exit(failed.length === 0 ? 0 : 1);
} catch (err) {
  console.error(err);
  await cleanUp();
  process.exit(2);
}

/** Breaks one thing and brings it back, as a supervisor would: kill -9 and start again; restart a server. */
async function inject(fault: string, s: Servers, p: Products): Promise<void> {
  if (fault.startsWith("kill:")) return p.processes.get(fault.slice(5))!.restart("SIGKILL");
  if (fault === "nats") return s.nats.restart("SIGTERM");
  // SIGINT is Postgres's fast shutdown: open transactions are rolled back, connections cut.
  if (fault === "postgres") return s.postgres.restart("SIGINT");
  if (fault === "redis") return s.redis.restart("SIGTERM");
  throw new Error(`unknown fault ${fault}`);
}

/**
 * Reads back what exists until every invite owed has arrived (or the time
 * is up) and the catcher has been quiet for `quietMs`, then checks each fault.
 */
async function settle(runs: readonly PhaseRun[], gatewayUrl: string, quietMs: number): Promise<FaultResult[]> {
  const end = Date.now() + SETTLE_MS;
  let seen = -1;
  let quietSince = Date.now();
  for (;;) {
    // The read-back goes through the API, which may still be recovering from the last fault.
    const results = await checkAll(runs, gatewayUrl).catch((err: Error) => {
      if (Date.now() > end) throw err;
      return undefined;
    });
    if (!results) {
      await new Promise((r) => setTimeout(r, 1_000));
      continue;
    }
    if (smtp.messages.length !== seen) [seen, quietSince] = [smtp.messages.length, Date.now()];
    const waiting = results.reduce((n, r) => n + r.invites.lost, 0);
    if ((waiting === 0 && Date.now() - quietSince >= quietMs) || Date.now() > end) return results;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

async function checkAll(runs: readonly PhaseRun[], gatewayUrl: string): Promise<FaultResult[]> {
  const results: FaultResult[] = [];
  for (const run of runs) {
    const existing = await listMeetings(gatewayUrl, run.apiKey);
    results.push({
      fault: run.fault,
      faultMs: run.faultMs,
      loadAverage: run.loadAverage,
      requests: attemptStats(run.attempts, { faultAt: run.faultAt, hangBoundMs: HANG_BOUND_MS }),
      writes: checkWrites(run.creates, run.updates, existing),
      invites: checkInvites(owingMeetings(existing, UID_DOMAIN), mailsTo(smtp.messages, run.participants)),
    });
  }
  return results;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
