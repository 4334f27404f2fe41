import { eventually, freePort } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import type pg from "pg";

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
