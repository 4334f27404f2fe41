import { readFile } from "node:fs/promises";
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { cpuWaitUs } from "./cpuPressure.js";
import { summarize, type Summary } from "./stats.js";

export interface LoadRequest {
  method: string;
  /** Path and query, e.g. /v1/meetings?limit=100. */
  path: string;
  /** JSON text. */
  body?: string;
}

export interface LoadPlan {
  /** http://127.0.0.1:<port>; any other host is refused. */
  baseUrl: string;
  headers: Record<string, string>;
  /** Sent in order, one every 1/ratePerSecond seconds. */
  requests: LoadRequest[];
  ratePerSecond: number;
  /** Most requests in flight at once; a request due while all are busy waits (and counts as late). */
  concurrency: number;
}

export interface LoadResult {
  latenciesMs: number[];
  /** When each request was sent, ms from the run's start. */
  sentAtMs: number[];
  /** The load driver's own garbage collections, [start, end] in ms from the run's start. */
  driverPausesMs: Array<[number, number]>;
  /** Count by HTTP status; 0 = no response. */
  statuses: Record<string, number>;
  elapsedMs: number;
  /** Requests sent more than 5 ms after they were due. */
  late: number;
  maxLagMs: number;
}

export interface LoadReport extends Summary {
  /** Every request's latency, in the order sent (ms). */
  latenciesMs: number[];
  /** When each was sent, ms from the run's start. */
  sentAtMs: number[];
  /** The load driver's own collections, [start, end] ms from the run's start: time it measured but did not wait for. */
  driverPausesMs: Array<[number, number]>;
  /** Completed requests per second over the whole run. */
  throughput: number;
  statuses: Record<string, number>;
  late: number;
  maxLagMs: number;
  /** CPU time of this whole process (the system and the load driver) per request. */
  cpuMsPerRequest: number;
  /** Share of the run the main thread (gateway and services) was busy, 0–1. */
  mainThreadBusy: number;
  /** Share of the run the embedded database's thread was busy, 0–1 (standalone wiring only). */
  databaseThreadBusy: number | undefined;
  /** Share of the run during which some task of the machine waited for a core (cpuPressure.ts), 0–1; undefined where unknown. */
  cpuPressure: number | undefined;
}

/** A thread of the system besides the main one whose busy share a run reports: the embedded database's (ThreadedPGlite). */
export interface ObservedThread {
  threadUtilization(before?: EventLoopUtilization): EventLoopUtilization;
  /** Bytes its JavaScript heap holds. */
  threadHeapUsed(): Promise<number>;
}

/** The load worker as JavaScript: its TypeScript (type annotations only) transpiled once, in this thread. */
let workerSource: Promise<string> | undefined;
function loadWorkerSource(): Promise<string> {
  workerSource ??= (async () => {
    const { default: ts } = await import("typescript");
    const source = await readFile(fileURLToPath(new URL("./loadWorker.ts", import.meta.url)), "utf8");
    return ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true } }).outputText;
  })();
  return workerSource;
}

/**
 * Runs a bounded load (every request of the plan, then it stops) from a
 * worker thread and summarizes it. The worker runs plain JavaScript, its
 * TypeScript transpiled here: a worker that loaded it through tsx started an
 * esbuild process of its own, and stalled for good when that process died.
 * Given the embedded database's thread, the report has its busy share too.
 */
export async function runLoad(plan: LoadPlan, databaseThread?: ObservedThread): Promise<LoadReport> {
  const url = new URL(plan.baseUrl);
  if (url.hostname !== "127.0.0.1") throw new Error(`benchmarks only call loopback, not ${url.hostname}`);
  const code = await loadWorkerSource();
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), { workerData: plan });
  // Measured from the worker's first request, so its start-up is not counted.
  let cpu = process.cpuUsage();
  let loop = performance.eventLoopUtilization();
  let databaseLoop = databaseThread?.threadUtilization();
  let waited = cpuWaitUs();
  return new Promise<LoadReport>((resolve, reject) => {
    worker.on("message", (message: LoadResult | { started: true }) => {
      if ("started" in message) {
        cpu = process.cpuUsage();
        loop = performance.eventLoopUtilization();
        databaseLoop = databaseThread?.threadUtilization();
        waited = cpuWaitUs();
        return;
      }
      const used = process.cpuUsage(cpu);
      const busy = performance.eventLoopUtilization(loop).utilization;
      const databaseBusy = databaseThread?.threadUtilization(databaseLoop).utilization;
      const waitedNow = cpuWaitUs();
      void worker.terminate();
      resolve({
        ...summarize(message.latenciesMs),
        latenciesMs: message.latenciesMs,
        sentAtMs: message.sentAtMs,
        driverPausesMs: message.driverPausesMs,
        throughput: (message.latenciesMs.length * 1_000) / message.elapsedMs,
        statuses: message.statuses,
        late: message.late,
        maxLagMs: message.maxLagMs,
        cpuMsPerRequest: (used.user + used.system) / 1_000 / message.latenciesMs.length,
        mainThreadBusy: busy,
        databaseThreadBusy: databaseBusy,
        cpuPressure: waited === undefined || waitedNow === undefined ? undefined : Math.min(1, (waitedNow - waited) / 1_000 / message.elapsedMs),
      });
    });
    worker.once("error", reject);
    // A worker whose start-up never settles exits with no error: fail rather than wait for ever.
    worker.once("exit", (code) => reject(new Error(`the load worker exited (code ${code}) before it reported`)));
  });
}

/** "200×4000" style: how many answered with each status. */
export function statusText(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .map(([status, count]) => `${status}×${count}`)
    .join(" ");
}
