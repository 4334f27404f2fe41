/**
 * node --conditions=@sched/source --import tsx bench/busEvents.ts [rounds]
 *
 * CPU per event of the NATS bus's two event paths, as the processes wiring
 * pays them on every create: publishing `meeting.created` the outbox relay's
 * way (fifty at once, each stored only right after the one before), and
 * consuming it the way webhooks, invites and ai-ranking do (consumeBatches,
 * up to a hundred at a time, a handler reading every payload and taking a
 * turn of the event loop as a statement would). Each round has a stream of its
 * own; publishing and consuming are timed apart. Reads process CPU time, so a
 * busy machine makes it slower, not dearer; to compare two trees, run it in
 * each in turn. Needs the local NATS (NATS_URL).
 */
import { connectNatsBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { meetingCreated } from "@sched/proto";
import { deleteNamespaceStreams, NATS_URL, uniqueSuffix } from "@sched/testing";
import { createdEvent } from "./lib/meetingEvent.js";

const EVENTS = 3_000;
const PUBLISHED_AT_ONCE = 50;
const ROUNDS = Number(process.argv[2] ?? 10);
/** The first rounds run while V8 still compiles the paths: printed, left out of the medians. */
const WARM_UP_ROUNDS = 3;

const logger = createLogger({ name: "bus-events-bench", level: "warn" });

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function round(): Promise<{ publish: number; consume: number }> {
  const namespace = `bench_events_${uniqueSuffix()}`;
  const bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "bus-events-bench", logger });
  try {
    const payloads = Array.from({ length: EVENTS }, (_, n) => createdEvent(n));
    // The stream exists before the clock starts, as it does for a running relay.
    await bus.publish(meetingCreated, createdEvent(-1), { msgId: "warm" });
    let last = "warm";
    const publishStart = cpuMicros();
    for (let i = 0; i < EVENTS; i += PUBLISHED_AT_ONCE) {
      const group = payloads.slice(i, i + PUBLISHED_AT_ONCE);
      const ids = group.map((p) => p.eventId);
      await Promise.all(group.map((p, j) => bus.publish(meetingCreated, p, { msgId: ids[j]!, after: j === 0 ? last : ids[j - 1]! })));
      last = ids.at(-1)!;
    }
    const publish = (cpuMicros() - publishStart) / EVENTS;

    let seen = 0;
    let allSeen: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (allSeen = resolve));
    const consumeStart = cpuMicros();
    const consumer = await bus.consumeBatches({ durable: "bench", events: [meetingCreated], maxBatch: 100 }, async (messages) => {
      let organizers = 0;
      for (const m of messages) if (m.payload.organizer.userId) organizers++;
      // A consumer's batch statement: a turn of the event loop or more.
      await new Promise((resolve) => setImmediate(resolve));
      seen += organizers;
      if (seen >= EVENTS + 1) allSeen();
    });
    await done;
    const consume = (cpuMicros() - consumeStart) / (EVENTS + 1);
    await consumer.stop();
    return { publish, consume };
  } finally {
    await bus.close();
    await deleteNamespaceStreams(NATS_URL, namespace);
  }
}

const publishes: number[] = [];
const consumes: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const { publish, consume } = await round();
  if (r >= WARM_UP_ROUNDS) publishes.push(publish);
  if (r >= WARM_UP_ROUNDS) consumes.push(consume);
  console.log(`round ${r + 1}${r < WARM_UP_ROUNDS ? " (warm-up)" : ""}: publish ${publish.toFixed(1)} µs/event, consume ${consume.toFixed(1)} µs/event`);
}
console.log(`median of rounds ${WARM_UP_ROUNDS + 1}–${ROUNDS}: publish ${median(publishes).toFixed(1)} µs/event, consume ${median(consumes).toFixed(1)} µs/event`);
process.exit(0);
