/**
 * The gateway's own CPU per request, nothing else measured: the gateway as
 * every wiring assembles it (assembleGateway: express, the key cache, the
 * Redis rate limits on the local Redis, the request log, the metrics), in
 * front of a bus that answers at once with canned replies, driven by a load
 * generator in another process. Prints the gateway process's CPU time per
 * request (user + system), which holds on a machine busy with other work.
 *
 *   node --conditions=@sched/source --import tsx bench/gatewayEdge.ts [--src=<dir>[,<dir>…]] [--requests=N] [--rounds=N] [--concurrency=N]
 *     [--cases=get,list,create] [--reply-delay-ms=N]
 *
 * `--src` points at another copy of services/gateway/src (an earlier commit
 * checked out beside this tree), so two versions can be run alternately.
 */
import type { Bus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, JsonText, meetingsCreate, meetingsGet, meetingsList, type Caller, type HttpReply, type RouteEndpoint } from "@sched/proto";
import { fork } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type * as GatewayService from "../services/gateway/src/service.js";
import type * as RedisLink from "../services/gateway/src/outbound/redisLink.js";
import type * as IdempotencyStores from "../services/gateway/src/outbound/idempotency/store.js";

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

if (process.argv[2] === "--load") {
  // The load generator: keep-alive connections, `concurrency` requests at a time.
  const http = await import("node:http");
  const [port, path, method, total, concurrency] = [Number(process.argv[3]), process.argv[4]!, process.argv[5]!, Number(process.argv[6]), Number(process.argv[7])];
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ title: "Planning", startsAt: "2030-01-01T10:00:00Z", endsAt: "2030-01-01T11:00:00Z", participants: ["a@example.com"] });
  let sent = 0;
  let failed = 0;
  const one = (): Promise<void> =>
    new Promise((done) => {
      const req = http.request(
        { port, path, method, agent, headers: { authorization: `Bearer sk_test_${"a".repeat(40)}`, ...(method === "POST" ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {}) } },
        (res) => {
          if (res.statusCode! >= 300) failed++;
          res.resume();
          res.on("end", () => done());
        },
      );
      req.end(method === "POST" ? body : undefined);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < total) {
        sent++;
        await one();
      }
    }),
  );
  process.send!({ failed });
  process.exit(0);
}

const requests = Number(arg("requests", "4000"));
const rounds = Number(arg("rounds", "3"));
/** Requests in flight at once; 1 shows what a request costs alone, as on a lightly loaded replica. */
const concurrency = arg("concurrency", "16");
const caller: Caller = { userId: "usr_bench", email: "bench@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read", "meetings:write"], apiKeyId: "key_bench", rateLimits: { standardPerMinute: 1_000_000_000, aiPerMinute: null } };
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
    bus,
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

async function drive(port: number, path: string, method: string, total: number): Promise<number> {
  const child = fork(new URL(import.meta.url).pathname, ["--load", String(port), path, method, String(total), concurrency], { execArgv: ["--conditions=@sched/source", "--import", "tsx"] });
  const before = process.cpuUsage();
  const { failed } = await new Promise<{ failed: number }>((done) => child.once("message", (m) => done(m as { failed: number })));
  const used = process.cpuUsage(before);
  if (failed) throw new Error(`${failed} requests failed`);
  return (used.user + used.system) / total;
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
const results = new Map(gateways.map((g) => [g, {} as Record<string, number[]>]));
for (let r = 0; r < rounds; r++) {
  for (const [name, path, method] of cases) {
    for (const g of gateways) (results.get(g)![name] ??= []).push(await drive(g.port, path, method, requests));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [g, byCase] of results) console.log(JSON.stringify({ src: g.src, ...Object.fromEntries(Object.entries(byCase).map(([k, v]) => [k, Math.round(median(v))])) }));
// Each copy's rounds ran next to the first copy's: the median of those pairs' ratios is steadier than a ratio of medians.
const [first, ...others] = [...results.values()];
for (const [i, byCase] of others.entries()) {
  const ratios = Object.fromEntries(Object.entries(byCase).map(([k, v]) => [k, Number(median(v.map((x, r) => x / first![k]![r]!)).toFixed(3))]));
  console.log(JSON.stringify({ ratioTo: gateways[0]!.src, src: gateways[i + 1]!.src, ...ratios }));
}
for (const g of gateways) await g.stop();
process.exit(0);
