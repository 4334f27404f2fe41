import { clusterServersAvailable, NATS_URL, REDIS_URL, startGatewayProcess, startRedisServer, eventually, type ServiceProcess } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, createUserWithKey, startTestSystem, type TestSystem } from "../harness.js";

const available = await clusterServersAvailable();

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string } };
}

/**
 * How long a request of a burst may take before it counts as unanswered. 150 at once
 * through two replica processes that have served nothing yet take 2–4 s for the slowest on
 * a loaded machine and over 5 s beside a CPU hog, with the gateway's Redis commands
 * auto-pipelined or corked alike (docs/benchmarks.md); a request never answered still
 * fails the test, by its own error, well before the test's time-out.
 */
const ANSWERED_WITHIN_MS = 30_000;

async function getMe(gateway: ServiceProcess, key: string): Promise<Answer> {
  const res = await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(ANSWERED_WITHIN_MS) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer["body"] };
}

/**
 * A request the limiter let through: served (200), or counted and then not answered by
 * its service in time (503 service_unavailable, which a starved machine gives now and
 * then). The limiter took its place in the count either way, and its headers say which.
 */
const admitted = (a: Answer) => a.status === 200 || (a.status === 503 && a.body.error?.code === "service_unavailable" && a.headers.has("x-ratelimit-remaining"));
/** Each answer as the limiter decided it: admitted, refused (429), or else its status. */
const outcome = (a: Answer) => (admitted(a) ? "admitted" : a.status === 429 ? "refused" : a.status);
const outcomes = (answers: Answer[]) => answers.map(outcome).sort();
const count = (answers: Answer[], wanted: ReturnType<typeof outcome>) => answers.filter((a) => outcome(a) === wanted).length;

// Replicas as production runs them: separate gateway processes sharing one Redis and the bus of one system.
describe.runIf(available)("rate limits across gateway replicas", () => {
  let sys: TestSystem;
  const started: ServiceProcess[] = [];
  const gatewayEnv = (redisUrl: string, extra: Record<string, string> = {}) => ({
    NATS_URL,
    REDIS_URL: redisUrl,
    BUS_NAMESPACE: sys.namespace!,
    ADMIN_TOKEN,
    ...extra,
  });
  const startGateway = async (env: Record<string, string>) => {
    const gateway = await startGatewayProcess(env);
    started.push(gateway);
    return gateway;
  };

  beforeAll(async () => {
    sys = await startTestSystem("cluster");
  }, 60_000);
  afterAll(async () => {
    await Promise.all(started.map((p) => p.kill()));
    await sys?.stop();
  });

  it("admits exactly 100 of 150 concurrent requests with one key through two replicas, and refuses 50 with the headers", async () => {
    const [a, b] = await Promise.all([startGateway(gatewayEnv(REDIS_URL)), startGateway(gatewayEnv(REDIS_URL))]);
    const { key } = await createUserWithKey(sys.url);
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => getMe(i % 2 === 0 ? a! : b!, key)));

    expect(count(answers, "admitted")).toBe(100);
    expect(count(answers, "refused")).toBe(50);
    for (const answer of answers) {
      expect(answer.headers.get("x-ratelimit-limit")).toBe("100");
      expect(answer.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    }
    // Each admitted request saw a distinct place in the one shared count.
    const remaining = answers.filter(admitted).map((x) => Number(x.headers.get("x-ratelimit-remaining")));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const refused of answers.filter((x) => x.status === 429)) {
      expect(refused.body.error?.code).toBe("rate_limited");
      expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  }, 90_000);

  it("keeps serving and limiting per replica while Redis is down, and shares the count again when it is back", async () => {
    let redis = await startRedisServer();
    const redisUrl = `redis://127.0.0.1:${redis.port}`;
    started.push(redis);
    const env = gatewayEnv(redisUrl, { RATE_LIMIT_STANDARD_PER_MINUTE: "10", LOG_LEVEL: "info" });
    const [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
    const burst = async (key: string, perReplica: number) => [
      ...(await Promise.all(Array.from({ length: perReplica }, () => getMe(a!, key)))),
      ...(await Promise.all(Array.from({ length: perReplica }, () => getMe(b!, key)))),
    ];

    const shared = await burst((await createUserWithKey(sys.url)).key, 6);
    expect(outcomes(shared)).toEqual([...Array(10).fill("admitted"), "refused", "refused"]);

    await redis.kill();
    const alone = await burst((await createUserWithKey(sys.url)).key, 12);
    // Each replica counts on its own: ten each, and never a 500.
    expect(outcomes(alone)).toEqual([...Array(20).fill("admitted"), ...Array(4).fill("refused")]);
    expect(a!.output()).toContain("redis unavailable");

    redis = await startRedisServer(redis.port);
    started.push(redis);
    // Back when a request on one replica is seen in the other's count.
    await eventually(async () => {
      const probe = (await createUserWithKey(sys.url)).key;
      await getMe(a!, probe);
      return (await getMe(b!, probe)).headers.get("x-ratelimit-remaining") === "8";
    }, 20_000, 250);
    const again = await burst((await createUserWithKey(sys.url)).key, 6);
    expect(outcomes(again)).toEqual([...Array(10).fill("admitted"), "refused", "refused"]);
    expect(a!.output()).toContain("redis available");
    expect(a!.output().match(/redis unavailable/g)).toHaveLength(1);
  }, 120_000);
});
