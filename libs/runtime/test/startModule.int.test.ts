import { bind, MemoryBus } from "@sched/bus";
import { ConfigError } from "@sched/config";
import type { Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { endpoint } from "@sched/proto";
import { createTestDatabase, freePort, rejection } from "@sched/testing";
import { Agent, get } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineService, startModule, type ServiceDeps } from "../src/index.js";

const logger = createLogger({ name: "start-module-test", level: "silent" });
const echo = endpoint("starter.v1.echo", z.object({ text: z.string() }), z.object({ text: z.string() }));
const settingsSchema = z.object({ GREETING: z.string() });

/** A module with one table, one endpoint, and a start and stop the test observes. */
function testModule(hooks: { started?: (deps: ServiceDeps<z.output<typeof settingsSchema>>) => Promise<void>; stopping?: () => Promise<void> } = {}) {
  return defineService({
    name: "starter",
    schema: "starter",
    migrations: [{ name: "0001_notes", up: (db) => db.schema.createTable("notes", (t) => t.text("text")) }],
    config: settingsSchema,
    standaloneEnv: { GREETING: "development" },
    async start(deps) {
      const served = await deps.bus.serve({ name: "starter", version: "1.0.0" }, [bind(echo, async ({ text }) => ({ text: `${deps.config.GREETING} ${text}` }))]);
      await hooks.started?.(deps);
      return {
        stop: async () => {
          await hooks.stopping?.();
          await served.stop();
        },
      };
    },
  });
}

let bus: MemoryBus;
let database: { url: string; drop: () => Promise<void> };
const target = () => ({ kind: "postgres" as const, url: database.url, poolMax: 2 });
beforeAll(async () => void (database = await createTestDatabase()));
afterEach(async () => bus?.close());
afterAll(async () => database?.drop());

describe("starting a service module", () => {
  it("migrates, serves with its settings, and stops in reverse: requests first, the module's own stop, the pool it opened last, a shared bus left open", async () => {
    bus = new MemoryBus(logger);
    const seen: string[] = [];
    let db: Knex | undefined;
    const started = await startModule(
      testModule({
        started: async (deps) => void (db = deps.db),
        // At the module's own stop its endpoints are no longer answered, and its database still is.
        stopping: async () => {
          seen.push((await rejection(bus.request(echo, { text: "late" }), echo.subject)).code);
          seen.push(String((await db!("notes").count({ n: "*" }))[0]!.n));
        },
      }),
      { database: target(), bus, logger, settings: { GREETING: "hello" } },
    );
    expect(await bus.request(echo, { text: "there" })).toEqual({ text: "hello there" });
    await started.db("notes").del();
    await started.db("notes").insert({ text: "kept" });

    await started.stop();
    expect(seen).toEqual(["service_unavailable", "1"]);
    await expect(started.db.raw("select 1")).rejects.toThrow();
    expect(bus.isConnected()).toBe(true);
  });

  it("fills unset settings with the module's development values only when asked, and refuses a missing one by name before the module starts", async () => {
    bus = new MemoryBus(logger);
    const started = await startModule(testModule(), { database: target(), bus, logger, settings: {}, developmentDefaults: true });
    expect(await bus.request(echo, { text: "there" })).toEqual({ text: "development there" });
    await started.stop();

    let opened = false;
    const err = await startModule(testModule({ started: async () => void (opened = true) }), { database: target(), bus, logger, settings: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.join()).toContain("GREETING");
    expect(opened).toBe(false);
  });

  it("stops what it had started when the module's start fails, and fails with the cause", async () => {
    bus = new MemoryBus(logger);
    let db: Knex | undefined;
    // Fails once it serves its endpoint: the starter must stop serving it and close the pool.
    const failing = testModule({
      started: async (deps) => {
        db = deps.db;
        throw new Error("the module could not start");
      },
    });
    await expect(startModule(failing, { database: target(), bus, logger, settings: { GREETING: "hello" } })).rejects.toThrow("the module could not start");
    expect((await rejection(bus.request(echo, { text: "x" }), echo.subject)).code).toBe("service_unavailable");
    await expect(db!.raw("select 1")).rejects.toThrow();
  });

  it("keeps an idle connection to its own pages open past Node's 5 s, as a proxy in front expects (60 s on ALB and nginx)", async () => {
    bus = new MemoryBus(logger);
    const port = await freePort();
    const pages = defineService({
      ...testModule(),
      async start() {
        // Answers with the client's port: the same port twice means the same connection.
        return { stop: async () => {}, http: { port, mountPath: "/", handler: (req, res) => res.end(String(req.socket.remotePort)) } };
      },
    });
    const started = await startModule(pages, { database: target(), bus, logger, settings: { GREETING: "hello" }, listenForPages: true });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const clientPort = () =>
      new Promise<string>((resolve, reject) => {
        get({ port, agent, path: "/" }, (res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => (body += chunk.toString()));
          res.on("end", () => resolve(body));
        }).on("error", reject);
      });
    try {
      const first = await clientPort();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(await clientPort()).toBe(first);
    } finally {
      agent.destroy();
      await started.stop();
    }
  }, 30_000);
});
