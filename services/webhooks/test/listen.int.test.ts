import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { createTestDatabase } from "@sched/testing";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertEndpoint, listenForQueued } from "../src/db/queries.js";
import { DeliveryWorker } from "../src/outbound/worker.js";
import { SecretCipher } from "../src/domain/secretCipher.js";
import { newSigningSecret } from "../src/domain/secrets.js";
import { recordBatch } from "../src/consumers/recording.js";
import { webhooksService } from "../src/service.js";
import { createdEvent, startEventReceiver } from "./fixtures.js";

/** Far longer than the test waits: a delivery must come from the announcement, not from the poll. */
const POLL_MS = 300_000;

describe("deliveries recorded by another replica", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  /** The recording replica's pool and the delivering replica's, apart as two processes' are. */
  let recording: Knex;
  let delivering: Knex;
  let receiver: Awaited<ReturnType<typeof startEventReceiver>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    recording = await openSchema({ kind: "postgres", url: database.url, poolMax: 2 }, webhooksService.schema, webhooksService.migrations);
    delivering = await openSchema({ kind: "postgres", url: database.url, poolMax: 3 }, webhooksService.schema, webhooksService.migrations);
    receiver = await startEventReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await recording.destroy();
    await delivering.destroy();
    await database.drop();
  });

  it("wake the other replica's worker at once, long before its poll", { timeout: 120_000 }, async () => {
    const cipher = new SecretCipher(randomBytes(32));
    const id = `whe_${"l".repeat(24)}`;
    await insertEndpoint(recording, { id, userId: "usr_l", mode: "test", url: receiver.url, events: ["*"], description: "", sealedSecret: cipher.seal(newSigningSecret(), id) });
    const worker = new DeliveryWorker(delivering, cipher, createLogger({ name: "test", level: "silent" }), {
      retry: { baseMs: 1_000, maxDelayMs: 1_000, windowMs: 60_000 },
      timeoutMs: 60_000,
      allowPrivate: true,
      concurrency: 4,
      perEndpoint: 2,
      pollMs: POLL_MS,
    });
    const lost: unknown[] = [];
    const stopListening = listenForQueued(delivering, () => worker.wake(), (err) => lost.push(err), 1_000);
    worker.start();
    try {
      // The worker's first look found nothing; it now sleeps its poll unless woken.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { meetingId, event } = createdEvent(i, `L ${i}`);
        // Recorded through the other pool, and nothing here wakes the worker.
        await recordBatch(recording, [{ sourceEventId: `src_l${i}`, userId: "usr_l", meetingId, event }]);
        sent.push(event.id);
        const deadline = Date.now() + 60_000;
        while (receiver.received.length < sent.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(receiver.received).toEqual(sent);
      }
      expect(lost).toEqual([]);
    } finally {
      await stopListening();
      await worker.stop();
    }
  });
});
