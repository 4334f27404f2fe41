import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { notFound } from "@sched/errors";
import { createLogger } from "@sched/logging";
import { endpoint, eventDef, noticeDef, type Caller, type StreamDef } from "@sched/proto";
import { inSpan, serveMetrics, startTelemetry } from "@sched/telemetry";
import { clusterServersAvailable, deleteNamespaceStreams, eventually, NATS_URL, rejection, uniqueSuffix } from "@sched/testing";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { bind, connectNatsBus, MemoryBus, type Bus } from "../src/index.js";

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
await startTelemetry({ serviceName: "bus-tracing-test", spanProcessors: [processor] });
/** Ended spans wait for the resource's detected attributes before export: flush before looking. */
const flush = () => processor.forceFlush();

const logger = createLogger({ name: "bus-tracing-test", level: "silent" });
const namespace = `tr${uniqueSuffix()}`;
const STREAM: StreamDef = { name: "TRACED", subjectPrefix: "traced.v1.events" };
const happened = eventDef(STREAM, "happened", z.object({ thingId: z.string(), note: z.string() }));
/** On a stream of its own, so the batch test's consumer reads no other test's events. */
const batched = eventDef({ name: "BATCHED", subjectPrefix: "batched.v1.events" }, "happened", z.object({ thingId: z.string(), note: z.string() }));
const lookup = endpoint("traced.v1.lookup", z.object({ thingId: z.string(), mode: z.enum(["ok", "missing", "broken", "slow"]) }), z.object({ id: z.string() }));
const unserved = endpoint("traced.v1.unserved", z.object({}), z.object({}));
const dropped = noticeDef("traced.v1.notice.dropped", z.object({ thingId: z.string(), secret: z.string() }));
const caller: Caller = { userId: "usr_TracedUser0000000000000", email: "traced.user@example.com", timezone: "UTC", mode: "test", scopes: [], apiKeyId: "key_TracedKey00000000000000" };
const THING = "thg_Thing000000000000000001";

const natsAvailable = await clusterServersAvailable();
const opened: Bus[] = [];
afterAll(async () => {
  for (const bus of opened) await bus.close();
  if (natsAvailable) await deleteNamespaceStreams(NATS_URL, namespace);
});

async function metricsText(): Promise<string> {
  const server = createServer(serveMetrics);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
  } finally {
    server.close();
  }
}

const memory = new MemoryBus(logger);
const wirings = [
  { name: "in-process", available: true, open: async (): Promise<Bus> => memory },
  {
    name: "NATS",
    available: natsAvailable,
    open: async (): Promise<Bus> => {
      const bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "bus-tracing-test", logger });
      opened.push(bus);
      return bus;
    },
  },
];

const span = (name: string, kind: SpanKind) => exporter.getFinishedSpans().find((s) => s.name === name && s.kind === kind);
const parentOf = (s: ReadableSpan | undefined) => s?.parentSpanContext?.spanId;

describe.each(wirings)("trace context on the bus ($name)", ({ name, available, open }) => {
  const suffix = name === "NATS" ? "n" : "m";
  beforeEach(() => exporter.reset());

  it.runIf(available)("continues the caller's trace: CLIENT `<subject> send`, then SERVER `<subject>` running the handler", async () => {
    const server = await open();
    let handlerSpan: string | undefined;
    const svc = await server.serve({ name: `lookup${suffix}`, version: "1.0.0" }, [
      bind(lookup, async ({ thingId }) => {
        handlerSpan = trace.getActiveSpan()?.spanContext().spanId;
        return { id: thingId };
      }),
    ]);
    const client = await open();
    const root = await inSpan("root", { kind: SpanKind.INTERNAL }, async (s) => {
      await client.request(lookup, { thingId: THING, mode: "ok" }, { caller });
      return s.spanContext();
    });
    await svc.stop();
    await flush();

    const clientSpan = span("traced.v1.lookup send", SpanKind.CLIENT);
    const serverSpan = span("traced.v1.lookup", SpanKind.SERVER);
    expect(clientSpan?.spanContext().traceId).toBe(root.traceId);
    expect(serverSpan?.spanContext().traceId).toBe(root.traceId);
    expect(parentOf(clientSpan)).toBe(root.spanId);
    expect(parentOf(serverSpan)).toBe(clientSpan!.spanContext().spanId);
    expect(handlerSpan).toBe(serverSpan!.spanContext().spanId);
    expect(serverSpan!.attributes).toMatchObject({ "enduser.id": caller.userId, "sched.thing.id": THING, "sched.id": THING, "messaging.destination.name": "traced.v1.lookup" });
    for (const s of exporter.getFinishedSpans()) expect(JSON.stringify(s.attributes)).not.toContain(caller.email);
  });

  it.runIf(available)("marks a failure (5xx) failed with its code, and leaves a refusal (4xx) ok with its code noted", async () => {
    const server = await open();
    const svc = await server.serve({ name: `lookup${suffix}`, version: "1.0.0" }, [
      bind(lookup, async ({ mode }) => {
        if (mode === "missing") throw notFound("thing");
        throw new Error("database exploded at alice@example.com");
      }),
    ]);
    const client = await open();
    expect((await rejection(client.request(lookup, { thingId: THING, mode: "missing" }))).code).toBe("not_found");
    await flush();
    const refused = span("traced.v1.lookup", SpanKind.SERVER)!;
    expect(refused.status.code).toBe(SpanStatusCode.UNSET);
    expect(refused.attributes["sched.error.code"]).toBe("not_found");

    exporter.reset();
    expect((await rejection(client.request(lookup, { thingId: THING, mode: "broken" }))).code).toBe("internal_error");
    await svc.stop();
    await flush();
    for (const s of [span("traced.v1.lookup", SpanKind.SERVER)!, span("traced.v1.lookup send", SpanKind.CLIENT)!]) {
      expect(s.status.code).toBe(SpanStatusCode.ERROR);
      expect(s.attributes["error.type"]).toBe("internal_error");
      // Only the type is recorded: an error's message may hold anything.
      expect(JSON.stringify([s.name, s.attributes, s.status, s.events])).not.toContain("alice@example.com");
    }
  });

  it.runIf(available)("carries an event in its publisher's trace: PRODUCER `<subject> send`, CONSUMER `<subject>` as its child", async () => {
    const bus = await open();
    const seen: Array<{ span?: string; trace?: string }> = [];
    const consumer = await bus.consume({ durable: `traced-${suffix}`, events: [happened] }, async () => {
      const ctx = trace.getActiveSpan()?.spanContext();
      seen.push({ span: ctx?.spanId, trace: ctx?.traceId });
    });
    const root = await inSpan("root", { kind: SpanKind.INTERNAL }, async (s) => {
      await bus.publish(happened, { thingId: THING, note: "x" }, { msgId: `traced-${suffix}-${uniqueSuffix()}` });
      return s.spanContext();
    });
    await eventually(() => seen.length > 0, 10_000);
    await consumer.stop();
    await flush();

    const producer = span(`${happened.subject} send`, SpanKind.PRODUCER);
    const consumed = await eventually(async () => (await flush(), span(happened.subject, SpanKind.CONSUMER)));
    expect(parentOf(producer)).toBe(root.spanId);
    expect(consumed.spanContext().traceId).toBe(root.traceId);
    expect(parentOf(consumed)).toBe(producer!.spanContext().spanId);
    expect(seen[0]).toEqual({ span: consumed.spanContext().spanId, trace: root.traceId });
    expect(consumed.attributes).toMatchObject({ "sched.thing.id": THING, "messaging.consumer.group.name": `traced-${suffix}` });
  });

  it.runIf(available)("consumes a batch in one CONSUMER span under the first event's producer, linked to the others' producers", async () => {
    const bus = await open();
    const roots: string[] = [];
    for (let n = 0; n < 3; n++) {
      roots.push(
        await inSpan(`root ${n}`, { kind: SpanKind.INTERNAL }, async (s) => {
          await bus.publish(batched, { thingId: THING, note: `batch ${n}` }, { msgId: `batched-${suffix}-${n}-${uniqueSuffix()}` });
          return s.spanContext().traceId;
        }),
      );
    }
    let handled = 0;
    const consumer = await bus.consumeBatches({ durable: `batched-${suffix}`, events: [batched], maxBatch: 10 }, async (ms) => void (handled += ms.length));
    await eventually(() => handled >= 3, 10_000);
    await consumer.stop();
    await flush();

    const producers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.PRODUCER && roots.includes(s.spanContext().traceId));
    const batches = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CONSUMER && s.attributes["messaging.consumer.group.name"] === `batched-${suffix}`);
    expect(producers).toHaveLength(3);
    expect(batches.reduce((sum, s) => sum + Number(s.attributes["messaging.batch.message_count"]), 0)).toBe(3);
    // Every event's producer is the parent of its batch's span or linked from it, in the producer's trace.
    const reached = batches.flatMap((s) => [parentOf(s), ...s.links.map((l) => l.context.spanId)]);
    expect(reached.sort()).toEqual(producers.map((p) => p.spanContext().spanId).sort());
    for (const s of batches) expect(roots).toContain(s.spanContext().traceId);
  });

  it.runIf(available)("carries a notice in its sender's trace: PRODUCER `<subject> send`, a CONSUMER `<subject>` per receiver as its child", async () => {
    const sender = await open();
    const receivers = [await open(), await open()];
    const seen: string[] = [];
    const subscriptions = await Promise.all(
      receivers.map((bus) => bus.onNotice(dropped, () => void seen.push(trace.getActiveSpan()?.spanContext().spanId ?? "none"))),
    );
    const root = await inSpan("root", { kind: SpanKind.INTERNAL }, async (s) => {
      await sender.notify(dropped, { thingId: THING, secret: "f00d".repeat(16) });
      return s.spanContext();
    });
    // Two subscribers (two connections on NATS, two subscriptions on the one in-process bus), each told once.
    await eventually(() => seen.length === 2, 10_000);
    for (const s of subscriptions) await s.stop();
    await flush();

    const producer = span(`${dropped.subject} send`, SpanKind.PRODUCER);
    const received = exporter.getFinishedSpans().filter((s) => s.name === dropped.subject && s.kind === SpanKind.CONSUMER);
    expect(parentOf(producer)).toBe(root.spanId);
    expect(received).toHaveLength(2);
    for (const r of received) {
      expect(r.spanContext().traceId).toBe(root.traceId);
      expect(parentOf(r)).toBe(producer!.spanContext().spanId);
      expect(r.attributes["sched.thing.id"]).toBe(THING);
    }
    expect(seen.sort()).toEqual(received.map((r) => r.spanContext().spanId).sort());
    for (const s of [producer!, ...received]) expect(JSON.stringify(s.attributes)).not.toContain("f00d");
  });

  it.runIf(available)("counts a request nobody serves and one past its deadline apart", async () => {
    const server = await open();
    const svc = await server.serve({ name: `lookup${suffix}`, version: "1.0.0" }, [
      bind(lookup, async () => {
        await new Promise((r) => setTimeout(r, 300));
        return { id: THING };
      }),
    ]);
    const client = await open();
    expect((await rejection(client.request(unserved, {}))).code).toBe("service_unavailable");
    expect((await rejection(client.request(lookup, { thingId: THING, mode: "slow" }, { timeoutMs: 100 }))).code).toBe("service_unavailable");
    await svc.stop();
    await flush();
    const text = await metricsText();
    expect(text).toMatch(/^sched_bus_client_duration_count\{subject="traced\.v1\.unserved",outcome="no_responders"[^}]*\} [1-9]/m);
    expect(text).toMatch(/^sched_bus_client_duration_count\{subject="traced\.v1\.lookup",outcome="timeout"[^}]*\} [1-9]/m);
    expect(text).toMatch(/^sched_bus_timeouts(_total)?\{subject="traced\.v1\.lookup"[^}]*\} [1-9]/m);
    expect(span("traced.v1.unserved send", SpanKind.CLIENT)?.attributes["error.type"]).toBe("service_unavailable");
  });
});
