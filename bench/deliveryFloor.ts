/**
 * npm run bench -- delivery-floor [--quick]
 *
 * The least CPU a webhook delivery can cost on this machine: a bare
 * node:http client with keep-alive posting a signed event-sized body to a
 * bare node:http receiver in a process of its own that answers 204, 50 at a
 * time. No database, no queue, no DNS check: what any Node.js delivery
 * must at least spend, sender and receiver, to set the webhooks
 * benchmark's figures and its target against.
 */
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { cpus } from "node:os";
import { processCpuUs } from "./lib/cpuTime.js";

const RECEIVER = `
const { createServer } = require("node:http");
const server = createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  req.resume();
  req.on("end", () => { res.statusCode = 204; res.end(); });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

const IN_FLIGHT = 50;

interface Round {
  perSecond: number;
  senderUs: number;
  receiverUs: number;
}

export async function benchDeliveryFloor({ quick }: { quick: boolean }): Promise<void> {
  const receiver = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => receiver.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  // A meeting.created event's size as the webhooks service sends it (about 1 KB), signed as Standard Webhooks asks.
  const body = Buffer.from(JSON.stringify({ id: "evt_floor", type: "meeting.created", data: { object: { filler: "x".repeat(900) } } }));
  const secret = randomBytes(24);
  const post = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const id = `msg_${n}`;
      const timestamp = String(Math.floor(Date.now() / 1_000));
      const signature = createHmac("sha256", secret).update(`${id}.${timestamp}.`).update(body).digest("base64");
      const headers = { "content-type": "application/json", "content-length": body.length, "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
      request({ host: "127.0.0.1", port, method: "POST", path: "/hook", agent, headers }, (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 204 ? resolve() : reject(new Error(`receiver answered ${res.statusCode}`))));
      })
        .on("error", reject)
        .end(body);
    });
  const round = async (count: number): Promise<Round> => {
    let next = 0;
    const [senderBefore, receiverBefore, startedAt] = [process.cpuUsage(), processCpuUs(receiver.pid!), performance.now()];
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await post(next++);
    }));
    const seconds = (performance.now() - startedAt) / 1_000;
    const sender = process.cpuUsage(senderBefore);
    return { perSecond: count / seconds, senderUs: (sender.user + sender.system) / count, receiverUs: (processCpuUs(receiver.pid!) - receiverBefore) / count };
  };
  try {
    await round(5_000);
    const count = quick ? 10_000 : 40_000;
    const rounds: Round[] = [];
    for (let i = 0; i < 3; i++) rounds.push(await round(count));
    const median = (pick: (r: Round) => number) => rounds.map(pick).sort((a, b) => a - b)[1]!;
    for (const [i, r] of rounds.entries()) console.log(`round ${i + 1}: ${r.perSecond.toFixed(0)} posts/s, sender ${r.senderUs.toFixed(0)} µs, receiver ${r.receiverUs.toFixed(0)} µs of CPU per post`);
    const perPost = median((r) => r.senderUs) + median((r) => r.receiverUs);
    console.log(`median: ${perPost.toFixed(0)} µs of CPU per delivery, sender and receiver; ${cpus().length} cores carry at most ${Math.floor((cpus().length * 1e6) / perPost)} deliveries a second with nothing else running`);
  } finally {
    agent.destroy();
    receiver.kill();
  }
}
