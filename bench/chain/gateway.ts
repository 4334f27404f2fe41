/**
 * The bare chain's gateway: express → a Redis rate limiter
 * (rate-limiter-flexible, per client address, a limit never reached) → one
 * NATS request → the JSON answer. `GET /item/rand` asks for a random row,
 * `GET /items?limit=100` for a page of rows from a random one on.
 * Its settings come as JSON in the first argument (bench/sideBySide.ts).
 */
import { connect } from "@nats-io/transport-node";
import express from "express";
import { Redis } from "ioredis";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { z } from "zod";

const settings = z.object({ port: z.number().int(), natsUrl: z.string(), redisUrl: z.string(), subject: z.string(), listSubject: z.string(), rows: z.number().int().positive() }).parse(JSON.parse(process.argv[2] ?? "{}"));
const rows = settings.rows;
const app = express();
app.disable("x-powered-by");
const redis = new Redis(settings.redisUrl);
await redis.ping();
const limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: "chain", points: 1e9, duration: 60 });
app.use((req, res, next) => {
  limiter.consume(req.ip ?? "").then(
    () => next(),
    (e: unknown) => (e instanceof Error ? next(e) : res.status(429).json({ error: "rate limited" })),
  );
});
const nc = await connect({ servers: settings.natsUrl, name: "chain-gateway" });
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A route that asks `subject` with what `payloadOf` makes of the request and answers the reply as JSON, an error reply with its status. */
const forwardTo =
  (subject: string, payloadOf: (req: express.Request) => unknown): express.RequestHandler =>
  async (req, res, next) => {
    try {
      const m = await nc.request(subject, encoder.encode(JSON.stringify(payloadOf(req))), { timeout: 5000 });
      const body = JSON.parse(decoder.decode(m.data)) as { error?: string; status?: number };
      if (body.error) return void res.status(body.status ?? 500).json(body);
      res.json(body);
    } catch (e) {
      next(e);
    }
  };
app.get("/item/:id", forwardTo(settings.subject, (req) => ({ id: req.params.id === "rand" ? 1 + Math.floor(Math.random() * rows) : Number(req.params.id) })));
app.get(
  "/items",
  forwardTo(settings.listSubject, (req) => {
    const limit = Math.min(100, Number(req.query.limit) || 100);
    return { from: 1 + Math.floor(Math.random() * (rows - limit)), limit };
  }),
);
app.listen(settings.port, "127.0.0.1", () => console.log("ready"));

// A stop is an exit, so that a CPU profile (--cpu-prof) is written.
process.once("SIGTERM", () => process.exit(0));
