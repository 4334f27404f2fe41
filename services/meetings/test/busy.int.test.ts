import { AppError } from "@sched/errors";
import { DURATIONS, meetingsBusy, type Caller, type Duration } from "@sched/proto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@sched/ids";
import { client, created, inMode, newCaller, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;

beforeAll(async () => {
  h = await startMeetings();
});
afterAll(async () => h?.close());

const FROM = "2031-03-10T08:00:00Z";
const TO = "2031-03-10T18:00:00Z";
const who = (c: Caller) => ({ userId: c.userId, email: c.email });
/** An instant of 2031-03-10 in epoch seconds, as busy intervals carry it. */
const at = (time: string) => Date.parse(`2031-03-10T${time.length === 5 ? `${time}:00` : time}Z`) / 1_000;
const span = (start: string, end: string) => [at(start), at(end)];

describe("meetings.v1.busy", () => {
  it("returns the confirmed meetings each user organizes or attends that overlap [from, to), merged, in start order", async () => {
    const ann = newCaller();
    const ben = newCaller({ email: "Ben.Busy@Example.com" });
    const nobody = newCaller();
    const other = newCaller();
    // Ann organizes: one inside, one overlapping the start, one ending exactly at from, one starting exactly at to.
    await created(h.bus, ann, { startTime: "2031-03-10T10:00:00Z", duration: "1 hour" });
    await created(h.bus, ann, { startTime: "2031-03-10T07:00:00Z", duration: "2 hours" });
    await created(h.bus, ann, { startTime: "2031-03-10T07:30:00Z", duration: "30 mins" });
    await created(h.bus, ann, { startTime: TO, duration: "15 mins" });
    // Drafts and cancelled meetings are not busy.
    await created(h.bus, ann, { startTime: "2031-03-10T12:00:00Z", status: "draft" });
    const cancelled = await created(h.bus, ann, { startTime: "2031-03-10T13:00:00Z" });
    await client(h.bus).update(ann, cancelled.id, { status: "cancelled" });
    // Ben attends one of someone else's meetings and one of Ann's, and organizes one he also attends.
    await created(h.bus, other, { startTime: "2031-03-10T17:30:00Z", duration: "2 hours", participants: ["ben.busy@example.com"] });
    await created(h.bus, ann, { startTime: "2031-03-10T09:00:00Z", duration: "15 mins", participants: ["BEN.BUSY@example.com"] });
    await created(h.bus, ben, { startTime: "2031-03-10T11:00:00Z", duration: "45 mins", participants: ["ben.busy@example.com"] });
    // Another mode is another world.
    await created(h.bus, inMode(ann, "live"), { startTime: "2031-03-10T14:00:00Z" });

    const reply = await h.bus.request(meetingsBusy, { mode: "test", users: [who(ann), who(ben), who(nobody)], from: FROM, to: TO });
    expect(reply.busy).toEqual([
      // 07:00–09:00 holds 07:30–08:00 and touches 09:00–09:15: one interval.
      { userId: ann.userId, intervals: [span("07:00", "09:15"), span("10:00", "11:00")] },
      // The meeting Ben organizes and attends counts once.
      { userId: ben.userId, intervals: [span("09:00", "09:15"), span("11:00", "11:45"), span("17:30", "19:30")] },
      { userId: nobody.userId, intervals: [] },
    ]);

    const live = await h.bus.request(meetingsBusy, { mode: "live", users: [who(ann)], from: FROM, to: TO });
    expect(live.busy).toEqual([{ userId: ann.userId, intervals: [span("14:00", "14:30")] }]);
  });

  it("merges overlapping and touching meetings across organized and attended ones, and keeps a gap of one second apart", async () => {
    const eve = newCaller();
    const other = newCaller();
    await created(h.bus, eve, { startTime: "2031-03-10T09:00:00Z", duration: "1 hour" });
    await created(h.bus, other, { startTime: "2031-03-10T09:30:00Z", duration: "1 hour", participants: [eve.email] });
    await created(h.bus, other, { startTime: "2031-03-10T10:30:00Z", duration: "15 mins", participants: [eve.email] });
    await created(h.bus, eve, { startTime: "2031-03-10T10:45:01Z", duration: "15 mins" });
    await created(h.bus, eve, { startTime: "2031-03-10T12:00:00Z", duration: "2 hours" });
    await created(h.bus, other, { startTime: "2031-03-10T12:15:00Z", duration: "30 mins", participants: [eve.email] });
    // Two starting at once: the longer one decides the end, whichever comes first.
    await created(h.bus, eve, { startTime: "2031-03-10T15:00:00Z", duration: "30 mins" });
    await created(h.bus, other, { startTime: "2031-03-10T15:00:00Z", duration: "1 hour", participants: [eve.email] });
    await created(h.bus, eve, { startTime: "2031-03-10T15:00:00Z", duration: "15 mins" });
    const reply = await h.bus.request(meetingsBusy, { mode: "test", users: [who(eve)], from: FROM, to: TO });
    expect(reply.busy).toEqual([
      { userId: eve.userId, intervals: [span("09:00", "10:45"), [at("10:45:01"), at("11:00:01")], span("12:00", "14:00"), span("15:00", "16:00")] },
    ]);
  });

  it("for any calendar, answers what merging the user's confirmed meetings that overlap the range gives (property)", async () => {
    const minutes: Record<Duration, number> = { "15 mins": 15, "30 mins": 30, "45 mins": 45, "1 hour": 60, "1.5 hours": 90, "2 hours": 120 };
    const meeting = fc.record({
      // Quarter hours from 05:00 to 19:00 on 2031-03-10, around the range's edges; some a second off the grid.
      quarter: fc.integer({ min: 20, max: 76 }),
      offsetSeconds: fc.constantFrom(0, 0, 0, 1, 59),
      duration: fc.constantFrom(...DURATIONS),
      status: fc.constantFrom("confirmed", "confirmed", "confirmed", "draft", "cancelled"),
      attended: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(meeting, { maxLength: 25 }), async (calendar) => {
        const user = newCaller();
        const base = Date.parse("2031-03-10T00:00:00Z");
        const rows = calendar.map((m) => {
          const start = base + m.quarter * 15 * 60_000 + m.offsetSeconds * 1_000;
          return { ...m, id: newId("mtg"), start, end: start + minutes[m.duration] * 60_000 };
        });
        for (const r of rows) {
          const [organizerId, organizerEmail, participant] = r.attended ? ["usr_someoneelse", "else@example.com", user.email] : [user.userId, user.email, "guest@example.com"];
          const times = { start_time: new Date(r.start).toISOString(), end_time: new Date(r.end).toISOString() };
          await h.db("meetings").insert({
            id: r.id, mode: "test", organizer_id: organizerId, organizer_email: organizerEmail, title: "P", description: "", ...times,
            duration: r.duration, participants: [participant], status: r.status, sequence: 1, created_at: times.start_time, updated_at: times.start_time,
          });
          await h.db("meeting_participants").insert({ meeting_id: r.id, email: participant, mode: "test", status: r.status, ...times });
        }
        const [from, to] = [Date.parse(FROM), Date.parse(TO)];
        const expected: number[][] = [];
        for (const r of rows.filter((m) => m.status === "confirmed" && m.end > from && m.start < to).sort((a, b) => a.start - b.start)) {
          const last = expected[expected.length - 1];
          if (last && r.start / 1_000 <= last[1]!) last[1] = Math.max(last[1]!, r.end / 1_000);
          else expected.push([r.start / 1_000, r.end / 1_000]);
        }
        const reply = await h.bus.request(meetingsBusy, { mode: "test", users: [who(user)], from: FROM, to: TO });
        expect(reply.busy).toEqual([{ userId: user.userId, intervals: expected }]);
      }),
      { numRuns: 60 },
    );
  });

  it("a meeting moved away or a participant removed is no longer busy", async () => {
    const cy = newCaller();
    const dee = newCaller();
    const m = await created(h.bus, cy, { startTime: "2031-03-11T10:00:00Z", participants: [dee.email] });
    const range = { mode: "test" as const, users: [who(cy), who(dee)], from: "2031-03-11T00:00:00Z", to: "2031-03-12T00:00:00Z" };
    expect((await h.bus.request(meetingsBusy, range)).busy.map((b) => b.intervals.length)).toEqual([1, 1]);
    await client(h.bus).update(cy, m.id, { participants: ["someone@example.com"] });
    expect((await h.bus.request(meetingsBusy, range)).busy.map((b) => b.intervals.length)).toEqual([1, 0]);
    await client(h.bus).update(cy, m.id, { startTime: "2031-03-13T10:00:00Z" });
    expect((await h.bus.request(meetingsBusy, range)).busy.map((b) => b.intervals.length)).toEqual([0, 0]);
  });

  it("an empty user list answers an empty list", async () => {
    expect(await h.bus.request(meetingsBusy, { mode: "test", users: [], from: FROM, to: TO })).toEqual({ busy: [] });
  });

  it("answers for 101 users at once, and refuses 102 and a range that does not go forward", async () => {
    const users = (n: number) => Array.from({ length: n }, (_, i) => ({ userId: `usr_${i}`, email: `u${i}@example.com` }));
    const reply = await h.bus.request(meetingsBusy, { mode: "test", users: users(101), from: FROM, to: TO });
    expect(reply.busy).toHaveLength(101);
    await expect(h.bus.request(meetingsBusy, { mode: "test", users: users(102), from: FROM, to: TO })).rejects.toMatchObject({ code: "invalid_request", details: { param: "users" } });
    await expect(h.bus.request(meetingsBusy, { mode: "test", users: [], from: TO, to: FROM })).rejects.toBeInstanceOf(AppError);
  });
});
