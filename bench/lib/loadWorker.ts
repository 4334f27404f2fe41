/**
 * The load driver, on its own thread so that sending requests and reading
 * replies does not share an event loop with the system being measured.
 * Requests go out on a fixed schedule (request i is due at i / rate seconds),
 * at most `concurrency` at a time, over keep-alive connections to loopback.
 */
import { Agent, request } from "node:http";
import { PerformanceObserver } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";
import type { LoadPlan, LoadResult } from "./load.js";

/** A request that starts this much after its due time counts as late. */
const LATE_MS = 5;

const plan = workerData as LoadPlan;
const base = new URL(plan.baseUrl);
if (base.hostname !== "127.0.0.1") throw new Error(`the load driver only calls loopback, not ${base.hostname}`);
const agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency });

function send(method: string, path: string, body: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...plan.headers };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(body);
    }
    const req = request({ host: base.hostname, port: base.port, method, path, headers, agent }, (res) => {
      res.on("data", () => undefined);
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(0));
    });
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(): Promise<LoadResult> {
  const n = plan.requests.length;
  const latencies = new Float64Array(n);
  const sentAtMs = new Float64Array(n);
  const statuses: Record<string, number> = {};
  let inFlight = 0;
  let freed: (() => void) | undefined;
  let late = 0;
  let maxLagMs = 0;
  const pending: Promise<void>[] = [];
  const interval = 1_000 / plan.ratePerSecond;
  parentPort!.postMessage({ started: true });
  const t0 = performance.now();
  // This thread's own collections: a response that arrives during one is measured late by what is left of it.
  const driverPausesMs: Array<[number, number]> = [];
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) driverPausesMs.push([entry.startTime - t0, entry.startTime - t0 + entry.duration]);
  });
  collections.observe({ entryTypes: ["gc"] });
  for (let i = 0; i < n; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait >= 1) await sleep(wait);
    while (inFlight >= plan.concurrency) await new Promise<void>((r) => (freed = r));
    const sentAt = performance.now();
    const lag = sentAt - due;
    if (lag > LATE_MS) late++;
    maxLagMs = Math.max(maxLagMs, lag);
    sentAtMs[i] = sentAt - t0;
    const { method, path, body } = plan.requests[i]!;
    inFlight++;
    pending.push(
      send(method, path, body).then((status) => {
        latencies[i] = performance.now() - sentAt;
        statuses[status] = (statuses[status] ?? 0) + 1;
        inFlight--;
        const wake = freed;
        freed = undefined;
        wake?.();
      }),
    );
  }
  await Promise.all(pending);
  const elapsedMs = performance.now() - t0;
  collections.disconnect();
  agent.destroy();
  return { latenciesMs: Array.from(latencies), sentAtMs: Array.from(sentAtMs), statuses, elapsedMs, late, maxLagMs, driverPausesMs };
}

parentPort!.postMessage(await run());
