/**
 * node --conditions=@sched/source --import tsx bench/busPaths.ts
 *
 * CPU per request of two pieces of the bus's request path, old way against
 * new, alternating in one process so both meet the same machine: a request
 * through the NATS client's own request multiplexing against one through
 * NatsReplies (a responder in the same process echoes; its cost is common to
 * both), and a route's reply checked by the HttpReply schema against the
 * hand check, and a gateway request's two duration records (the HTTP
 * request, the bus request) into the SDK's histograms against the local
 * ones (libs/telemetry/src/localHistograms.ts), and a service's replies,
 * each sent when its Postgres answer arrives, written at once against once per
 * turn of the event loop (OncePerTurn; CPU and write system calls, from
 * /proc/self/io, per request), and requests sent from an HTTP server's
 * handlers (each request on a socket of its own, as the gateway's) published at
 * once against once per turn. Reads process CPU time, so a busy machine makes it slower, not
 * dearer. Needs the local NATS (NATS_URL) and Postgres (TEST_POSTGRES_URL).
 */
import { headers as natsHeaders, type Msg } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { HttpReply, JsonText, meetingsGet } from "@sched/proto";
import { NATS_URL, POSTGRES_ADMIN_URL, uniqueSuffix } from "@sched/testing";
import { readFileSync } from "node:fs";
import { createServer, get as httpGet } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { OncePerTurn } from "../libs/bus/src/oncePerTurn.js";
import { checkedHttpReply } from "../libs/bus/src/httpReply.js";
import { NatsReplies } from "../libs/bus/src/natsReplies.js";
import { LocalHistogram } from "../libs/telemetry/src/localHistograms.js";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

const REQUESTS = 20_000;
const IN_FLIGHT = 50;
const ROUNDS = 5;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function perRequest(count: number, send: () => Promise<unknown>): Promise<number> {
  const start = cpuMicros();
  let sent = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (sent < count) {
        sent++;
        await send();
      }
    }),
  );
  return (cpuMicros() - start) / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
const subject = `bench.${uniqueSuffix()}.get`;
nc.subscribe(subject, {
  callback: (_err, msg) => {
    msg.respond(msg.data);
  },
});
await nc.flush();
const replies = new NatsReplies(nc);
const payload = JSON.stringify({ params: { id: "mtg_0123456789abcdef" }, query: {}, body: undefined });
const headers = () => {
  const h = natsHeaders();
  h.set("Sched-Caller", '{"userId":"usr_1","apiKeyId":"key_1","mode":"live"}');
  h.set("Sched-Deadline", String(Date.now() + 5_000));
  return h;
};
const viaClient = (): Promise<Msg> => nc.request(subject, payload, { timeout: 5_000, headers: headers() });
const viaReplies = (): Promise<Msg> => replies.request(subject, payload, headers(), 5_000);

await perRequest(2_000, viaClient);
await perRequest(2_000, viaReplies);
const client: number[] = [];
const own: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  client.push(await perRequest(REQUESTS, viaClient));
  own.push(await perRequest(REQUESTS, viaReplies));
}
console.log(`request and reply over NATS, CPU µs/request (median of ${ROUNDS} rounds of ${REQUESTS}, ${IN_FLIGHT} at a time):`);
console.log(`  the client's request multiplexing  ${median(client).toFixed(1)}  (${client.map((v) => v.toFixed(1)).join(", ")})`);
console.log(`  NatsReplies                        ${median(own).toFixed(1)}  (${own.map((v) => v.toFixed(1)).join(", ")})`);

const reply = { status: 200, body: new JsonText('{"id":"mtg_0123456789abcdef"}'), headers: { "X-Count": "1" } };
const CHECKS = 1_000_000;
const check = (fn: () => unknown): number => {
  const start = cpuMicros();
  for (let i = 0; i < CHECKS; i++) fn();
  return ((cpuMicros() - start) * 1_000) / CHECKS;
};
check(() => HttpReply.safeParse(reply));
check(() => checkedHttpReply(reply));
const schema: number[] = [];
const hand: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  schema.push(check(() => HttpReply.safeParse(reply)));
  hand.push(check(() => checkedHttpReply(reply)));
}
console.log(`a route's reply checked, CPU ns/check (median of ${ROUNDS} rounds of ${CHECKS}):`);
console.log(`  the HttpReply schema  ${median(schema).toFixed(0)}`);
console.log(`  checkedHttpReply      ${median(hand).toFixed(0)}`);

class IdleReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}
const BOUNDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const meter = new MeterProvider({ readers: [new IdleReader()] }).getMeter("bench");
const sdkHttp = meter.createHistogram("http", { unit: "s", advice: { explicitBucketBoundaries: BOUNDS } });
const sdkBus = meter.createHistogram("bus", { unit: "s", advice: { explicitBucketBoundaries: BOUNDS } });
const localHttp = new LocalHistogram({ name: "http", description: "", unit: "s", boundaries: BOUNDS });
const localBus = new LocalHistogram({ name: "bus", description: "", unit: "s", boundaries: BOUNDS });
const [route, method, status, busSubject, outcome] = ["/v1/meetings/:id", "GET", 200, meetingsGet.subject, "ok"];
let tick = 0;
const viaSdk = () => {
  tick = (tick + 1) % 7;
  sdkHttp.record(tick / 1_000, { route, method, status });
  sdkBus.record(tick / 2_000, { subject: busSubject, outcome });
};
const viaLocal = () => {
  tick = (tick + 1) % 7;
  localHttp.record(tick / 1_000, `${route}\u0000${method}\u0000${status}`, () => ({ route, method, status }));
  localBus.record(tick / 2_000, `${busSubject}\u0000${outcome}`, () => ({ subject: busSubject, outcome }));
};
check(viaSdk);
check(viaLocal);
const sdkRecords: number[] = [];
const localRecords: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  sdkRecords.push(check(viaSdk));
  localRecords.push(check(viaLocal));
}
console.log(`a gateway request's two duration records, CPU ns/request (median of ${ROUNDS} rounds of ${CHECKS}):`);
console.log(`  the SDK's histograms  ${median(sdkRecords).toFixed(0)}  (${sdkRecords.map((v) => v.toFixed(0)).join(", ")})`);
console.log(`  local histograms      ${median(localRecords).toFixed(0)}  (${localRecords.map((v) => v.toFixed(0)).join(", ")})`);

// A service's replies: each after a Postgres round trip on a pool of 10, as a meeting's read; the responder on a connection of its own.
const pool = new pg.Pool({ connectionString: POSTGRES_ADMIN_URL, max: 10 });
await Promise.all(Array.from({ length: 10 }, () => pool.query("select 1")));
const service = await connect({ servers: NATS_URL, noAsyncTraces: true });
const turns = new OncePerTurn((err) => console.error(err));
const serve = (suffix: string, reply: (msg: Msg) => void) =>
  service.subscribe(`${subject}.${suffix}`, {
    callback: (_err, msg) => {
      void pool.query({ name: "bench_one", text: "select $1::int as n", values: [1] }).then(() => reply(msg));
    },
  });
serve("now", (msg) => msg.respond(msg.data));
serve("turn", (msg) => void turns.run(() => msg.respond(msg.data)));
await service.flush();
const writes = () => Number(/^syscw: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? Number.NaN);
const SERVED = 5_000;
const served = async (suffix: string) => {
  const before = writes();
  const cpu = await perRequest(SERVED, () => replies.request(`${subject}.${suffix}`, payload, headers(), 5_000));
  return { cpu, writes: (writes() - before) / SERVED };
};
await served("now");
await served("turn");
const atOnce: Array<{ cpu: number; writes: number }> = [];
const perTurn: Array<{ cpu: number; writes: number }> = [];
for (let round = 0; round < ROUNDS; round++) {
  atOnce.push(await served("now"));
  perTurn.push(await served("turn"));
}
const show = (rounds: Array<{ cpu: number; writes: number }>) =>
  `${median(rounds.map((r) => r.cpu)).toFixed(1)} µs, ${median(rounds.map((r) => r.writes)).toFixed(2)} writes  (${rounds.map((r) => r.cpu.toFixed(1)).join(", ")})`;
console.log(`a service's replies after a Postgres read, per request, both ends and the pool in one process (median of ${ROUNDS} rounds of ${SERVED}, ${IN_FLIGHT} at a time):`);
console.log(`  each reply written at once   ${show(atOnce)}`);
console.log(`  replies once per turn        ${show(perTurn)}`);

// Requests sent from HTTP handlers, answered at once by the responder above; an HTTP client of keep-alive sockets, 50 at a time.
const perTurnReplies = new NatsReplies(nc, new OncePerTurn((err) => console.error(err)));
const servers = await Promise.all(
  [replies, perTurnReplies].map(
    (sender) =>
      new Promise<number>((resolve) => {
        const server = createServer((_req, res) => {
          void sender.request(subject, payload, headers(), 5_000).then((msg) => res.end(msg.data));
        }).listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
        server.unref();
      }),
  ),
);
const viaHttp = (port: number) => () =>
  new Promise<void>((resolve, reject) => {
    // Node's default keeps sockets alive: one per request in flight, reused.
    httpGet({ host: "127.0.0.1", port, path: "/" }, (res) => {
      res.resume();
      res.on("end", resolve);
    }).on("error", reject);
  });
const sent = async (port: number) => {
  const before = writes();
  const cpu = await perRequest(SERVED, viaHttp(port));
  return { cpu, writes: (writes() - before) / SERVED };
};
await sent(servers[0]!);
await sent(servers[1]!);
const publishedAtOnce: Array<{ cpu: number; writes: number }> = [];
const publishedPerTurn: Array<{ cpu: number; writes: number }> = [];
for (let round = 0; round < ROUNDS; round++) {
  publishedAtOnce.push(await sent(servers[0]!));
  publishedPerTurn.push(await sent(servers[1]!));
}
console.log(`requests from HTTP handlers, per request, HTTP client and server and the responder in one process (median of ${ROUNDS} rounds of ${SERVED}, ${IN_FLIGHT} at a time):`);
console.log(`  each request published at once   ${show(publishedAtOnce)}`);
console.log(`  requests once per turn           ${show(publishedPerTurn)}`);
await service.close();
await pool.end();
await nc.close();
