import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MemoryBus, type Bus, type EventMessageOf } from "@sched/bus";
import { openSchema, type Knex, type Migration } from "@sched/db";
import { unavailable } from "@sched/errors";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { inSpan, serveMetrics, startTelemetry } from "@sched/telemetry";
import { createTestDatabase, eventually } from "@sched/testing";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { enqueueEvent, outboxMigration, outboxTraceContextMigration, startOutboxRelay, type OutboxRelay } from "../src/index.js";

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
await startTelemetry({ serviceName: "outbox-tracing-test", spanProcessors: [processor] });

const STREAM: StreamDef = { name: "OUTBOX_TRACE", subjectPrefix: "outboxtrace.v1.events" };
const thingDone = eventDef(STREAM, "thing.done", z.object({ thingId: z.string() }));
const logger = createLogger({ name: "outbox-tracing-test", level: "silent" });

async function metricsText(): Promise<string> {
  const server = createServer(serveMetrics);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
  } finally {
    server.close();
  }
}

function lagOf(text: string, schema: string): number | undefined {
  const m = new RegExp(`^sched_outbox_lag\\{outbox="${schema}"[^}]*\\} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

/** A bus whose publishing can be switched off, as when NATS is away. */
function flakyBus(inner: Bus, state: { down: boolean }): Bus {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "publish") {
        return (...args: Parameters<Bus["publish"]>) => (state.down ? Promise.reject(unavailable()) : target.publish(...args));
      }
      if (prop === "publishStored") {
        return (...args: Parameters<Bus["publishStored"]>) => (state.down ? Promise.reject(unavailable()) : target.publishStored(...args));
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("the outbox and tracing", () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  let relay: OutboxRelay | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openSchema({ kind: "postgres", url: database.url }, "outbox_trace", [outboxMigration("001_outbox")]);
  });

  afterAll(async () => {
    await relay?.stop();
    await db?.destroy();
    await database?.drop();
  });

  it("publishes an event in the trace of the request that wrote it, however much later", async () => {
    const bus = new MemoryBus(logger);
    const received: EventMessageOf<typeof thingDone>[] = [];
    const consumer = await bus.consume({ durable: "trace", events: [thingDone] }, async (m) => void received.push(m));
    const request = await inSpan("the request", { kind: SpanKind.SERVER }, async (span) => {
      await db.transaction((trx) => enqueueEvent(trx, thingDone, { thingId: "thg_Traced0000000000000001" }, "traced-1"));
      return span.spanContext();
    });
    const stored = await db("outbox").where({ msg_id: "traced-1" }).first();
    expect(stored.trace_context.traceparent).toContain(request.traceId);

    relay = startOutboxRelay({ db, bus, logger, events: [thingDone], pollMs: 50 });
    await eventually(() => received.length === 1);
    await relay.stop();
    relay = undefined;
    await consumer.stop();
    await processor.forceFlush();

    const producer = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.PRODUCER && s.name === `${thingDone.subject} send`);
    expect(producer?.spanContext().traceId).toBe(request.traceId);
    expect(producer?.parentSpanContext?.spanId).toBe(request.spanId);
    // The relay's own polling queries start no traces.
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId !== request.traceId)).toEqual([]);
  });

  it("reports the age of the oldest row it could not publish, and 0 once the outbox is empty", async () => {
    const state = { down: true };
    const bus = new MemoryBus(logger);
    relay = startOutboxRelay({ db, bus: flakyBus(bus, state), logger, events: [thingDone], pollMs: 50 });
    await db.transaction((trx) => enqueueEvent(trx, thingDone, { thingId: "thg_Stuck00000000000000001" }, "stuck-1"));
    const lagging = await eventually(async () => {
      const lag = lagOf(await metricsText(), "outbox_trace");
      return lag !== undefined && lag >= 0.3 ? lag : undefined;
    });
    expect(lagging).toBeGreaterThanOrEqual(0.3);
    state.down = false;
    await eventually(async () => lagOf(await metricsText(), "outbox_trace") === 0, 10_000);
    await relay.stop();
    relay = undefined;
  });

  it("adds trace_context to an outbox made before it existed", async () => {
    const before: Migration = {
      name: "001_outbox",
      up: async (k) => {
        await k.raw(`create table outbox (id bigserial primary key, subject text not null, payload jsonb not null, msg_id text not null,
          created_at timestamptz not null default now(), published_at timestamptz, constraint outbox_msg_id_unique unique (msg_id))`);
      },
    };
    const old = await openSchema({ kind: "postgres", url: database.url }, "outbox_old", [before]);
    await old.destroy();
    const upgraded = await openSchema({ kind: "postgres", url: database.url }, "outbox_old", [before, outboxTraceContextMigration("002_outbox_trace_context")]);
    try {
      await inSpan("a request", { kind: SpanKind.SERVER }, () => upgraded.transaction((trx) => enqueueEvent(trx, thingDone, { thingId: "thg_Old0000000000000000001" }, "old-1")));
      const row = await upgraded("outbox").where({ msg_id: "old-1" }).first();
      expect(row.trace_context.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    } finally {
      await upgraded.destroy();
    }
  });
});
