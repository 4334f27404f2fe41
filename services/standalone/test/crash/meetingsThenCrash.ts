/**
 * A standalone system on DATA_DIR (argv[2]) that takes meetings while the
 * invites service is stopped, waits until the meetings outbox has handed every
 * event to the bus, prints the meetings as one JSON line, then waits to be
 * killed: the crash comes after the outbox relay's publish and before any
 * invites consumer ran.
 */
import { createLogger } from "@sched/logging";
import { System } from "../../src/system.js";
import { ADMIN_TOKEN, call, createUserWithKey } from "../harness.js";

const dataDir = process.argv[2]!;
const MEETINGS = 5;

const system = await new System({ wiring: { kind: "standalone", dataDir }, logger: createLogger({ name: "crash", level: "silent" }), port: 0, adminToken: ADMIN_TOKEN }).start();
await system.stopService("invites");
const organizer = await createUserWithKey(system.url, { mode: "test" });
const meetings: Array<{ id: string; participant: string }> = [];
for (let i = 0; i < MEETINGS; i++) {
  const participant = `guest-${i}@example.com`;
  const res = await call(system.url, "POST", "/v1/meetings", {
    key: organizer.key,
    body: { title: `Review ${i}`, duration: "30 mins", startTime: `2032-03-0${i + 1}T10:00:00Z`, participants: [participant] },
  });
  if (res.status !== 201) throw new Error(`meeting not created: ${res.status} ${JSON.stringify(res.body)}`);
  meetings.push({ id: res.body.id as string, participant });
}
const outbox = system.database("meetings");
while ((await outbox("outbox").whereNull("published_at").first("id")) !== undefined) await new Promise((r) => setTimeout(r, 50));
process.stdout.write(`${JSON.stringify({ key: organizer.key, meetings })}\n`);
// Kept alive until killed.
setInterval(() => {}, 60_000);
