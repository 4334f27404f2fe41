import { meetingResponseUpdated, meetingsBusy, type Caller, type GivenResponse, type PayloadOf } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, newCaller, recordAnswer, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;

beforeAll(async () => {
  h = await startMeetings();
});
afterAll(async () => h?.close());

const answer = (organizer: Caller, meetingId: string, email: string, response: GivenResponse, respondedAt: string) => recordAnswer(h.bus, organizer, meetingId, email, response, respondedAt);

const attendeesOf = async (caller: Caller, id: string) => ((await client(h.bus).get(caller, id)).body as { attendees: { email: string; response: string; respondedAt: string | null }[] }).attendees;
const responseOf = async (caller: Caller, id: string, email: string) => (await attendeesOf(caller, id)).find((a) => a.email === email)?.response;

/** The answer events written for these ids, oldest first, checked against the event's schema. */
async function answerEvents(...ids: string[]): Promise<PayloadOf<typeof meetingResponseUpdated>[]> {
  const rows = (await h.db("outbox").where("subject", "like", "%meeting.response_updated").orderBy("id").select("payload")) as { payload: unknown }[];
  return rows.map((r) => meetingResponseUpdated.payload.parse(r.payload)).filter((p) => ids.includes(p.meetingId));
}

/** A weekly series of four at 09:00 UTC from Monday 2 June 2031, with two participants. */
async function weekly(org: Caller, bea: Caller, cal: Caller) {
  const series = await created(h.bus, org, { startTime: "2031-06-02T09:00:00Z", duration: "1 hour", recurrence: "FREQ=WEEKLY;COUNT=4", participants: [bea.email, cal.email] });
  const week = (n: number) => `${series.id}_203106${String(2 + 7 * n).padStart(2, "0")}T090000Z`;
  return { series, week };
}

describe("answers to a series and to one occurrence", () => {
  it("a series answer is every occurrence's, an occurrence answer that occurrence's only, each with its event", async () => {
    const [org, bea, cal] = [newCaller(), newCaller(), newCaller()];
    const { series, week } = await weekly(org, bea, cal);
    expect(await answer(org, series.id, bea.email, "accepted", "2031-05-01T10:00:00Z")).toEqual({ outcome: "applied" });
    expect(await answer(org, week(1), bea.email, "declined", "2031-05-01T09:00:00Z")).toEqual({ outcome: "applied" });
    expect(await answer(org, week(2), cal.email, "tentative", "2031-05-01T11:00:00Z")).toEqual({ outcome: "applied" });

    expect(await attendeesOf(org, series.id)).toEqual([
      { email: bea.email, response: "accepted", respondedAt: "2031-05-01T10:00:00Z" },
      { email: cal.email, response: "needsAction", respondedAt: null },
    ]);
    // Week 1: Bea's own answer wins over her (later) series answer.
    expect(await attendeesOf(bea, week(1))).toEqual([
      { email: bea.email, response: "declined", respondedAt: "2031-05-01T09:00:00Z" },
      { email: cal.email, response: "needsAction", respondedAt: null },
    ]);
    expect(await attendeesOf(cal, week(2))).toEqual([
      { email: bea.email, response: "accepted", respondedAt: "2031-05-01T10:00:00Z" },
      { email: cal.email, response: "tentative", respondedAt: "2031-05-01T11:00:00Z" },
    ]);
    expect(await responseOf(org, week(3), cal.email)).toBe("needsAction");

    // A later series answer leaves the occurrence's own answer as it was.
    expect(await answer(org, series.id, bea.email, "tentative", "2031-05-02T10:00:00Z")).toEqual({ outcome: "applied" });
    expect(await responseOf(org, week(1), bea.email)).toBe("declined");
    expect(await responseOf(org, week(0), bea.email)).toBe("tentative");

    const events = await answerEvents(series.id, week(1), week(2));
    expect(events.map((e) => [e.meetingId, e.attendee.response, e.previousResponse])).toEqual([
      [series.id, "accepted", "needsAction"],
      [week(1), "declined", "accepted"],
      [week(2), "tentative", "needsAction"],
      [series.id, "tentative", "accepted"],
    ]);
    expect(events[1]!.meeting).toMatchObject({ id: week(1), seriesId: series.id, originalStartTime: "2031-06-09T09:00:00Z", recurrence: null });
    expect(events[0]!.meeting).toMatchObject({ id: series.id, seriesId: null, recurrence: "FREQ=WEEKLY;COUNT=4" });
  });

  it("judges occurrence answers like meeting answers: stale, unchanged, not a participant, cancelled, no such occurrence", async () => {
    const [org, bea, cal] = [newCaller(), newCaller(), newCaller()];
    const { series, week } = await weekly(org, bea, cal);
    expect((await answer(org, week(0), bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("applied");
    expect((await answer(org, week(0), bea.email, "declined", "2031-05-01T09:00:00Z")).outcome).toBe("stale");
    expect((await answer(org, week(0), bea.email, "accepted", "2031-05-01T11:00:00Z")).outcome).toBe("unchanged");
    expect((await answer(org, week(0), "z@example.com", "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("not_attendee");
    expect((await answer(newCaller(), week(0), bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("wrong_organizer");
    expect((await answer(org, `${series.id}_20310603T090000Z`, bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("unknown_meeting");
    expect((await answer(org, week(4), bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("unknown_meeting");
    expect((await answer(org, "mtg_nothing_20310602T090000Z", bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("unknown_meeting");
    expect((await client(h.bus).update(org, week(1), { status: "cancelled" })).status).toBe(200);
    expect((await answer(org, week(1), bea.email, "accepted", "2031-05-01T10:00:00Z")).outcome).toBe("cancelled");

    // The same answer as the series' is kept (it outlives a later series answer) but changes nothing seen: no event.
    await answer(org, series.id, cal.email, "accepted", "2031-05-01T10:00:00Z");
    expect((await answer(org, week(2), cal.email, "accepted", "2031-05-01T10:30:00Z")).outcome).toBe("unchanged");
    await answer(org, series.id, cal.email, "declined", "2031-05-01T11:00:00Z");
    expect(await responseOf(org, week(2), cal.email)).toBe("accepted");
    expect((await answerEvents(week(2))).length).toBe(0);
  });

  it("busy time follows the answers: a declined occurrence, a declined series but the occurrence accepted", async () => {
    const [org, bea, cal] = [newCaller(), newCaller(), newCaller()];
    const { series, week } = await weekly(org, bea, cal);
    await answer(org, series.id, bea.email, "declined", "2031-05-01T10:00:00Z");
    await answer(org, week(2), bea.email, "accepted", "2031-05-01T09:00:00Z");
    await answer(org, week(1), cal.email, "declined", "2031-05-01T10:00:00Z");
    // A changed occurrence (an exception) takes its own answers too.
    await client(h.bus).update(org, week(3), { title: "Moved title" });
    await answer(org, week(3), cal.email, "declined", "2031-05-01T10:00:00Z");
    const busy = async () => {
      const users = [org, bea, cal].map((c) => ({ userId: c.userId, email: c.email }));
      const reply = await h.bus.request(meetingsBusy, { mode: "test", users, from: "2031-06-01T00:00:00Z", to: "2031-07-01T00:00:00Z" });
      return reply.busy.map((b) => b.intervals.map(([s]) => new Date(s * 1_000).toISOString().slice(5, 10)));
    };
    expect(await busy()).toEqual([
      ["06-02", "06-09", "06-16", "06-23"],
      ["06-16"],
      ["06-02", "06-16"],
    ]);
  });

  it("a new time asks again: for one occurrence its participants, for the series every answer", async () => {
    const [org, bea, cal] = [newCaller(), newCaller(), newCaller()];
    const { series, week } = await weekly(org, bea, cal);
    await answer(org, series.id, bea.email, "accepted", "2031-05-01T10:00:00Z");
    await answer(org, week(2), cal.email, "accepted", "2031-05-01T10:00:00Z");
    const moved = await client(h.bus).update(org, week(1), { startTime: "2031-06-10T09:00:00Z" });
    expect(moved.body.attendees).toEqual([bea.email, cal.email].map((email) => ({ email, response: "needsAction", respondedAt: null })));
    expect(await responseOf(org, week(0), bea.email)).toBe("accepted");
    // Answering the moved occurrence is possible again at its new time.
    expect((await answer(org, week(1), bea.email, "tentative", "2031-05-01T09:00:00Z")).outcome).toBe("applied");

    expect((await client(h.bus).update(org, series.id, { title: "Renamed" })).status).toBe(200);
    expect(await responseOf(org, week(0), bea.email)).toBe("accepted");
    expect((await client(h.bus).update(org, series.id, { duration: "30 mins" })).status).toBe(200);
    expect(await attendeesOf(org, series.id)).toEqual([bea.email, cal.email].map((email) => ({ email, response: "needsAction", respondedAt: null })));
    expect(await responseOf(org, week(2), cal.email)).toBe("needsAction");
  });
});
