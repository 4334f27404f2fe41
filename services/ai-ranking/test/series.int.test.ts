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

it("an occurrence moved on its own stays at its own time when the series changes afterwards", async () => {
  const seriesId = newId("mtg");
  const start = MONDAY - 8 * 7 * DAY + 2 * DAY + 9 * HOUR;
  const movedOriginal = start + 7 * DAY;
  const movedTo = movedOriginal + DAY + 5 * HOUR;
  const occurrenceId = `${seriesId}_${iso(movedOriginal).replace(/[-:]/g, "").replace(/\.\d+/, "")}`;
  const base = {
    eventId: newId("req"),
    mode: "test" as const,
    organizer: { userId: ana.userId, email: ana.email },
    sendInvites: false,
    occurredAt: iso(start - 3 * DAY),
  };
  const meeting = {
    id: seriesId, title: "Weekly", description: "", startTime: iso(start), duration: "1 hour" as const, participants: [bo.email], status: "confirmed" as const,
    organizer: ana.email, createdAt: iso(start - 3 * DAY), attendees: [], recurrence: "FREQ=WEEKLY;COUNT=3", seriesId: null, originalStartTime: null,
  };
  const series = { rule: "FREQ=WEEKLY;COUNT=3", timeZone: "UTC", cancelledStarts: [] };
  const moved = { originalStartTime: iso(movedOriginal), title: "Weekly", description: "", startTime: iso(movedTo), duration: "1 hour" as const, participants: [bo.email], sequence: 2 };
  await h.bus.publish(meetingCreated, { ...base, meetingId: seriesId, meeting, series, sequence: 1 }, { msgId: newId("req") });
  await h.bus.publish(
    meetingUpdated,
    {
      ...base, meetingId: occurrenceId, sequence: 2, series: { ...series, changedOccurrences: [moved] }, changedFields: ["startTime"], previousStatus: "confirmed", previousParticipants: [bo.email],
      meeting: { ...meeting, id: occurrenceId, startTime: iso(movedTo), recurrence: null, seriesId, originalStartTime: iso(movedOriginal) },
    },
    { msgId: newId("req") },
  );
  const startOf = async () => ((await h.db("meetings").where({ meeting_id: occurrenceId }).first("start_at", "sequence")) as { start_at: Date; sequence: number } | undefined);
  await eventually(async () => ((await startOf())?.sequence === 2 ? true : undefined), 10_000);
  // The series renamed: its event carries the moved occurrence.
  await h.bus.publish(
    meetingUpdated,
    { ...base, meetingId: seriesId, sequence: 3, meeting: { ...meeting, title: "Renamed" }, series: { ...series, changedOccurrences: [moved] }, changedFields: ["title"], previousStatus: "confirmed", previousParticipants: [bo.email] },
    { msgId: newId("req") },
  );
  await eventually(async () => ((await startOf())?.sequence === 3 ? true : undefined), 10_000);
  expect((await startOf())!.start_at.getTime()).toBe(movedTo);
});
