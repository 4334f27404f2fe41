/**
 * The gateway's own CPU per request, nothing else measured: the gateway as
 * every wiring assembles it (assembleGateway: express, the key cache, the
 * Redis rate limits on the local Redis, the request log, the metrics), in
 * front of a bus that answers at once with canned replies, driven by a load
 * generator in another process. Prints the gateway process's CPU time per
 * request (user + system), which holds on a machine busy with other work,
 * and its heap's garbage per request: bytes allocated, bytes a scavenge
 * promoted to the old generation, and collections and their pauses per
 * 10,000 requests (v8's GCProfiler over each round); and each round's
 * median and p99 time of a request as its client saw it (with `--rate` and
 * `--concurrency=1`, the serial waits of one request at a time).
 *
 *   node --conditions=@sched/source --import tsx bench/gatewayEdge.ts [--src=<dir>[,<dir>…]] [--requests=N] [--rounds=N] [--concurrency=N]
 *     [--cases=get,list,create] [--reply-delay-ms=N] [--rate=N] [--bus=nats]
 *
 * `--bus=nats`: the gateway's requests go through the local NATS server, as
 * in the processes wiring, to a process of their own answering them with the
 * same canned replies (the request log's batches are still not published).
 *
 * `--src` points at another copy of services/gateway/src (an earlier commit
 * unpacked inside this tree, e.g. `git archive <commit> services/gateway/src`
 * moved to services/gateway/src-main), so two versions can be run
 * alternately. Inside this tree, so that it imports this tree's packages: a
 * copy in another worktree has its own `@sched/proto`, whose JsonText the
 * bus's replies are not instances of, and serializes every reply anew.
 */
import { connectNatsBus, type Bus, type EndpointBinding } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, JsonText, meetingsCreate, meetingsGet, meetingsList, type Caller, type HttpReply, type RouteEndpoint } from "@sched/proto";
import { fork } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { GCProfiler, getHeapStatistics } from "node:v8";
import type * as GatewayService from "../services/gateway/src/service.js";
import type * as RedisLink from "../services/gateway/src/outbound/redisLink.js";
import type * as IdempotencyStores from "../services/gateway/src/outbound/idempotency/store.js";

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

if (process.argv[2] === "--load") {
  // The load generator: keep-alive connections, `concurrency` requests at a time.
  const http = await import("node:http");
  const [port, path, method, total, concurrency] = [Number(process.argv[3]), process.argv[4]!, process.argv[5]!, Number(process.argv[6]), Number(process.argv[7])];
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ title: "Planning", duration: "30 mins", startTime: "2030-01-01T10:00:00Z", participants: ["a@example.com"], sendInvites: false });
  let sent = 0;
  let failed = 0;
  /** Each request's time from its sending to its answer's end, in µs. */
  const took: number[] = [];
  const one = (): Promise<void> =>
    new Promise((done) => {
      const sentAt = performance.now();
      const req = http.request(
        { port, path, method, agent, headers: { authorization: `Bearer sk_test_${"a".repeat(40)}`, ...(method === "POST" ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {}) } },
        (res) => {
          if (res.statusCode! >= 300) failed++;
          res.resume();
          res.on("end", () => {
            took.push((performance.now() - sentAt) * 1_000);
            done();
          });
        },
      );
      req.end(method === "POST" ? body : undefined);
    });
  const rate = Number(process.argv[8]);
  if (rate > 0) {
    // Open loop: `rate` requests a second whatever the answers' pace, as clients send them, started every 10 ms.
    const started = performance.now();
    const pending: Promise<void>[] = [];
    await new Promise<void>((done) => {
      const tick = setInterval(() => {
        const due = Math.min(total, Math.floor(((performance.now() - started) * rate) / 1000));
        for (; sent < due; sent++) pending.push(one());
        if (sent >= total) {
          clearInterval(tick);
          done();
        }
      }, 10);
    });
    await Promise.all(pending);
  } else {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < total) {
          sent++;
          await one();
        }
      }),
    );
  }
  took.sort((a, b) => a - b);
  process.send!({ failed, p50Us: took[Math.floor(took.length / 2)]!, p99Us: took[Math.floor(took.length * 0.99)]! });
  process.exit(0);
}

const requests = Number(arg("requests", "4000"));
const rounds = Number(arg("rounds", "3"));
/** Requests in flight at once; 1 shows what a request costs alone, as on a lightly loaded replica. */
const concurrency = arg("concurrency", "16");
/** Requests a second sent whatever the answers' pace (0: as fast as `concurrency` allows); what survives a scavenge depends on it. */
const rate = arg("rate", "0");
const caller: Caller = { userId: "usr_bench", email: "bench@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read", "meetings:write"], apiKeyId: "key_bench", rateLimits: { standardPerMinute: 1_000_000, aiPerMinute: null } };
const meeting = (i: number) =>
  JSON.stringify({ id: `mtg_${String(i).padStart(24, "0")}`, title: "Weekly planning", description: "Where the week's work is agreed", startsAt: "2030-01-01T10:00:00Z", endsAt: "2030-01-01T11:00:00Z", timezone: "Europe/Paris", organizerId: "usr_bench", location: null, status: "confirmed", createdAt: "2026-11-26T07:00:00Z", updatedAt: "2026-11-26T07:00:00Z", attendees: [{ email: "a@example.com", response: "accepted" }, { email: "b@example.com", response: "needs_action" }] });
const one = new TextEncoder().encode(meeting(1));
const list = new TextEncoder().encode(`{"data":[${Array.from({ length: 100 }, (_, i) => meeting(i)).join(",")}],"nextCursor":null}`);
const replies: Record<string, () => HttpReply> = {
  [meetingsGet.subject]: () => ({ status: 200, body: new JsonText(one) }),
  [meetingsList.subject]: () => ({ status: 200, body: new JsonText(list) }),
  [meetingsCreate.subject]: () => ({ status: 201, body: new JsonText(one) }),
};
/**
 * How long the bus takes to answer. 0: on the next turn, as a reply from NATS
 * arrives at once. More: as a busy system answers, so that fewer requests
 * share each wake-up of the gateway (a create flat out takes tens of ms).
 */
const replyDelayMs = Number(arg("reply-delay-ms", "0"));
const later = <T>(value: T) => new Promise<T>((done) => (replyDelayMs > 0 ? setTimeout(() => done(value), replyDelayMs) : setImmediate(() => done(value))));
const bus = {
  forward: (endpoint: RouteEndpoint) => later(replies[endpoint.subject]!()),
  request: (endpoint: { subject: string }) => later(endpoint.subject === accountsAuthenticate.subject ? { caller } : { connected: false }),
  onNotice: async () => ({ stop: async () => {} }),
  publish: async () => {},
  isConnected: () => true,
} as unknown as Bus;

const logger = createLogger({ name: "gateway-edge", level: "silent" });

if (process.argv[2] === "--serve") {
  // The services' side of `--bus=nats`: the canned replies, served on the namespace the gateway sends to.
  const served = await connectNatsBus({ servers: "nats://127.0.0.1:4222", namespace: process.argv[3]!, name: "gateway-edge-services", logger });
  const answer = (subject: string) => async () => replies[subject]!() as never;
  const bindings: EndpointBinding[] = [
    { endpoint: accountsAuthenticate, handler: async () => ({ caller }) as never },
    ...[meetingsGet, meetingsList, meetingsCreate].map((endpoint) => ({ endpoint, handler: answer(endpoint.subject) }) as EndpointBinding),
  ];
  await served.serve({ name: "gateway-edge-services", version: "1.0.0" }, bindings);
  process.send!("ready");
  await new Promise(() => {});
}

/** The bus the gateway talks to: the canned one, or NATS to a process answering with the canned replies. */
async function gatewayBus(): Promise<Bus> {
  if (arg("bus", "canned") !== "nats") return bus;
  const namespace = `gwedge${process.pid}`;
  const services = fork(new URL(import.meta.url).pathname, ["--serve", namespace], { execArgv: ["--conditions=@sched/source", "--import", "tsx"] });
  await new Promise((done) => services.once("message", done));
  process.once("exit", () => services.kill());
  const nats = await connectNatsBus({ servers: "nats://127.0.0.1:4222", namespace, name: "gateway-edge", logger });
  return Object.assign(Object.create(nats) as Bus, { publish: async () => {} });
}
const gatewaysBus = await gatewayBus();

/** One gateway from the copy of services/gateway/src at `src`, listening on a loopback port of its own. */
async function startGateway(src: string) {
  const at = (path: string) => pathToFileURL(`${resolve(src)}/${path}`).href;
  const { assembleGateway, GATEWAY_DEFAULTS } = (await import(at("service.ts"))) as typeof GatewayService;
  const { openRedis } = (await import(at("outbound/redisLink.ts"))) as typeof RedisLink;
  const { MemoryIdempotencyStore } = (await import(at("outbound/idempotency/store.ts"))) as typeof IdempotencyStores;
  // The gateway's own Redis client, as main.ts opens it (its commands of one turn share a write).
  const redis = openRedis("redis://127.0.0.1:6379", logger);
  const keyPrefix = `gwedge${process.pid}${resolve(src).length}`;
  const { server, background } = await assembleGateway({
    bus: gatewaysBus,
    logger,
    settings: { ...GATEWAY_DEFAULTS, adminToken: "adm_gateway_edge_bench" },
    redis,
    keyPrefix,
    idempotency: new MemoryIdempotencyStore(),
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as { port: number }).port;
  const stop = async () => {
    server.close();
    await background.stop();
    const stale = await redis.keys(`${keyPrefix}:*`);
    if (stale.length) await redis.del(...stale);
    redis.disconnect();
  };
  return { src, port, stop };
}

/** What one round cost this process per request: CPU, and its heap's bytes allocated, promoted by scavenges, collections and their pauses. */
interface Round {
  cpuUs: number;
  allocatedBytes: number;
  promotedBytes: number;
  scavenges: number;
  markCompacts: number;
  pauseUs: number;
  /** The round's median and 99th percentile of a request's time, as its client saw it. */
  p50Us: number;
  p99Us: number;
}

/** Heap bytes outside the young generation, which a scavenge adds to when it promotes. */
const oldBytes = (spaces: ReadonlyArray<{ spaceName: string; spaceUsedSize: number }>) =>
  spaces.reduce((sum, s) => (s.spaceName === "new_space" || s.spaceName === "new_large_object_space" ? sum : sum + s.spaceUsedSize), 0);

async function drive(port: number, path: string, method: string, total: number): Promise<Round> {
  const child = fork(new URL(import.meta.url).pathname, ["--load", String(port), path, method, String(total), concurrency, rate], { execArgv: ["--conditions=@sched/source", "--import", "tsx"] });
  const gc = new GCProfiler();
  gc.start();
  const heapAtStart = getHeapStatistics().used_heap_size;
  const before = process.cpuUsage();
  const { failed, p50Us, p99Us } = await new Promise<{ failed: number; p50Us: number; p99Us: number }>((done) => child.once("message", (m) => done(m as { failed: number; p50Us: number; p99Us: number })));
  const used = process.cpuUsage(before);
  const heapAtEnd = getHeapStatistics().used_heap_size;
  const { statistics } = gc.stop();
  if (failed) throw new Error(`${failed} requests failed`);
  // Allocated: what the heap grew by between collections (each collection's "before" less the previous one's "after"), and before the first and after the last.
  let allocated = statistics.length === 0 ? heapAtEnd - heapAtStart : statistics[0]!.beforeGC.heapStatistics.usedHeapSize - heapAtStart + heapAtEnd - statistics.at(-1)!.afterGC.heapStatistics.usedHeapSize;
  let promoted = 0;
  let scavenges = 0;
  let markCompacts = 0;
  let pauseUs = 0;
  for (const [i, s] of statistics.entries()) {
    if (i > 0) allocated += s.beforeGC.heapStatistics.usedHeapSize - statistics[i - 1]!.afterGC.heapStatistics.usedHeapSize;
    pauseUs += s.cost;
    if (s.gcType === "Scavenge") {
      scavenges++;
      promoted += oldBytes(s.afterGC.heapSpaceStatistics) - oldBytes(s.beforeGC.heapSpaceStatistics);
    } else if (s.gcType === "MarkSweepCompact") markCompacts++;
  }
  const per = (x: number) => x / total;
  return { cpuUs: per(used.user + used.system), allocatedBytes: per(allocated), promotedBytes: per(promoted), scavenges: (scavenges * 10_000) / total, markCompacts: (markCompacts * 10_000) / total, pauseUs: (pauseUs * 10_000) / total, p50Us, p99Us };
}

const allCases = [
  ["get", "/v1/meetings/mtg_000000000000000000000001", "GET"],
  ["list", "/v1/meetings?filter=upcoming&limit=100", "GET"],
  ["create", "/v1/meetings", "POST"],
] as const;
const chosen = arg("cases", "get,list,create").split(",");
const cases = allCases.filter(([name]) => chosen.includes(name));
// Every copy named in --src (comma-separated) runs in this one process, round by round in turn, so the machine's load falls on each alike.
const gateways = await Promise.all(arg("src", "services/gateway/src").split(",").map(startGateway));
for (const g of gateways) await drive(g.port, allCases[0][1], "GET", 1_000); // warm-up
const results = new Map(gateways.map((g) => [g, {} as Record<string, Round[]>]));
for (let r = 0; r < rounds; r++) {
  for (const [name, path, method] of cases) {
    for (const g of gateways) (results.get(g)![name] ??= []).push(await drive(g.port, path, method, requests));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures = ["cpuUs", "allocatedBytes", "promotedBytes", "scavenges", "markCompacts", "pauseUs", "p50Us", "p99Us"] as const;
// CPU µs, bytes allocated and promoted per request; scavenges, mark-compacts and µs of pauses per 10,000 requests; a request's time, median and p99 (median round).
for (const [g, byCase] of results) {
  for (const [name, rs] of Object.entries(byCase)) console.log(JSON.stringify({ src: g.src, case: name, ...Object.fromEntries(figures.map((f) => [f, Math.round(median(rs.map((x) => x[f])))])) }));
}
// Each copy's rounds ran next to the first copy's: the median of those pairs' ratios is steadier than a ratio of medians.
const [first, ...others] = [...results.values()];
for (const [i, byCase] of others.entries()) {
  for (const [name, rs] of Object.entries(byCase)) {
    const ratios = Object.fromEntries(figures.map((f) => [f, Number(median(rs.map((x, r) => x[f] / first![name]![r]![f])).toFixed(3))]));
    console.log(JSON.stringify({ ratioTo: gateways[0]!.src, src: gateways[i + 1]!.src, case: name, ...ratios }));
  }
}
for (const g of gateways) await g.stop();
process.exit(0);
