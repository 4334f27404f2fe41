/**
 * The bare chain's service: a NATS responder (queue group) that reads one row
 * by primary key and answers it as JSON, and a page of 100 rows from a given
 * id on (the list's counterpart). The prototype the gateway path is measured
 * against, with nothing but what the path needs.
 * Its settings come as JSON in the first argument (bench/sideBySide.ts).
 */
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import { z } from "zod";

const settings = z.object({ natsUrl: z.string(), databaseUrl: z.string(), subject: z.string(), listSubject: z.string() }).parse(JSON.parse(process.argv[2] ?? "{}"));
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 10, idleTimeoutMillis: 0 });
await Promise.all(Array.from({ length: 10 }, () => pool.query("select 1")));
const nc = await connect({ servers: settings.natsUrl, name: "chain-service" });
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Answers `subject` with what `answer` makes of the request's JSON: a 400 for what is not JSON, the error with a 500 for a failed query. */
function serve<Request>(subject: string, answer: (request: Request) => Promise<unknown>): void {
  nc.subscribe(subject, {
    queue: "chain-service",
    callback: (err, m) => {
      if (err) return;
      let request: Request;
      try {
        request = JSON.parse(decoder.decode(m.data)) as Request;
      } catch {
        m.respond(encoder.encode('{"error":"bad request","status":400}'));
        return;
      }
      answer(request).then(
        (body) => m.respond(encoder.encode(JSON.stringify(body))),
        (e: Error) => m.respond(encoder.encode(JSON.stringify({ error: e.message, status: 500 }))),
      );
    },
  });
}
serve<{ id: number }>(settings.subject, ({ id }) =>
  pool.query("select id, name, qty, created_at from items where id = $1", [id]).then((r) => (r.rows.length ? r.rows[0] : { error: "not found", status: 404 })),
);
serve<{ from: number; limit: number }>(settings.listSubject, ({ from, limit }) =>
  pool.query("select id, name, qty, created_at, detail from items where id >= $1 order by id limit $2", [from, limit]).then((r) => ({ data: r.rows })),
);
await nc.flush();
console.log("ready");

// A stop is an exit, so that a CPU profile (--cpu-prof) is written.
process.once("SIGTERM", () => process.exit(0));
