import { newId } from "@sched/ids";
import { meetingCreated, meetingUpdated } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AiRankingHarness, makePerson } from "./harness.js";
import { DAY, HOUR, iso, MONDAY, NOW } from "./people.js";

let h: AiRankingHarness;
const ana = makePerson("Ana");
const bo = makePerson("Bo");

beforeAll(async () => {
  h = await AiRankingHarness.start({ now: () => NOW });
  await h.account(ana);
  await h.account(bo);
});
afterAll(async () => h?.stop());

const learned = async () => (await h.db("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings as number | undefined;

it("a weekly series counts as each of its occurrences, and a shorter rule stops counting those it dropped", async () => {
  const seriesId = newId("mtg");
  const start = MONDAY - 10 * 7 * DAY + DAY + 10 * HOUR;
  const event = (rule: string, sequence: number) => ({
    eventId: newId("req"),
    meetingId: seriesId,
    mode: "test" as const,
    organizer: { userId: ana.userId, email: ana.email },
    meeting: {
      id: seriesId, title: "Weekly", description: "", startTime: iso(start), duration: "1 hour" as const, participants: [bo.email], status: "confirmed" as const,
      organizer: ana.email, createdAt: iso(start - 3 * DAY), attendees: [], recurrence: rule, seriesId: null, originalStartTime: null,
    },
    series: { rule, timeZone: "UTC", cancelledStarts: [iso(start + 7 * DAY)] },
    sequence,
    sendInvites: false,
    occurredAt: iso(start - 3 * DAY),
  });
  await h.bus.publish(meetingCreated, event("FREQ=WEEKLY;COUNT=10", 1), { msgId: newId("req") });
  // Ten Tuesdays, one of them cancelled.
  await eventually(async () => (await learned()) === 9, 10_000);
  await h.bus.publish(meetingUpdated, { ...event("FREQ=WEEKLY;COUNT=4", 2), changedFields: ["recurrence"], previousStatus: "confirmed", previousParticipants: [bo.email] }, { msgId: newId("req") });
  await eventually(async () => (await learned()) === 3, 10_000);
  expect(await h.db("meetings").where({ series_id: seriesId, confirmed: true }).count({ n: "*" }).first()).toEqual({ n: 3 });
});
