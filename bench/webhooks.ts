import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { callApi, createUser } from "./lib/api.js";
import { percentile } from "./lib/stats.js";
import { startBenchSystem } from "./lib/system.js";
import type { BenchOptions } from "./meetings.js";

const ENDPOINTS = 10;

/**
 * Webhook fan-out: meetings created at a steady rate by one user with ten
 * webhook endpoints on a loopback receiver; for each of the resulting
 * deliveries, the time from the create's answer (its commit) to its arrival,
 * and the creates' own latency against a first phase without endpoints.
 */
export async function benchWebhooks(options: BenchOptions): Promise<void> {
  const rate = options.quick ? 50 : 200;
  const seconds = options.quick ? 5 : 10;
  for (const kind of options.wirings) {
    const system = await startBenchSystem(kind);
    const arrivals = new Map<string, number[]>();
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const meeting = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { object: { id: string } } }).data.object.id;
        arrivals.set(meeting, [...(arrivals.get(meeting) ?? []), performance.now()]);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
    try {
      const quiet = await createUser(system.url, system.adminToken, { email: `quiet-${Date.now()}@example.com`, name: "Quiet" });
      const loud = await createUser(system.url, system.adminToken, { email: `loud-${Date.now()}@example.com`, name: "Loud" });
      const port = (receiver.address() as AddressInfo).port;
      for (let i = 0; i < ENDPOINTS; i++) {
        const res = await callApi(system.url, "POST", "/v1/webhook-endpoints", { token: loud.key, body: { url: `http://127.0.0.1:${port}/hook-${i}` } });
        if (res.status !== 201) throw new Error(`endpoint create answered ${res.status}`);
      }
      const baseline = await createAtRate(system.url, quiet.key, rate, seconds);
      const fanned = await createAtRate(system.url, loud.key, rate, seconds);
      const deadline = performance.now() + 60_000;
      while ([...fanned.committedAt.keys()].some((id) => (arrivals.get(id)?.length ?? 0) < ENDPOINTS) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const lags: number[] = [];
      let missing = 0;
      for (const [id, committed] of fanned.committedAt) {
        const got = arrivals.get(id) ?? [];
        missing += Math.max(0, ENDPOINTS - got.length);
        for (const at of got) lags.push(at - committed);
      }
      lags.sort((a, b) => a - b);
      const row = (name: string, ms: number[]) => `${name}: median ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms`;
      console.log(`\n${kind}: ${rate} creates/s for ${seconds} s, ${ENDPOINTS} endpoints (${fanned.committedAt.size * ENDPOINTS} deliveries)`);
      console.log(`  ${row("POST /v1/meetings, no endpoints", baseline.latencies)}`);
      console.log(`  ${row("POST /v1/meetings, 10 endpoints", fanned.latencies)}`);
      console.log(`  ${row("delivery after commit", lags)}; ${missing} not delivered within 60 s`);
    } finally {
      receiver.closeAllConnections();
      receiver.close();
      await system.stop();
    }
  }
}

/** Creates meetings at `rate` a second for `seconds`, each on its own; their latencies and when each was committed (answered). */
async function createAtRate(url: string, key: string, rate: number, seconds: number): Promise<{ latencies: number[]; committedAt: Map<string, number> }> {
  const latencies: number[] = [];
  const committedAt = new Map<string, number>();
  const calls: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    calls.push(
      callApi(url, "POST", "/v1/meetings", { token: key, body: { title: `Bench ${i}`, duration: "30 mins", startTime: "2033-01-03T10:00:00Z", participants: ["p@example.com"], sendInvites: false } }).then((res) => {
        const now = performance.now();
        latencies.push(now - sent);
        if (res.status === 201) committedAt.set((res.body as { id: string }).id, now);
      }),
    );
  }
  await Promise.all(calls);
  return { latencies: latencies.sort((a, b) => a - b), committedAt };
}
