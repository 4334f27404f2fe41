import { AppError } from "@sched/errors";
import { meetingsBusy, type Caller } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, inMode, newCaller, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;

beforeAll(async () => {
  h = await startMeetings();
});
afterAll(async () => h?.close());

const FROM = "2031-03-10T08:00:00Z";
const TO = "2031-03-10T18:00:00Z";
const who = (c: Caller) => ({ userId: c.userId, email: c.email });

describe("meetings.v1.busy", () => {
  it("returns the confirmed meetings each user organizes or attends that overlap [from, to), in start order", async () => {
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
      {
        userId: ann.userId,
        intervals: [
          { start: "2031-03-10T07:00:00Z", end: "2031-03-10T09:00:00Z" },
          { start: "2031-03-10T09:00:00Z", end: "2031-03-10T09:15:00Z" },
          { start: "2031-03-10T10:00:00Z", end: "2031-03-10T11:00:00Z" },
        ],
      },
      {
        userId: ben.userId,
        intervals: [
          { start: "2031-03-10T09:00:00Z", end: "2031-03-10T09:15:00Z" },
          { start: "2031-03-10T11:00:00Z", end: "2031-03-10T11:45:00Z" },
          { start: "2031-03-10T17:30:00Z", end: "2031-03-10T19:30:00Z" },
        ],
      },
      { userId: nobody.userId, intervals: [] },
    ]);

    const live = await h.bus.request(meetingsBusy, { mode: "live", users: [who(ann)], from: FROM, to: TO });
    expect(live.busy).toEqual([{ userId: ann.userId, intervals: [{ start: "2031-03-10T14:00:00Z", end: "2031-03-10T14:30:00Z" }] }]);
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

  it("refuses more than 100 users and a range that does not go forward", async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ userId: `usr_${i}`, email: `u${i}@example.com` }));
    await expect(h.bus.request(meetingsBusy, { mode: "test", users: many, from: FROM, to: TO })).rejects.toMatchObject({ code: "invalid_request", details: { param: "users" } });
    await expect(h.bus.request(meetingsBusy, { mode: "test", users: [], from: TO, to: FROM })).rejects.toBeInstanceOf(AppError);
  });
});
