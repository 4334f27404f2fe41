import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertEndpoint } from "../src/db/queries.js";
import { DeliveryWorker } from "../src/outbound/worker.js";
import { SecretCipher } from "../src/domain/secretCipher.js";
import { newSigningSecret } from "../src/domain/secrets.js";
import { recordBatch } from "../src/consumers/recording.js";
import { webhooksService } from "../src/service.js";
import { createdEvent, startEventReceiver } from "./fixtures.js";

const EVENTS = 150;
/** Far longer than the test may wait: every delivery must come from a wake, none from the poll. */
const POLL_MS = 3_600_000;

describe("the delivery worker", () => {
  let db: Knex;
  let receiver: Awaited<ReturnType<typeof startEventReceiver>>;
  beforeAll(async () => {
    db = await openSchema({ kind: "pglite" }, webhooksService.schema, webhooksService.migrations);
    receiver = await startEventReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await db.destroy();
  });

  it("sends every event as it is recorded, woken each time, never waiting for its poll", { timeout: 600_000 }, async () => {
    const cipher = new SecretCipher(randomBytes(32));
    const url = receiver.url;
    for (let i = 0; i < 3; i++) {
      const id = `whe_${String(i).padStart(24, "0")}`;
      await insertEndpoint(db, { id, userId: "usr_w", mode: "test", url, events: ["*"], description: "", sealedSecret: cipher.seal(newSigningSecret(), id) });
    }
    const worker = new DeliveryWorker(db, cipher, createLogger({ name: "test", level: "silent" }), {
      retry: { baseMs: 1_000, maxDelayMs: 1_000, windowMs: 60_000 },
      // Every answer counts once: a loaded machine may keep the receiver past a short time-out, and a send given up
      // as timed out is sent again (at least once, as promised), which this count would read as a double.
      timeoutMs: 60_000,
      allowPrivate: true,
      concurrency: 8,
      perEndpoint: 2,
      pollMs: POLL_MS,
    });
    worker.start();
    try {
      const ids: string[] = [];
      const recording = Date.now();
      for (let i = 0; i < EVENTS; i++) {
        const { meetingId, event } = createdEvent(i, `W ${i}`);
        await recordBatch(db, [{ sourceEventId: `src_${i}`, userId: "usr_w", meetingId, event }]);
        worker.wake();
        ids.push(event.id);
        // Events keep coming while claims run.
        await new Promise((resolve) => setTimeout(resolve, i % 10 === 0 ? 20 : 2));
      }
      // Sending keeps pace with recording (both write the same embedded database), so a busy machine that slowed
      // the one slows the other: the wait follows what recording took, well short of the poll.
      const deadline = Date.now() + Math.max(60_000, 2 * (Date.now() - recording));
      while (receiver.received.length < EVENTS * 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(receiver.received).toHaveLength(EVENTS * 3);
      expect(new Set(receiver.received)).toEqual(new Set(ids));
    } finally {
      await worker.stop();
    }
  });
});
