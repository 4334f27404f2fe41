import { meetingsBusy, meetingsRecordResponse, type Caller, type GivenResponse } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, newCaller, recordAnswer, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;

beforeAll(async () => {
  h = await startMeetings();
});
afterAll(async () => h?.close());

const answer = (organizer: Caller, meetingId: string, email: string, response: GivenResponse, respondedAt: string) => recordAnswer(h.bus, organizer, meetingId, email, response, respondedAt);

const attendeesOf = async (caller: Caller, id: string) => ((await client(h.bus).get(caller, id)).body as { attendees: unknown[] }).attendees;

describe("meetings.v1.responses.record", () => {
  it("keeps the answer, shows it in the meeting, and writes one meeting.response_updated event with it", async () => {
    const org = newCaller();
    const meeting = await created(h.bus, org, { startTime: "2031-04-01T09:00:00Z", participants: ["a@example.com", "b@example.com"] });
    expect(await answer(org, meeting.id, "A@Example.com", "tentative", "2031-03-01T10:00:00Z")).toEqual({ outcome: "applied" });
    expect(await answer(org, meeting.id, "a@example.com", "tentative", "2031-03-01T10:05:00Z")).toEqual({ outcome: "unchanged" });
    expect(await answer(org, meeting.id, "a@example.com", "declined", "2031-03-01T09:00:00Z")).toEqual({ outcome: "stale" });
    expect(await attendeesOf(org, meeting.id)).toEqual([
      { email: "a@example.com", response: "tentative", respondedAt: "2031-03-01T10:00:00Z" },
      { email: "b@example.com", response: "needsAction", respondedAt: null },
    ]);
    const rows = (await h.db("outbox").where("subject", "like", "%meeting.response_updated").select("payload")) as { payload: { meetingId: string; attendee: unknown; meeting: { sequence?: number; attendees: unknown[] } } }[];
    const ours = rows.map((r) => r.payload).filter((p) => p.meetingId === meeting.id);
    expect(ours).toHaveLength(1);
    expect(ours[0]!.attendee).toEqual({ email: "a@example.com", response: "tentative", respondedAt: "2031-03-01T10:00:00Z" });
    // An answer is no change of the meeting: nobody is sent anything.
    expect((await client(h.bus).get(org, meeting.id)).body).toMatchObject({ title: meeting.title, startTime: meeting.startTime });
  });

  it("refuses answers for another mode, a non-participant, another organizer, a cancelled meeting, or an id of nothing", async () => {
    const org = newCaller();
    const meeting = await created(h.bus, org, { startTime: "2031-04-02T09:00:00Z", participants: ["a@example.com"] });
    const live = await h.bus.request(meetingsRecordResponse, { mode: "live", meetingId: meeting.id, organizerEmail: org.email, email: "a@example.com", response: "accepted", respondedAt: "2031-03-01T10:00:00Z", source: "email" });
    expect(live.outcome).toBe("unknown_meeting");
    expect((await answer(org, meeting.id, "z@example.com", "accepted", "2031-03-01T10:00:00Z")).outcome).toBe("not_attendee");
    expect((await answer(newCaller(), meeting.id, "a@example.com", "accepted", "2031-03-01T10:00:00Z")).outcome).toBe("wrong_organizer");
    expect((await answer(org, "mtg_nothing", "a@example.com", "accepted", "2031-03-01T10:00:00Z")).outcome).toBe("unknown_meeting");
    await client(h.bus).update(org, meeting.id, { status: "cancelled" });
    expect((await answer(org, meeting.id, "a@example.com", "accepted", "2031-03-01T10:00:00Z")).outcome).toBe("cancelled");
    expect((await attendeesOf(org, meeting.id))[0]).toEqual({ email: "a@example.com", response: "needsAction", respondedAt: null });
  });

  it("a declined meeting is not the decliner's busy time, and a new time asks everyone again", async () => {
    const org = newCaller();
    const bea = newCaller();
    const cal = newCaller();
    const meeting = await created(h.bus, org, { startTime: "2031-04-03T09:00:00Z", duration: "1 hour", participants: [bea.email, cal.email] });
    await answer(org, meeting.id, bea.email, "declined", "2031-03-01T10:00:00Z");
    await answer(org, meeting.id, cal.email, "accepted", "2031-03-01T10:00:00Z");
    const busy = async () =>
      (await h.bus.request(meetingsBusy, { mode: "test", users: [org, bea, cal].map((c) => ({ userId: c.userId, email: c.email })), from: "2031-04-03T00:00:00Z", to: "2031-04-04T00:00:00Z" })).busy.map((b) => b.intervals.length);
    expect(await busy()).toEqual([1, 0, 1]);

    // Another title keeps the answers; removing a participant drops theirs.
    await client(h.bus).update(org, meeting.id, { title: "Renamed", participants: [bea.email] });
    expect(await attendeesOf(org, meeting.id)).toEqual([{ email: bea.email, response: "declined", respondedAt: "2031-03-01T10:00:00Z" }]);
    await client(h.bus).update(org, meeting.id, { participants: [bea.email, cal.email] });
    expect((await attendeesOf(org, meeting.id))[1]).toEqual({ email: cal.email, response: "needsAction", respondedAt: null });

    // A new time: every answer is asked again, and the decliner is busy again until they answer.
    await client(h.bus).update(org, meeting.id, { startTime: "2031-04-03T10:00:00Z" });
    expect(await attendeesOf(org, meeting.id)).toEqual([bea.email, cal.email].map((email) => ({ email, response: "needsAction", respondedAt: null })));
    expect(await busy()).toEqual([1, 1, 1]);
  });
});
