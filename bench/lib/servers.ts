import { eventually, freePort, POSTGRES_ADMIN_URL, startRedisServer } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A nats-server with JetStream for one run alone, so that every CPU second it spends is the run's. */
export async function startNats(storeDir: string): Promise<{ url: string; pid: number; child: ChildProcess; monitorUrl: string }> {
  const port = await freePort();
  const monitorPort = await freePort();
  const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitorPort), "-js", "-sd", storeDir], { stdio: ["ignore", "ignore", "pipe"] });
  const url = `nats://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error("nats-server exited");
    const res = await fetch(`http://127.0.0.1:${port}`).catch((err: { cause?: { code?: string } }) => err.cause?.code);
    return res !== "ECONNREFUSED";
  }, 10_000, 50);
  return { url, pid: child.pid!, child, monitorUrl: `http://127.0.0.1:${monitorPort}` };
}

/** Messages each client connection of a nats-server sent it (`in`) and was sent (`out`) so far, by connection name. */
export async function natsMessagesByConnection(monitorUrl: string): Promise<Map<string, { in: number; out: number }>> {
  const res = await fetch(`${monitorUrl}/connz?limit=1000`);
  const { connections } = (await res.json()) as { connections: Array<{ name?: string; in_msgs: number; out_msgs: number }> };
  const byName = new Map<string, { in: number; out: number }>();
  for (const c of connections) {
    const seen = byName.get(c.name ?? "") ?? { in: 0, out: 0 };
    byName.set(c.name ?? "", { in: seen.in + c.in_msgs, out: seen.out + c.out_msgs });
  }
  return byName;
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
