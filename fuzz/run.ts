/**
 * npm run fuzz -- [--runs 10000] [--wiring standalone|cluster|both] [--seed N] [--concurrency 4] [--only I]
 *
 * Starts the whole system in this process (cluster wiring against the local
 * NATS, Postgres and Redis with a fresh database and namespace; standalone
 * with PGlite and the in-process bus), seeds two users, and sends it requests
 * generated from the OpenAPI document and mutated, judging every answer:
 * never a 5xx but a deliberate 503, always the error envelope and an
 * X-Request-Id, always as the document says, never another user's data.
 * Prints the answers by status and each class of failure with the shortest
 * request that shows it; exits 1 when there was any.
 */
import fc from "fast-check";
import { loadavg } from "node:os";
import { wiringAvailable, type WiringKind } from "../services/standalone/test/harness.js";
import type { FuzzRequest } from "../services/standalone/test/fuzz/requests.js";
import { describeRequest, serialize, shorten, traitOf } from "../services/standalone/test/fuzz/wire.js";
import { startFuzzTarget, type FuzzTarget } from "../services/standalone/test/fuzz/target.js";

const USAGE = "usage: npm run fuzz -- [--runs N] [--wiring standalone|cluster|both] [--seed N] [--concurrency N] [--only I]";
const BATCH = 500;

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function parseArgs(args: string[]) {
  const options = { runs: 10_000, wirings: ["standalone", "cluster"] as WiringKind[], seed: Math.floor(Math.random() * 2 ** 31), concurrency: 4, only: undefined as number | undefined };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split("=", 2);
    const value = inline ?? args[++i];
    const count = () => (value !== undefined && /^\d+$/.test(value) ? Number(value) : usage(`${flag} takes a whole number`));
    if (flag === "--runs") options.runs = count();
    else if (flag === "--seed") options.seed = count();
    else if (flag === "--concurrency") options.concurrency = Math.max(1, count());
    else if (flag === "--only") options.only = count();
    else if (flag === "--wiring" && (value === "standalone" || value === "cluster")) options.wirings = [value];
    else if (flag === "--wiring" && value === "both") options.wirings = ["standalone", "cluster"];
    else usage(`unknown option: ${args[i - (inline === undefined ? 1 : 0)]}`);
  }
  return options;
}

/** Request `index` of a run with this seed: the same seed and index give the same request again. */
function requestsOf(target: FuzzTarget, seed: number, from: number, count: number): FuzzRequest[] {
  const batch = Math.floor(from / BATCH);
  const sampled = fc.sample(target.generator.request(), { seed: seed + batch, numRuns: BATCH });
  return sampled.slice(from - batch * BATCH, from - batch * BATCH + count);
}

/** Requests on their way, by index: the system runs in this process, so if one crashes it, these are the suspects. */
const inFlight = new Map<number, { wiring: WiringKind; seed: number; request: FuzzRequest }>();
process.on("uncaughtException", (err) => {
  console.log(`\nFAIL crash: the system under test threw ${err.stack ?? err.message}\n  with ${inFlight.size} requests in flight:`);
  for (const [index, { wiring, seed, request }] of inFlight) {
    console.log(`    replay: npm run fuzz -- --wiring ${wiring} --seed ${seed} --only ${index}`);
    console.log(`    request: ${describeRequest(request)}`);
  }
  process.exit(1);
});

interface FailureClass {
  count: number;
  operations: Set<string>;
  example: { index: number; request: FuzzRequest; status: string; detail: string };
}

async function fuzz(wiring: WiringKind, options: ReturnType<typeof parseArgs>): Promise<boolean> {
  const target = await startFuzzTarget(wiring);
  const statuses = new Map<string, number>();
  const failures = new Map<string, FailureClass>();
  const started = performance.now();
  const first = options.only ?? 0;
  const last = options.only === undefined ? options.runs : options.only + 1;
  try {
    for (let from = first; from < last; from = (Math.floor(from / BATCH) + 1) * BATCH) {
      const requests = requestsOf(target, options.seed, from, Math.min(last, (Math.floor(from / BATCH) + 1) * BATCH) - from);
      let next = 0;
      const worker = async () => {
        while (next < requests.length) {
          const index = from + next;
          const request = requests[next++]!;
          inFlight.set(index, { wiring, seed: options.seed, request });
          const { answer, problems } = await target.send(request);
          inFlight.delete(index);
          const status = answer instanceof Error ? "no answer" : String(answer.status);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          for (const problem of problems) {
            // One class: what was wrong, the status and the request's oddity; for an undocumented answer, what the document disagrees with.
            const trait = traitOf(request);
            const disagreement = problem.kind === "undocumented" ? ` ${problem.detail.replace(/^.*? → \d+: /, "").replace(/"[^"]*"/g, "…").slice(0, 80)}` : "";
            const key = `${problem.kind} ${status}${trait ? ` [${trait}]` : ""}${disagreement}`;
            const operation = request.operation ?? `${request.method} (no documented operation)`;
            const known = failures.get(key);
            const example = { index, request, status, detail: problem.detail };
            if (!known) failures.set(key, { count: 1, operations: new Set([operation]), example });
            else {
              known.count++;
              known.operations.add(operation);
              if (serialize(request).length < serialize(known.example.request).length) known.example = example;
            }
          }
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      if (options.only === undefined) process.stdout.write(`\r${wiring}: ${Math.min(last, (Math.floor(from / BATCH) + 1) * BATCH)} / ${last} requests, ${failures.size} failure classes`);
    }
  } finally {
    await target.stop();
  }
  const seconds = (performance.now() - started) / 1_000;
  const sent = last - first;
  console.log(`\n${wiring}: ${sent} requests in ${seconds.toFixed(0)} s (${(sent / seconds).toFixed(0)}/s), seed ${options.seed}`);
  console.log(`  by status: ${[...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s} ×${n}`).join(", ")}`);
  for (const [key, { count, operations, example }] of [...failures].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  FAIL ${key} (×${count}, ${operations.size} operations: ${shorten([...operations].sort().join(", "), 300)}): ${shorten(example.detail, 400)}`);
    console.log(`    replay: npm run fuzz -- --wiring ${wiring} --seed ${options.seed} --only ${example.index}`);
    console.log(`    request: ${describeRequest(example.request)}`);
  }
  return failures.size === 0;
}

const options = parseArgs(process.argv.slice(2));
console.log(`fuzz: ${options.only === undefined ? `${options.runs} requests a wiring` : `request ${options.only}`}, seed ${options.seed}, concurrency ${options.concurrency}; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
let clean = true;
for (const wiring of options.wirings) {
  if (!(await wiringAvailable(wiring))) {
    console.log(`${wiring}: skipped (needs Postgres, NATS and Redis on their standard local ports)`);
    continue;
  }
  clean = (await fuzz(wiring, options)) && clean;
}
process.exit(clean ? 0 : 1);
