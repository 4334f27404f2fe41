import { env } from "@sched/config";
import { Sealer } from "@sched/ids";
import { sweepExpiredIdempotencyKeys } from "@sched/db/idempotent-writes";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { migrations } from "./db/migrations/index.js";
import { listenForQueued } from "./db/queries.js";
import { DeliveryWorker } from "./outbound/worker.js";
import { SecretCipher } from "./domain/secretCipher.js";
import { endpointBindings } from "./inbound/endpoints.js";
import { eventBindings } from "./inbound/events.js";
import { consumeInviteEvents } from "./consumers/inviteEvents.js";
import { consumeMeetingEvents } from "./consumers/meetingEvents.js";
import { whileElected } from "./consumers/recorderElection.js";

/** The advisory lock of the replica recording events. */
const RECORDING_LOCK = "webhooks event recording";

const config = z.object({
  /** 32 bytes, base64: the AES-256-GCM key of stored signing secrets. */
  WEBHOOKS_SECRET_KEY: env.aesKey(),
  /** Whether endpoints may be on loopback, private and link-local addresses: for local development only. */
  WEBHOOKS_ALLOW_PRIVATE: env.flag(false),
  /** The wait after a first failed attempt; the waits double from it. */
  WEBHOOKS_RETRY_BASE_MS: env.positiveInt(5_000),
  WEBHOOKS_RETRY_MAX_DELAY_MS: env.positiveInt(6 * 3_600_000),
  /** How long a delivery is retried: 3 days. */
  WEBHOOKS_RETRY_WINDOW_MS: env.positiveInt(3 * 24 * 3_600_000),
  WEBHOOKS_TIMEOUT_MS: env.positiveInt(10_000),
  WEBHOOKS_CONCURRENCY: env.positiveInt(64),
  WEBHOOKS_PER_ENDPOINT: env.positiveInt(4),
  WEBHOOKS_POLL_MS: env.positiveInt(1_000),
});

/**
 * A development-only key for standalone mode and tests, so `npm start` needs
 * no setup. A deployment sets its own WEBHOOKS_SECRET_KEY.
 */
export const DEV_WEBHOOKS_SECRET_KEY = Buffer.from("sched-standalone-dev-webhook-key").toString("base64");

/**
 * Webhooks: turns meeting events (answers included) and invite outcomes into public events (`GET /v1/events`) and
 * delivers them, signed by the Standard Webhooks specification, to the
 * endpoints users register; retried with back-off for 3 days.
 */
export const webhooksService = defineService({
  name: "webhooks",
  schema: "webhooks",
  migrations,
  config,
  standaloneEnv: { WEBHOOKS_SECRET_KEY: DEV_WEBHOOKS_SECRET_KEY, WEBHOOKS_ALLOW_PRIVATE: "true" },
  async start({ bus, db, logger, config: c }) {
    const secretKey = Buffer.from(c.WEBHOOKS_SECRET_KEY, "base64");
    const cipher = new SecretCipher(secretKey);
    // The answers kept under an Idempotency-Key hold a signing secret too: sealed under the same key, bound to their record.
    const replies = new Sealer(secretKey, "the webhook secret key");
    const worker = new DeliveryWorker(db, cipher, logger, {
      retry: { baseMs: c.WEBHOOKS_RETRY_BASE_MS, maxDelayMs: c.WEBHOOKS_RETRY_MAX_DELAY_MS, windowMs: c.WEBHOOKS_RETRY_WINDOW_MS },
      timeoutMs: c.WEBHOOKS_TIMEOUT_MS,
      allowPrivate: c.WEBHOOKS_ALLOW_PRIVATE,
      concurrency: c.WEBHOOKS_CONCURRENCY,
      perEndpoint: c.WEBHOOKS_PER_ENDPOINT,
      pollMs: c.WEBHOOKS_POLL_MS,
    });
    const wake = () => worker.wake();
    const served = await bus.serve({ name: "webhooks", version: "1.0.0", description: "Public events and signed webhooks" }, [
      ...eventBindings(db, bus, wake),
      ...endpointBindings({ db, cipher, replies, allowPrivate: c.WEBHOOKS_ALLOW_PRIVATE, resumed: wake }),
    ]);
    // Each consumed batch's deliveries are claimed for this worker as they are recorded, as far as it has room.
    // One replica records at a time, so that JetStream hands it the streams whole, in order.
    const recording = await whileElected(db, RECORDING_LOCK, logger, async () => {
      const events = await consumeMeetingEvents(bus, db, logger, worker);
      const invites = await consumeInviteEvents(bus, db, logger, worker);
      return {
        stop: async () => {
          await events.stop();
          await invites.stop();
        },
      };
    });
    worker.start();
    // Deliveries recorded by another replica wake this one's worker too; its poll stays as the fallback.
    const stopListening = listenForQueued(db, wake, (err) => logger.warn({ err }, "not listening for queued webhook deliveries; the poll finds them meanwhile"), c.WEBHOOKS_POLL_MS);
    const stopSweeping = sweepExpiredIdempotencyKeys(db, logger);
    return {
      stop: async () => {
        await served.stop();
        stopSweeping();
        await recording.stop();
        await stopListening();
        await worker.stop();
      },
    };
  },
});
