import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { eventually, isListening } from "./index.js";
import { listeningPorts } from "./listeningPorts.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServiceProcess {
  /** The PORT given to it (the gateway's HTTP port), and its URL. */
  port: number;
  /** Its operating-system process id (for reading its CPU time). */
  pid: number;
  url: string;
  /** Its health server (HEALTH_PORT): /livez, /readyz, /metrics. */
  healthUrl: string;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  /** When it exited, and with which code. */
  exited: Promise<{ code: number | null; at: number }>;
  /** Sends a signal without waiting for the exit (a test watching a graceful shutdown). */
  signal(signal: NodeJS.Signals): void;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

function track(child: ChildProcess, port: number, healthUrl = ""): ServiceProcess {
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once("exit", (code) => resolve({ code, at: Date.now() })));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    port,
    pid: child.pid ?? 0,
    url: `http://127.0.0.1:${port}`,
    healthUrl,
    output: () => output,
    exited,
    signal: (signal) => {
      if (running()) child.kill(signal);
    },
    kill: async (signal = "SIGKILL") => {
      if (running()) child.kill(signal);
      await exited;
    },
  };
}

export interface ProcessOptions {
  /** Preload the OpenTelemetry SDK. */
  telemetry?: boolean;
  /** More options for node (a benchmark's `--cpu-prof`, which NODE_OPTIONS does not take). */
  nodeArgs?: string[];
  /** Modules to preload once TypeScript can be (a benchmark's statement counter). */
  imports?: string[];
  /** PORT and HEALTH_PORT of the first start, in place of free ones (a test of a port taken meanwhile). */
  firstPorts?: { port: number; healthPort: number };
}

/**
 * A port is picked free, then given back for the process to listen on: meanwhile another
 * process (a test beside, an outgoing connection's ephemeral port) may take it. A start that
 * meets that starts again on newly picked ports, this many times in all.
 */
const PORT_ATTEMPTS = 3;

/** A port given to a process was someone else's by the time the process listened on it. */
class PortTakenMeanwhile extends Error {}

/** Starts on ports picked free (or on `first`), again on new ones when one was taken meanwhile. */
async function onFreePorts<T>(count: number, first: number[] | undefined, start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports = attempt === 1 && first ? first : await Promise.all(Array.from({ length: count }, () => freePort()));
    try {
      return await start(ports);
    } catch (err) {
      if (!(err instanceof PortTakenMeanwhile) || attempt === PORT_ATTEMPTS) throw err;
    }
  }
}

/** Fails with PortTakenMeanwhile when the process ended because a port it was given was taken; else with why it ended. */
async function endedBeforeReady(name: string, child: ChildProcess, started: ServiceProcess): Promise<never> {
  // Its last words arrive once its pipes close, which may be after the exit.
  if (!(child.stdout?.closed && child.stderr?.closed)) await new Promise((resolve) => child.once("close", resolve));
  // Node's error code; redis-server's own words.
  if (/EADDRINUSE|Address already in use/.test(started.output())) throw new PortTakenMeanwhile(`${name}: a port it was given was taken meanwhile`);
  throw new Error(`${name} exited: ${started.output()}`);
}

/** Fails with PortTakenMeanwhile unless the process itself listens on `port` (not another one answering on it). */
function expectListening(name: string, started: ServiceProcess, port: number): void {
  const ports = listeningPorts(started.pid);
  if (ports && !ports.has(port)) throw new PortTakenMeanwhile(`${name}: its port ${port} was taken meanwhile by another process, which answers there`);
}

/**
 * A service (`services/<name>/src/main.ts`) as a process of its own, as
 * production runs it, on free PORT and HEALTH_PORT; resolves once its
 * readiness probe says so. `telemetry` preloads the OpenTelemetry SDK.
 */
export function startServiceProcess(name: string, env: Record<string, string>, options: ProcessOptions = {}): Promise<ServiceProcess> {
  const first = options.firstPorts && [options.firstPorts.port, options.firstPorts.healthPort];
  return onFreePorts(2, first, ([port, healthPort]) => startServiceOn(name, env, options, port!, healthPort!));
}

async function startServiceOn(name: string, env: Record<string, string>, options: ProcessOptions, port: number, healthPort: number): Promise<ServiceProcess> {
  const preload = [...(options.telemetry ? ["@sched/telemetry/register"] : []), ...(options.imports ?? [])].flatMap((module) => ["--import", module]);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--conditions=@sched/source", "--import", "tsx", ...preload, `services/${name}/src/main.ts`], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port), HEALTH_PORT: String(healthPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const service = track(child, port, `http://127.0.0.1:${healthPort}`);
  try {
    const started = Date.now();
    let worked = { at: started, ticks: cpuTicks(service.pid) };
    for (;;) {
      if (child.exitCode !== null) await endedBeforeReady(name, child, service);
      const res = await fetch(`${service.healthUrl}/readyz`).catch(() => undefined);
      if (res?.status === 200) break;
      const now = Date.now();
      const ticks = cpuTicks(service.pid);
      if (ticks !== worked.ticks) worked = { at: now, ticks };
      if (startGivenUp(now - started, now - worked.at)) throw new Error(`${name} not ready after ${Math.round((now - started) / 1000)} s: ${service.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Ready once its start-up, the listening on its PORT included, is over; but the answer may have come from another process.
    expectListening(name, service, healthPort);
  } catch (err) {
    await service.kill();
    throw err;
  }
  return service;
}

/** How long a process may take to become ready on any machine; after it, only while it keeps working (see startGivenUp). */
const READY_WITHIN_MS = 90_000;
/** A process that used no CPU for this long past READY_WITHIN_MS waits for something that does not come. */
const STALLED_AFTER_MS = 15_000;
/** The longest a process that keeps working is waited for. */
const READY_AT_MOST_MS = 600_000;

/**
 * Whether to stop waiting for a starting process to become ready, `elapsedMs`
 * after its start and `idleMs` since it last used CPU. On a loaded machine a
 * start (TypeScript compiled by tsx, migrations) takes as long as the CPU it
 * is given allows: past READY_WITHIN_MS the wait goes on while the process
 * keeps working, not while it waits for nothing.
 */
export function startGivenUp(elapsedMs: number, idleMs: number): boolean {
  return elapsedMs > READY_AT_MOST_MS || (elapsedMs > READY_WITHIN_MS && idleMs > STALLED_AFTER_MS);
}

/** CPU time a process has used so far (user and system, in clock ticks), or undefined where /proc does not tell. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command's name: state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The seal key every gateway a test starts shares, as a deployment's replicas do; unless `env` gives another. */
const TEST_IDEMPOTENCY_SEAL_KEY = randomBytes(32).toString("base64");

/**
 * The node options a gateway process runs with: @sched/gateway's
 * GATEWAY_NODE_OPTIONS, which says why. A library imports no service, so
 * they are said again here; services/standalone's test keeps the two equal,
 * deploy/test's keeps the Dockerfile's CMD equal to these.
 */
export const GATEWAY_NODE_OPTIONS: readonly string[] = ["--single-threaded-gc"];

/** A gateway process, as a replica runs in production. */
export function startGatewayProcess(env: Record<string, string>, options: ProcessOptions = {}): Promise<ServiceProcess> {
  return startServiceProcess("gateway", { IDEMPOTENCY_SEAL_KEY: TEST_IDEMPOTENCY_SEAL_KEY, ...env }, { ...options, nodeArgs: [...GATEWAY_NODE_OPTIONS, ...(options.nodeArgs ?? [])] });
}

/**
 * A throwaway redis-server that keeps nothing on disk, on `port` (a free one by default,
 * picked anew when it was taken meanwhile; a port given is the one its clients were told).
 */
export function startRedisServer(port?: number): Promise<ServiceProcess> {
  return port === undefined ? onFreePorts(1, undefined, ([chosen]) => startRedisOn(chosen!)) : startRedisOn(port);
}

async function startRedisOn(port: number): Promise<ServiceProcess> {
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "pipe"] });
  const redis = track(child, port);
  try {
    await eventually(async () => {
      if (child.exitCode !== null) await endedBeforeReady("redis-server", child, redis);
      return isListening(`redis://127.0.0.1:${port}`, port);
    }, 10_000, 50);
    expectListening("redis-server", redis, port);
  } catch (err) {
    await redis.kill();
    throw err;
  }
  return redis;
}
