/**
 * node --conditions=@sched/source --import tsx bench/busPaths.ts
 *
 * CPU per request of two pieces of the bus's request path, old way against
 * new, alternating in one process so both meet the same machine: a request
 * through the NATS client's own request multiplexing against one through
 * NatsReplies (a responder in the same process echoes; its cost is common to
 * both), and a route's reply checked by the HttpReply schema against the
 * hand check. Reads process CPU time, so a busy machine makes it slower, not
 * dearer. Needs the local NATS (NATS_URL).
 */
import { headers as natsHeaders, type Msg } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { HttpReply, JsonText } from "@sched/proto";
import { NATS_URL, uniqueSuffix } from "@sched/testing";
import { checkedHttpReply } from "../libs/bus/src/httpReply.js";
import { NatsReplies } from "../libs/bus/src/natsReplies.js";

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
await nc.close();
