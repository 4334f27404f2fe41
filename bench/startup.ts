/**
 * How fast `npm start` answers and how much it leaves on disk: the standalone
 * entry point, as `npm start` runs it, on a fresh data folder (time to the
 * first 200 on GET /v1/me with the demo key it prints), then restarted on the
 * same folder; and the in-memory standalone system the end-to-end tests start.
 */
import { createLogger } from "@sched/logging";
import { System } from "@sched/standalone";
import { initialisedFolderCache } from "@sched/db/embedded";
import { folderBytes, freePort } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchOptions } from "./meetings.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ANSWER_DEADLINE_MS = 180_000;

interface Started {
  child: ChildProcess;
  output: () => string;
}

function startEntryPoint(dataDir: string, port: number): Started {
  // As `npm start` runs it, in this environment with the port and the folder added.
  const entryPoint = [process.execPath, "--conditions=@sched/source", "--import", "tsx", "--import", "@sched/telemetry/register", "services/standalone/src/main.ts"];
  const child = spawn("env", [`PORT=${port}`, `DATA_DIR=${dataDir}`, "LOG_LEVEL=warn", ...entryPoint], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** Milliseconds from `since` to the first 200 on GET /v1/me with the key the output (or `key`) names. */
async function untilAnswered(started: Started, port: number, since: number, key: string | undefined): Promise<{ ms: number; key: string }> {
  while (performance.now() - since < ANSWER_DEADLINE_MS) {
    if (started.child.exitCode !== null) throw new Error(`npm start exited: ${started.output()}`);
    const known = key ?? /Bearer (sk_test_\w+)/.exec(started.output())?.[1];
    if (known) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { Authorization: `Bearer ${known}` } }).catch(() => undefined);
      if (res?.status === 200) return { ms: performance.now() - since, key: known };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no 200 within ${ANSWER_DEADLINE_MS} ms: ${started.output()}`);
}

async function stop(started: Started): Promise<void> {
  started.child.kill("SIGTERM");
  if (started.child.exitCode === null) await once(started.child, "exit");
}

/** Time to the first 200 of one start on `dataDir` (with the demo key it prints, or `key`). */
async function timedStart(dataDir: string, key: string | undefined): Promise<{ ms: number; key: string; output: string }> {
  const port = await freePort();
  const since = performance.now();
  const started = startEntryPoint(dataDir, port);
  try {
    return { ...(await untilAnswered(started, port, since, key)), output: started.output() };
  } finally {
    await stop(started);
  }
}

export async function benchStartup(_options: BenchOptions): Promise<void> {
  const folders = [mkdtempSync(join(tmpdir(), "sched-startup-")), mkdtempSync(join(tmpdir(), "sched-startup-"))];
  const [afterInstall, fresh] = folders as [string, string];
  const s = (ms: number) => `${(ms / 1_000).toFixed(1)} s`;
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  try {
    // As right after `npm ci`: nothing cached yet.
    rmSync(initialisedFolderCache(), { recursive: true, force: true });
    const first = await timedStart(afterInstall, undefined);
    console.log(`first start after npm ci (fresh data folder, nothing cached) to first 200 on GET /v1/me: ${s(first.ms)}`);
    const another = await timedStart(fresh, undefined);
    console.log(`first start on another fresh data folder:                                       ${s(another.ms)}`);
    const sizeAfterFirst = folderBytes(fresh);
    const again = await timedStart(fresh, another.key);
    console.log(`restart on that folder:                                                         ${s(again.ms)}`);
    console.log(`data folder after its first start: ${mb(sizeAfterFirst)}, after the restart: ${mb(folderBytes(fresh))}`);
    const since = performance.now();
    const system = await new System({ wiring: { kind: "standalone" }, logger: createLogger({ name: "bench", level: "silent" }), port: 0, adminToken: "adm_bench_token_0123456789" }).start();
    console.log(`in-memory standalone system (the tests' startTestSystem) started in ${s(performance.now() - since)}`);
    await system.stop();
    console.log(`\nthe first start's output:\n${first.output}`);
  } finally {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}
