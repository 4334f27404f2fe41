import { AppError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import { endpoint, routeEndpoint } from "@sched/proto";
import { rejection } from "@sched/testing";
import { pino } from "pino";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bind, dispatch, MemoryBus, type RequestContext } from "../src/index.js";

const save = endpoint("orders.v1.save", z.object({ text: z.string() }), z.object({ saved: z.boolean() }));

/** A logger whose lines the test reads. */
function recordingLogger(): { logger: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: "debug" }, sink), lines };
}
const WARN = 40;
const ERROR = 50;

const ctx = (deadline: number): RequestContext => ({ subject: save.subject, headers: {}, deadline });

describe("dispatching a request", () => {
  it("drops a request whose deadline has passed before the handler runs", async () => {
    let ran = false;
    const { logger } = recordingLogger();
    const binding = bind(save, async () => ((ran = true), { saved: true }));
    const err = await rejection(dispatch(binding, { text: "late" }, ctx(Date.now() - 1), logger));
    expect([err.status, err.code]).toEqual([503, "service_unavailable"]);
    expect(ran).toBe(false);
  });

  it("words a refused request by what was sent: a parameter missing, or there and of the wrong type", async () => {
    const { logger } = recordingLogger();
    const binding = bind(save, async () => ({ saved: true }));
    const missing = await rejection(dispatch(binding, {}, ctx(Date.now() + 5_000), logger));
    expect([missing.status, missing.message]).toEqual([400, "Missing required parameter: text."]);
    const wrong = await rejection(dispatch(binding, { text: 3 }, ctx(Date.now() + 5_000), logger));
    expect([wrong.status, wrong.message]).toEqual([400, "Invalid text: expected string."]);
  });

  it("answers 503 with Retry-After for a database that is down, logging the cause once as a warning, not as a failed handler", async () => {
    const { logger, lines } = recordingLogger();
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const binding = bind(save, async () => {
      throw refused;
    });
    const err = await rejection(dispatch(binding, { text: "x" }, ctx(Date.now() + 1_000), logger));
    expect(err).toBeInstanceOf(AppError);
    expect([err.status, err.code, err.details.retryAfterSeconds]).toEqual([503, "service_unavailable", 1]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => l.level >= WARN).map((l) => l.level)).toEqual([WARN]);
  });

  it("still hides any other failure as a logged internal error", async () => {
    const { logger, lines } = recordingLogger();
    const binding = bind(save, async () => {
      throw new TypeError("Cannot read properties of undefined");
    });
    const err = await rejection(dispatch(binding, { text: "x" }, ctx(Date.now() + 1_000), logger));
    expect([err.status, err.code]).toEqual([500, "internal_error"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((l) => l.level >= WARN).map((l) => l.level)).toEqual([ERROR]);
  });

  it("answers 500 internal_error, logged at error with the subject and the status, when a route's handler answers a status its contract does not declare", async () => {
    const create = routeEndpoint("orders.v1.http.create", z.object({ text: z.string() }), { 201: z.object({ saved: z.boolean() }) });
    const { logger, lines } = recordingLogger();
    const bus = new MemoryBus(logger);
    // The cast stands for what slips past the compiler: an `any`, a status computed at run time.
    await bus.serve({ name: "orders", version: "1.0.0" }, [bind(create, async () => ({ status: 200, body: { saved: true } }) as never)]);
    const err = await rejection(bus.request(create, { text: "x" }));
    expect([err.status, err.code]).toEqual([500, "internal_error"]);
    await new Promise((resolve) => setImmediate(resolve));
    const logged = lines.filter((l) => l.level >= WARN) as Array<{ level: number; msg: string; subject?: string; status?: number }>;
    expect(logged.map((l) => [l.level, l.subject, l.status])).toEqual([[ERROR, create.subject, 200]]);
    await bus.close();
  });

  it("passes a declared status on", async () => {
    const create = routeEndpoint("orders.v1.http.create", z.object({ text: z.string() }), { 201: z.object({ saved: z.boolean() }) });
    const { logger } = recordingLogger();
    const reply = await dispatch(bind(create, async () => ({ status: 201, body: { saved: true } })), { text: "x" }, { ...ctx(Date.now() + 1_000), subject: create.subject }, logger);
    expect(reply).toEqual({ kind: "route", reply: { status: 201, body: { saved: true } } });
  });
});
