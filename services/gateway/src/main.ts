import { connectNatsBus } from "@sched/bus";
import { closeHttpServer, runProcess } from "@sched/process";
import { ReplyCipher } from "./outbound/idempotency/replyCipher.js";
import { RedisIdempotencyStore } from "./outbound/idempotency/store.js";
import { openRedis } from "./outbound/redisLink.js";
import { assembleGateway, gatewayConfigSchema, settingsOf } from "./service.js";

await runProcess("gateway", gatewayConfigSchema, async ({ config, process: common, logger, ready, onStop }) => {
  const bus = await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: "gateway", logger });
  onStop("drain bus", () => bus.close());
  // Redis is not a readiness condition: without it the limits fall back to this replica's memory.
  ready("bus", () => bus.isConnected());
  const redis = openRedis(config.REDIS_URL, logger);
  onStop("disconnect redis", async () => redis.disconnect());
  const { server, background } = await assembleGateway({
    bus,
    logger,
    settings: settingsOf(config),
    redis,
    keyPrefix: common.BUS_NAMESPACE,
    idempotency: new RedisIdempotencyStore(redis, common.BUS_NAMESPACE, new ReplyCipher(Buffer.from(config.IDEMPOTENCY_SEAL_KEY, "base64"))),
  });
  // Revocation notices and the request log's last batch, after the last request is answered.
  onStop("stop background work", () => background.stop());
  // Start-up (and so readiness) ends once the port is taken; a port already in use stops the process.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.PORT, () => {
      server.off("error", reject);
      resolve();
    });
  });
  logger.info({ port: config.PORT }, "gateway listening");
  onStop("finish requests", (deadline) => closeHttpServer(server, deadline));
});
