import { eventually, freePort, POSTGRES_ADMIN_URL, startRedisServer } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A nats-server with JetStream for one run alone, so that every CPU second it spends is the run's. */
export async function startNats(storeDir: string): Promise<{ url: string; pid: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: ["ignore", "ignore", "pipe"] });
  const url = `nats://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error("nats-server exited");
    const res = await fetch(`http://127.0.0.1:${port}`).catch((err: { cause?: { code?: string } }) => err.cause?.code);
    return res !== "ECONNREFUSED";
  }, 10_000, 50);
  return { url, pid: child.pid!, child };
}

/** Postgres's server processes serving the connections to one database; with `application`, only that application's (a service's schema). */
export async function backendsOf(admin: pg.Client, database: string, application?: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and ($2::text is null or application_name = $2)",
    [database, application ?? null],
  );
  return rows.map((r) => r.pid);
}

/** What a run cleans up at its end, last first. */
export type Cleanup = Array<() => Promise<unknown> | unknown>;

/**
 * A work folder, a nats-server and a redis-server of the run's own and an
 * admin connection to the local Postgres, each stopped by `cleanup`.
 */
export async function startOwnServers(name: string, cleanup: Cleanup): Promise<{ work: string; nats: Awaited<ReturnType<typeof startNats>>; redisUrl: string; redisPid: number; admin: pg.Client }> {
  const work = mkdtempSync(join(tmpdir(), `${name}-`));
  cleanup.push(() => rmSync(work, { recursive: true, force: true }));
  const nats = await startNats(join(work, "jetstream"));
  cleanup.push(() => nats.child.kill("SIGKILL"));
  const redis = await startRedisServer();
  cleanup.push(() => redis.kill());
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  cleanup.push(() => admin.end());
  return { work, nats, redisUrl: `redis://127.0.0.1:${redis.port}`, redisPid: redis.pid, admin };
}
