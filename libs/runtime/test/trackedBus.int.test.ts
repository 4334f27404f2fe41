import { bind, connectNatsBus, MemoryBus, type Bus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { endpoint } from "@sched/proto";
import { clusterServersAvailable, NATS_URL, uniqueSuffix } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TrackedBus } from "../src/index.js";

const logger = createLogger({ name: "tracked-bus-test", level: "silent" });
const echo = endpoint("test.echo", z.object({ text: z.string() }), z.object({ text: z.string() }));

const wirings: Array<{ name: string; available: boolean; open: () => Promise<Bus> }> = [
  { name: "in-process", available: true, open: async () => new MemoryBus(logger) },
  {
    name: "NATS",
    available: await clusterServersAvailable(),
    open: () => connectNatsBus({ servers: NATS_URL, namespace: `tb${uniqueSuffix()}`, name: "tracked-bus-test", logger }),
  },
];

describe.each(wirings)("readiness of what a module serves ($name)", ({ available, open }) => {
  it.runIf(available)("says serving while every endpoint is served, and not once one of them stopped", async () => {
    const bus = new TrackedBus(await open());
    try {
      const first = await bus.serve({ name: "first", version: "1.0.0" }, [bind(echo, async (req) => req)]);
      await bus.serve({ name: "second", version: "1.0.0" }, [bind(echo, async (req) => req)]);
      expect(bus.isServing()).toBe(true);
      // A module stopping one of its endpoints on its own: the process must no longer read as ready.
      await first.stop();
      expect(bus.isServing()).toBe(false);
    } finally {
      await bus.close();
    }
  });
});
