/**
 * npm run bench -- <meetings|availability|webhooks> [--wiring=cluster|processes|standalone[,…]|both] [--quick]
 * npm run bench -- webhooks-drain [--quick]   # the webhooks service's Postgres work per delivery
 * npm run bench -- side-by-side [--quick] [--profile] [--list] [--gc]   # --list: only the list of 100 at 200/s, to iterate on its tail; --gc: the collections on its path
 * npm run bench -- delivery-floor [--quick]   # the least CPU a webhook delivery costs: bare node:http sender and receiver
 * npm run bench -- creates [--quick] [--profile]   # CPU and statements per create of every process, processes wiring
 * npm run bench -- standalone-creates [--quick] [--profile]   # statements and thread time per create, npm start's wiring
 * npm run bench -- recurring [--wiring=cluster|processes[,…]] [--quick] [--profile]
 * npm run bench -- relearning [--quick]   # ai-ranking's relearning alone: CPU and statements per run
 * npm run bench -- standalone-upcoming [--quick]   # the upcoming list's parts on PGlite, 200 weekly series
 *
 * Each benchmark starts the whole system in this process on an ephemeral
 * loopback port (cluster wiring against the local NATS, Postgres and Redis
 * with a fresh database and namespace; standalone wiring for comparison),
 * seeds its data, drives a bounded HTTP load from a worker thread, prints the
 * figures and removes what it created.
 */
import { arch, cpus, loadavg, totalmem } from "node:os";
import { benchAvailability } from "./availability.js";
import { benchCreates } from "./creates.js";
import { benchDeliveryFloor } from "./deliveryFloor.js";
import { benchMeetings, type BenchOptions } from "./meetings.js";
import { benchRecurring } from "./recurring.js";
import { benchRelearning } from "./relearning.js";
import { benchSideBySide } from "./sideBySide.js";
import { benchStandaloneCreates } from "./standaloneCreates.js";
import { benchStandaloneUpcoming } from "./standaloneUpcoming.js";
import { benchStartup } from "./startup.js";
import { benchWebhooks } from "./webhooks.js";
import { benchWebhooksDrain } from "./webhooksDrain.js";
import type { WiringKind } from "./lib/system.js";

const BENCHMARKS: Record<string, (options: BenchOptions & { profile: boolean; listOnly: boolean; gc: boolean }) => Promise<void>> = {
  meetings: benchMeetings,
  recurring: benchRecurring,
  relearning: benchRelearning,
  "side-by-side": benchSideBySide,
  creates: benchCreates,
  "standalone-creates": benchStandaloneCreates,
  "standalone-upcoming": benchStandaloneUpcoming,
  availability: benchAvailability,
  startup: benchStartup,
  webhooks: benchWebhooks,
  "webhooks-drain": benchWebhooksDrain,
  "delivery-floor": benchDeliveryFloor,
};

function usage(message: string): never {
  console.error(`${message}\nusage: npm run bench -- <${Object.keys(BENCHMARKS).join("|")}> [--wiring=cluster|processes|standalone[,…]|both] [--quick] [--profile] [--list] [--gc]`);
  process.exit(2);
}

const isWiring = (value: string): value is WiringKind => value === "cluster" || value === "processes" || value === "standalone";

const args = process.argv.slice(2);
const name = args.find((a) => !a.startsWith("--"));
if (!name || !BENCHMARKS[name]) usage(name ? `unknown benchmark: ${name}` : "which benchmark?");
let wirings: WiringKind[] = ["cluster", "standalone"];
let quick = false;
let profile = false;
let listOnly = false;
let gc = false;
for (const arg of args.filter((a) => a.startsWith("--"))) {
  const [flag, value] = arg.split("=");
  if (flag === "--quick") quick = true;
  else if (flag === "--profile") profile = true;
  else if (flag === "--list" && name === "side-by-side") listOnly = true;
  else if (flag === "--gc" && name === "side-by-side") gc = true;
  else if (flag === "--wiring" && value === "both") wirings = ["cluster", "standalone"];
  else if (flag === "--wiring" && value?.split(",").every(isWiring)) wirings = value.split(",") as WiringKind[];
  else usage(`unknown option: ${arg}`);
}

const cpu = cpus();
console.log(
  `${name} benchmark: node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? "?"} (${arch()}), ` +
    `${(totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}${["side-by-side", "webhooks-drain", "creates", "delivery-floor", "relearning"].includes(name) ? "" : `, wirings ${wirings.join(" + ")}`}${quick ? ", quick" : ""}`,
);
const started = performance.now();
await BENCHMARKS[name]!({ wirings, quick, profile, listOnly, gc });
console.log(`\ndone in ${((performance.now() - started) / 1_000).toFixed(0)} s; load average now ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(0);
