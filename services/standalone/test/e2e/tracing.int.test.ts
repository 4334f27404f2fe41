import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { startTelemetry } from "@sched/telemetry";
import { register } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// As the preload does in a real process: the loader hook and the SDK come
// before express, http and pg are first loaded, so the rest is imported below.
register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, { data: { include: ["express", "pg", "http", "https"] } });
const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
await startTelemetry({ serviceName: "trace-test", spanProcessors: [processor] });
const { meetingCreated } = await import("@sched/proto");
const { MEETING_EVENTS_CONSUMER } = await import("@sched/invites");
const { eventually } = await import("@sched/testing");
const { call, createUserWithKey, startTestSystem, wiringAvailable } = await import("../harness.js");
type TestSystem = Awaited<ReturnType<typeof startTestSystem>>;

const EMAIL = /[^\s"@]+@[^\s"@]+\.[a-z]{2,}/i;
const available = await wiringAvailable("cluster");

const id = (s: ReadableSpan) => s.spanContext().spanId;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const isDb = (s: ReadableSpan) => s.instrumentationScope.name.includes("instrumentation-pg");

describe.runIf(available)("tracing across the bus (cluster wiring)", () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem("cluster");
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it("puts one POST /v1/meetings in one trace: gateway, bus, meetings, SQL, the event's producer, the invites consumer and the delivery", async () => {
    const user = await createUserWithKey(sys.url, { mode: "live" });
    exporter.reset();

    const created = await call(sys.url, "POST", "/v1/meetings", {
      key: user.key,
      body: { title: "Traced", duration: "30 mins", startTime: "2031-05-06T10:00:00Z", participants: ["guest.one@example.com", "guest.two@example.org"] },
    });
    expect(created.status).toBe(201);
    const meetingId: string = created.body.id;
    const subject = meetingCreated.subject;
    // Ended spans wait for the resource's detected attributes before export: flush before looking.
    const finished = (find: (s: ReadableSpan) => boolean) =>
      eventually(async () => {
        await processor.forceFlush();
        return exporter.getFinishedSpans().find(find);
      }, 10_000);
    const delivery = await finished((s) => s.name === "invites.deliver" && s.attributes["sched.meeting.id"] === meetingId);

    const spans = exporter.getFinishedSpans();
    const http = spans.find((s) => s.kind === SpanKind.SERVER && s.attributes["http.request.method"] === "POST" && s.attributes["url.path"] === "/v1/meetings");
    expect(http, "the gateway's HTTP server span").toBeDefined();
    const traceId = http!.spanContext().traceId;
    expect(parentOf(http!)).toBeUndefined();
    const trace = spans.filter((s) => s.spanContext().traceId === traceId);
    const byId = new Map(trace.map((s) => [id(s), s]));
    const ancestors = (s: ReadableSpan): ReadableSpan[] => {
      const out: ReadableSpan[] = [];
      for (let p = byId.get(parentOf(s) ?? ""); p; p = byId.get(parentOf(p) ?? "")) out.push(p);
      return out;
    };

    const client = trace.find((s) => s.kind === SpanKind.CLIENT && s.name === "meetings.v1.http.create send");
    const server = trace.find((s) => s.kind === SpanKind.SERVER && s.name === "meetings.v1.http.create");
    expect(client, "the gateway's bus CLIENT span").toBeDefined();
    expect(server, "the meetings SERVER span").toBeDefined();
    expect(ancestors(client!)).toContain(http);
    expect(parentOf(server!)).toBe(id(client!));
    expect(server!.attributes["sched.id"]).toBe(meetingId);
    expect(server!.attributes["enduser.id"]).toBe(user.userId);

    const sql = trace.filter((s) => isDb(s) && ancestors(s).includes(server!));
    expect(sql.length, "SQL spans under the meetings span").toBeGreaterThan(0);
    expect(sql.some((s) => /insert/i.test(String(s.attributes["db.query.text"] ?? s.attributes["db.statement"] ?? s.name)))).toBe(true);

    const producer = trace.find((s) => s.kind === SpanKind.PRODUCER && s.name === `${subject} send`);
    expect(producer, "the relayed event's PRODUCER span").toBeDefined();
    expect(ancestors(producer!)).toContain(server);
    // invites takes events in batches: its CONSUMER span continues the first event's trace and links the others'.
    const consumerSpan = await finished(
      (s) =>
        s.kind === SpanKind.CONSUMER &&
        s.name === subject &&
        s.attributes["messaging.consumer.group.name"] === MEETING_EVENTS_CONSUMER &&
        (parentOf(s) === id(producer!) || s.links.some((l) => l.context.spanId === id(producer!))),
    );
    expect(consumerSpan.attributes["messaging.batch.message_count"]).toBeGreaterThanOrEqual(1);
    // The delivery is part of its own event's request, whatever batch recorded it.
    expect(delivery.spanContext().traceId).toBe(traceId);
    expect(parentOf(delivery)).toBe(id(producer!));

    // Every span this request caused is in this trace: none started one of its own.
    const aboutMeeting = spans.filter((s) => Object.values(s.attributes).includes(meetingId));
    expect(aboutMeeting.every((s) => s.spanContext().traceId === traceId)).toBe(true);
  });

  it("puts no e-mail address in any span attribute, name or event", () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(0);
    for (const s of spans) {
      const texts = [s.name, ...Object.values(s.attributes).map(String), ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {}).map(String)])];
      const leak = texts.find((t) => EMAIL.test(t));
      expect(leak, `span ${s.name}`).toBeUndefined();
    }
  });
});
