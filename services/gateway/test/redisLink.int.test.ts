import { createLogger } from "@sched/logging";
import { clusterServersAvailable, REDIS_URL, startRedisServer, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { Redis } from "ioredis";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { openRedis } from "../src/outbound/redisLink.js";

const logger = createLogger({ name: "redis-link-test", level: "silent" });
const clients: Redis[] = [];
const servers: ServiceProcess[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.kill()));
});
const opened = async (url: string) => {
  const redis = openRedis(url, logger);
  clients.push(redis);
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
};
const ownServer = async () => {
  const server = await startRedisServer();
  servers.push(server);
  return { server, url: `redis://127.0.0.1:${server.port}` };
};
const nextPass = () => new Promise((resolve) => setImmediate(resolve));

/** Counts the writes reaching the client's socket (one `_write` or `_writev` each). */
function countWrites(redis: Redis): () => number {
  const socket = redis.stream as typeof redis.stream & { _write: (...args: unknown[]) => void; _writev?: (...args: unknown[]) => void };
  let writes = 0;
  const write = socket._write.bind(socket);
  socket._write = (...args) => {
    writes++;
    write(...args);
  };
  const writev = socket._writev?.bind(socket);
  if (writev) {
    socket._writev = (...args) => {
      writes++;
      writev(...args);
    };
  }
  return () => writes;
}

/** How long a promise takes to settle, and whether it was refused. */
async function settled(promise: Promise<unknown>): Promise<{ refused: boolean; ms: number }> {
  const started = Date.now();
  const refused = await promise.then(
    () => false,
    () => true,
  );
  return { refused, ms: Date.now() - started };
}

describe.runIf(await clusterServersAvailable())("the gateway's Redis client", () => {
  it("sends the commands of one pass of the event loop in one write and answers each in order", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const replies = await Promise.all([redis.set(key, "1", "EX", 60), redis.incr(key), redis.incrby(key, 5), redis.get(key), redis.pttl(key)]);
    expect(replies.slice(0, 4)).toEqual(["OK", 2, 7, "7"]);
    expect(replies[4]).toBeGreaterThan(50_000);
    expect(writes()).toBe(1);
    // A later pass's command is a write of its own, sent without waiting for anything else.
    expect(await redis.del(key)).toBe(1);
    expect(writes()).toBe(2);
    expect(redis.stream.writableCorked).toBe(0);
  });

  it("gathers the commands of separate callbacks of one pass, as of requests arriving together", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const inCallback = () => new Promise<number>((resolve, reject) => setImmediate(() => redis.incr(key).then(resolve, reject)));
    expect(await Promise.all([inCallback(), inCallback(), inCallback()])).toEqual([1, 2, 3]);
    expect(writes()).toBe(1);
    await redis.del(key);
  });

  it("sends each pass's commands while earlier ones are unanswered", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const first = redis.incr(key);
    await nextPass();
    const second = redis.incr(key);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(writes()).toBe(2);
    await redis.del(key);
  });

  it("answers commands issued from a reply's callback and from the check phase after the pass's write", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    // From a reply: written while the reply is read, in the poll phase of a later pass.
    const fromReply = new Promise<number>((resolve, reject) => {
      redis.incr(key, (err) => (err ? reject(err) : redis.incr(key).then(resolve, reject)));
    });
    expect(await fromReply).toBe(2);
    // The first command's immediate runs before this one, so this command corks the socket
    // again after the write, in the check phase, and goes in the next pass's.
    redis.incr(key).catch(() => undefined);
    const afterWrite = new Promise<number>((resolve, reject) => setImmediate(() => redis.incr(key).then(resolve, reject)));
    expect(await afterWrite).toBe(4);
    // Chained replies, each issuing the next command, all answered.
    let chained = 0;
    for (let i = 0; i < 20; i++) chained = await redis.incr(key);
    expect(chained).toBe(24);
    await nextPass();
    expect(redis.stream.writableCorked).toBe(0);
    await redis.del(key);
  });

  it("answers MULTI blocks, EVAL and a defined script in order with the pass's other commands", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    redis.defineCommand("rlinkIncr", { numberOfKeys: 1, lua: "return redis.call('incr', KEYS[1])" });
    const scripted = redis as Redis & { rlinkIncr: (key: string) => Promise<number> };
    const writes = countWrites(redis);
    const replies = await Promise.all([
      redis.incr(key),
      redis.multi().incr(key).pttl(key).get(key).exec(),
      redis.eval("return redis.call('incr', KEYS[1])", 1, key),
      scripted.rlinkIncr(key),
      redis.incr(key),
    ]);
    expect(replies).toEqual([1, [[null, 2], [null, -1], [null, "2"]], 3, 4, 5]);
    expect(writes()).toBe(1);
    await nextPass();
    expect(redis.stream.writableCorked).toBe(0);
    await redis.del(key);
  });

  it("answers a defined script whose copy Redis lost: the NOSCRIPT reply's resend goes out and is answered", async () => {
    const { url } = await ownServer();
    const redis = await opened(url);
    const other = new Redis(url);
    clients.push(other);
    const key = `rlink_${uniqueSuffix()}`;
    redis.defineCommand("rlinkIncr", { numberOfKeys: 1, lua: "return redis.call('incr', KEYS[1])" });
    const scripted = redis as Redis & { rlinkIncr: (key: string) => Promise<number> };
    expect(await scripted.rlinkIncr(key)).toBe(1);
    await other.script("FLUSH");
    expect(await Promise.all([scripted.rlinkIncr(key), scripted.rlinkIncr(key), redis.get(key)])).toEqual([2, 3, "1"]);
    await nextPass();
    expect(redis.stream.writableCorked).toBe(0);
  });

  it("refuses at once a command on a closing, closed or reconnecting client, and corks no new socket wrongly after it is back", async () => {
    const { server, url } = await ownServer();
    const redis = await opened(url);
    const key = `rlink_${uniqueSuffix()}`;
    expect(await redis.incr(key)).toBe(1);

    // The socket destroyed in the pass that corked it: the command already in it is resent
    // on the new connection or refused, a command after the destruction is refused at once.
    const corkedThenLost = settled(redis.incr(key));
    redis.stream.destroy();
    const afterLoss = await settled(redis.incr(key));
    expect(afterLoss.refused).toBe(true);
    expect(afterLoss.ms).toBeLessThan(1_000);
    const lost = await corkedThenLost;
    expect(lost.ms).toBeLessThan(5_000);
    if (redis.status !== "ready") await once(redis, "ready");
    expect(await redis.incr(key)).toBe(lost.refused ? 2 : 3);
    await nextPass();
    expect(redis.stream.writableCorked).toBe(0);

    // Redis gone: every command while the client reconnects is refused at once.
    await server.kill();
    for (let i = 0; i < 3; i++) {
      const away = await settled(redis.incr(key));
      expect(away.refused).toBe(true);
      expect(away.ms).toBeLessThan(1_000);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }

    // Closed by the gateway (its shutdown): refused at once.
    redis.disconnect();
    const closed = await settled(redis.incr(key));
    expect(closed.refused).toBe(true);
    expect(closed.ms).toBeLessThan(1_000);
  });

  it("answers a command issued in the pass of QUIT (refused or answered, never left waiting)", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const [quit, sameRound] = await Promise.all([settled(redis.quit()), settled(redis.incr(key))]);
    expect(quit.refused).toBe(false);
    expect(sameRound.ms).toBeLessThan(5_000);
    const afterQuit = await settled(redis.incr(key));
    expect(afterQuit.refused).toBe(true);
    expect(afterQuit.ms).toBeLessThan(1_000);
    const other = new Redis(REDIS_URL);
    clients.push(other);
    await other.del(key);
  });
});
