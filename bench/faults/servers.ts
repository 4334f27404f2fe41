import { isListening } from "@sched/testing";
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { Daemon, startOnFreePorts } from "./daemon.js";

type Started = Awaited<ReturnType<typeof startOnFreePorts>>;

const NATS_SERVER = "/usr/sbin/nats-server";
const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

/** NATS with JetStream, Redis and a Postgres cluster of the suite's own, on free loopback ports, with their data under a folder. */
export interface Servers {
  natsUrl: string;
  redisUrl: string;
  databaseUrl: string;
  nats: Daemon;
  redis: Daemon;
  postgres: Daemon;
}

export async function startServers(dir: string, logs: string): Promise<Servers> {
  const natsStore = join(dir, "nats");
  mkdirSync(natsStore);
  const pgData = initdb(dir);
  const started = await Promise.allSettled([
    startOnFreePorts(1, ([port]) => {
      const url = `nats://127.0.0.1:${port}`;
      const args = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", natsStore];
      return new Daemon({ name: "nats-server", command: NATS_SERVER, args, ready: () => isListening(url, port!), startTimeoutMs: 20_000 }, join(logs, "nats.log"));
    }),
    startOnFreePorts(1, ([port]) => {
      const url = `redis://127.0.0.1:${port}`;
      const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
      return new Daemon({ name: "redis-server", command: "redis-server", args, ready: () => isListening(url, port!), startTimeoutMs: 20_000 }, join(logs, "redis.log"));
    }),
    startOnFreePorts(1, ([port]) => {
      // fsync off: the cluster is thrown away, and a fast shutdown writes everything out anyway.
      const args = ["-D", pgData.dir, "-p", String(port), "-k", pgData.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"];
      const url = postgresUrl(port!);
      return new Daemon({ name: "postgres", command: join(POSTGRES_BIN, "postgres"), args, options: pgData.owner, ready: () => answers(url), startTimeoutMs: 60_000 }, join(logs, "postgres.log"));
    }),
  ]);
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    // What did start is stopped, so a failed start leaves nothing running.
    await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value.daemon.stop("SIGKILL") : undefined)));
    throw failed.reason;
  }
  const [nats, redis, postgres] = started.map((s) => (s as PromiseFulfilledResult<Started>).value) as [Started, Started, Started];
  return {
    natsUrl: `nats://127.0.0.1:${nats.ports[0]}`,
    redisUrl: `redis://127.0.0.1:${redis.ports[0]}`,
    databaseUrl: postgresUrl(postgres.ports[0]!),
    nats: nats.daemon,
    redis: redis.daemon,
    postgres: postgres.daemon,
  };
}

const postgresUrl = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;

/**
 * A fresh cluster in `dir`/pg. Postgres refuses to run as root, so when the
 * suite is root the cluster belongs to, and runs as, the postgres user.
 */
function initdb(dir: string): { dir: string; owner: { uid?: number; gid?: number } } {
  const data = join(dir, "pg");
  mkdirSync(data, { mode: 0o700 });
  let owner = {};
  if (process.getuid?.() === 0) {
    const [uid, gid] = [idOf("-u"), idOf("-g")];
    owner = { uid, gid };
    chmodSync(dir, 0o755);
    chownSync(data, uid, gid);
  }
  execFileSync(join(POSTGRES_BIN, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"], { ...owner, stdio: "ignore" });
  return { dir: data, owner };
}

function idOf(flag: "-u" | "-g"): number {
  return Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}
