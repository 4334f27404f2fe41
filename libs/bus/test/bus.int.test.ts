import { AppError } from "@sched/errors";
import { createLogger } from "@sched/logging";
import { endpoint, eventDef, noticeDef, type Caller, type StreamDef } from "@sched/proto";
import { clusterServersAvailable, deleteNamespaceStreams, eventually, NATS_URL, rejection, uniqueSuffix } from "@sched/testing";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { bind, connectNatsBus, MemoryBus, type Bus, type EventMessage } from "../src/index.js";

const logger = createLogger({ name: "bus-test", level: "silent" });
const namespace = `b${uniqueSuffix()}`;
const STREAM: StreamDef = { name: "ORDERS", subjectPrefix: "orders.v1.events" };
const orderPlaced = eventDef(STREAM, "placed", z.object({ n: z.number() }));
const orderShipped = eventDef(STREAM, "shipped", z.object({ n: z.number() }));
const echo = endpoint("orders.v1.echo", z.object({ text: z.string() }), z.object({ text: z.string(), who: z.string().optional(), worker: z.string().optional() }));
const slow = endpoint("orders.v1.slow", z.object({}), z.object({}));
const nobody = endpoint("orders.v1.nobody", z.object({}), z.object({}));
const pinged = noticeDef("orders.v1.notice.ping", z.object({ n: z.number() }));
const caller: Caller = { userId: "usr_1", email: "a@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read"], apiKeyId: "key_1" };

type Factory = () => Promise<Bus>;
const memory = new MemoryBus(logger);
const natsAvailable = await clusterServersAvailable();
const opened: Bus[] = [];
const nats: Factory = async () => {
  const bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "bus-test", logger });
  opened.push(bus);
  return bus;
};

afterAll(async () => {
  for (const bus of opened) await bus.close();
  if (natsAvailable) await deleteNamespaceStreams(NATS_URL, namespace);
});

// The in-process bus is one shared object; NATS gets a connection per role, as separate processes would.
const wirings: Array<[string, Factory, boolean]> = [
  ["in-process", async () => memory, true],
  ["NATS", nats, natsAvailable],
];

describe.each(wirings)("the bus (%s)", (name, open, available) => {
  const suffix = name === "NATS" ? "n" : "m";
  const durable = (base: string) => `${base}-${suffix}`;

  it.runIf(available)("carries a request and its reply, with the caller", async () => {
    const server = await open();
    const svc = await server.serve({ name: `echo${suffix}`, version: "1.0.0" }, [bind(echo, async ({ text }, ctx) => ({ text, who: ctx.caller?.email }))]);
    const client = await open();
    expect(await client.request(echo, { text: "hi" }, { caller })).toEqual({ text: "hi", who: "a@example.com" });
    await svc.stop();
  });

  it.runIf(available)("refuses an invalid request with 400 naming the field, before the handler runs", async () => {
    const server = await open();
    let ran = false;
    const svc = await server.serve({ name: `val${suffix}`, version: "1.0.0" }, [bind(echo, async ({ text }) => ((ran = true), { text }))]);
    const err = await rejection((await open()).request(echo, { text: 5 } as never));
    expect([err.status, err.code, err.details.param]).toEqual([400, "invalid_request", "text"]);
    expect(ran).toBe(false);
    await svc.stop();
  });

  it.runIf(available)("passes a handler's AppError through and hides any other error", async () => {
    const server = await open();
    let mode: "app" | "bug" = "app";
    const svc = await server.serve({ name: `err${suffix}`, version: "1.0.0" }, [
      bind(echo, async () => {
        if (mode === "app") throw new AppError("contact_exists", "Already there.", { param: "email" });
        throw new Error("select * from secrets failed");
      }),
    ]);
    const client = await open();
    const appErr = await rejection(client.request(echo, { text: "x" }));
    expect([appErr.status, appErr.code, appErr.message, appErr.details.param]).toEqual([409, "contact_exists", "Already there.", "email"]);
    mode = "bug";
    const bug = await rejection(client.request(echo, { text: "x" }));
    expect([bug.status, bug.code]).toEqual([500, "internal_error"]);
    expect(bug.message).not.toContain("secrets");
    await svc.stop();
  });

  it.runIf(available)("turns a missed deadline into a fast 503", async () => {
    const server = await open();
    const svc = await server.serve({ name: `slow${suffix}`, version: "1.0.0" }, [bind(slow, () => new Promise((r) => setTimeout(() => r({}), 2_000)))]);
    const started = Date.now();
    const err = await rejection((await open()).request(slow, {}, { timeoutMs: 200 }));
    expect([err.status, err.code]).toEqual([503, "service_unavailable"]);
    expect(Date.now() - started).toBeLessThan(700);
    await svc.stop();
  });

  it.runIf(available)("answers 503 at once when nobody serves the subject, or the service stopped", async () => {
    const client = await open();
    const started = Date.now();
    expect((await rejection(client.request(nobody, {}, { timeoutMs: 3_000 }))).code).toBe("service_unavailable");
    expect(Date.now() - started).toBeLessThan(1_000);
    const svc = await (await open()).serve({ name: `gone${suffix}`, version: "1.0.0" }, [bind(nobody, async () => ({}))]);
    await client.request(nobody, {});
    await svc.stop();
    expect((await rejection(client.request(nobody, {}, { timeoutMs: 3_000 }))).code).toBe("service_unavailable");
  });

  it.runIf(available)("shares requests among the replicas of a service", async () => {
    const replica = (worker: string) => bind(echo, async ({ text }) => ({ text, worker }));
    const a = await (await open()).serve({ name: `share${suffix}`, version: "1.0.0" }, [replica("a")]);
    const b = await (await open()).serve({ name: `share${suffix}`, version: "1.0.0" }, [replica("b")]);
    const client = await open();
    const workers = await Promise.all(Array.from({ length: 40 }, () => client.request(echo, { text: "x" })));
    const counts = { a: workers.filter((w) => w.worker === "a").length, b: workers.filter((w) => w.worker === "b").length };
    expect(counts.a + counts.b).toBe(40);
    expect(counts.a).toBeGreaterThan(0);
    expect(counts.b).toBeGreaterThan(0);
    await a.stop();
    await b.stop();
  });

  it.runIf(available)("delivers every event at least once to a consumer that restarts", async () => {
    const bus = await open();
    const seen: number[] = [];
    const tag = uniqueSuffix();
    for (let n = 1; n <= 5; n++) await bus.publish(orderPlaced, { n }, { msgId: `${tag}-${n}` });
    const first = await (await open()).consume({ durable: durable(`restart-${tag}`), events: [orderPlaced] }, async (m) => {
      seen.push((m.payload as { n: number }).n);
    });
    await eventually(() => seen.length >= 2);
    await first.stop();
    const second = await (await open()).consume({ durable: durable(`restart-${tag}`), events: [orderPlaced] }, async (m) => {
      seen.push((m.payload as { n: number }).n);
    });
    await eventually(() => new Set(seen).size === 5 || undefined, 10_000);
    await second.stop();
    expect([...new Set(seen)].sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it.runIf(available)("redelivers an event whose handler failed, and de-duplicates by message id", async () => {
    const bus = await open();
    const tag = uniqueSuffix();
    await bus.publish(orderShipped, { n: 1 }, { msgId: `${tag}-dup` });
    await bus.publish(orderShipped, { n: 1 }, { msgId: `${tag}-dup` });
    await bus.publish(orderShipped, { n: 2 }, { msgId: `${tag}-two` });
    const deliveries: EventMessage[] = [];
    let failedOnce = false;
    const consumer = await bus.consume({ durable: durable(`retry-${tag}`), events: [orderShipped], backoffMs: [50] }, async (m) => {
      deliveries.push(m);
      if (!failedOnce) {
        failedOnce = true;
        throw new Error("transient");
      }
    });
    await eventually(() => deliveries.filter((d) => (d.payload as { n: number }).n === 2).length === 1 || undefined, 10_000);
    await consumer.stop();
    const ones = deliveries.filter((d) => (d.payload as { n: number }).n === 1);
    expect(ones.map((d) => d.deliveryCount)).toEqual([1, 2]);
    expect(ones[0]!.streamSequence).toBe(ones[1]!.streamSequence);
  });

  it.runIf(available)("fans a notice out to every subscriber", async () => {
    const got: string[] = [];
    const subs = await Promise.all(["x", "y"].map(async (who) => (await open()).onNotice(pinged, () => void got.push(who))));
    await new Promise((r) => setTimeout(r, 50));
    await (await open()).notify(pinged, { n: 1 });
    await eventually(() => got.length === 2);
    expect(got.sort()).toEqual(["x", "y"]);
    for (const s of subs) await s.stop();
  });
});
