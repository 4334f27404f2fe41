import { meetingsCreate, type Meeting } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, client, created, hoursFromNow, inMode, newCaller, startMeetings, type TestMeetings } from "./harness.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

let h: TestMeetings;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startMeetings();
  api = client(h.bus);
});
afterAll(async () => h?.close());

describe("POST /v1/meetings", () => {
  it("when the body is valid, then 201 with the full meeting, normalised", async () => {
    const alice = newCaller({ email: "Alice.Org@Example.com" });
    const start = hoursFromNow(24);
    const answer = await api.create(alice, {
      title: "  Quarterly planning ",
      duration: "1.5 hours",
      startTime: start,
      participants: ["Bob@Example.com", "carol@example.com", "BOB@example.com"],
    });
    expect(answer.status).toBe(201);
    const meeting = answer.body as Meeting;
    expect(meeting.id).toMatch(/^mtg_[0-9A-Za-z]{24}$/);
    expect(meeting).toMatchObject({
      title: "Quarterly planning",
      description: "",
      startTime: start,
      duration: "1.5 hours",
      participants: ["bob@example.com", "carol@example.com"],
      status: "confirmed",
      organizer: "alice.org@example.com",
    });
    expect(meeting.createdAt).toMatch(TIMESTAMP);
    expect(Math.abs(Date.parse(meeting.createdAt) - Date.now())).toBeLessThan(60_000);
    expect(Object.keys(meeting).sort()).toEqual(["attendees", "createdAt", "description", "duration", "id", "organizer", "originalStartTime", "participants", "recurrence", "seriesId", "startTime", "status", "title"]);
    expect(meeting.attendees).toEqual([
      { email: "bob@example.com", response: "needsAction", respondedAt: null },
      { email: "carol@example.com", response: "needsAction", respondedAt: null },
    ]);
  });

  it("when startTime has no offset, then it is read in the caller's time zone", async () => {
    const berliner = newCaller({ timezone: "Europe/Berlin" });
    expect((await created(h.bus, berliner, { startTime: "2031-07-01T09:30" })).startTime).toBe("2031-07-01T07:30:00Z");
    expect((await created(h.bus, berliner, { startTime: "2031-01-10T09:30:00" })).startTime).toBe("2031-01-10T08:30:00Z");
    const newYorker = newCaller({ timezone: "America/New_York" });
    expect((await created(h.bus, newYorker, { startTime: "2031-07-01T09:30:00" })).startTime).toBe("2031-07-01T13:30:00Z");
    expect((await created(h.bus, newYorker, { startTime: "2031-07-01T09:30:00+02:00" })).startTime).toBe("2031-07-01T07:30:00Z");
  });

  it("when startTime has a fraction of a second, then it is dropped", async () => {
    expect((await created(h.bus, newCaller(), { startTime: "2031-07-01T09:30:59.999Z" })).startTime).toBe("2031-07-01T09:30:59Z");
  });

  it("when a description and status draft are given, then they are kept", async () => {
    const m = await created(h.bus, newCaller(), { startTime: hoursFromNow(5), description: "Agenda: everything", status: "draft", sendInvites: false });
    expect(m).toMatchObject({ description: "Agenda: everything", status: "draft" });
  });

  it("when the meeting is in the past, then it is still created", async () => {
    expect((await created(h.bus, newCaller(), { startTime: "2001-01-01T10:00:00Z" })).startTime).toBe("2001-01-01T10:00:00Z");
  });

  it.each([
    ["2031-02-30T10:00:00Z", "a date that does not exist"],
    ["2031-13-01T10:00:00Z", "a month that does not exist"],
    ["2031-01-01T24:00:00Z", "hour 24"],
    ["2031-01-01T10:60:00Z", "minute 60"],
    ["2031-03-30T02:30:00", "a time skipped by daylight saving in Berlin"],
    ["tomorrow at 10", "not ISO 8601"],
  ])("when startTime is %s (%s), then 400 invalid_request naming startTime", async (startTime) => {
    const answer = await api.create(newCaller({ timezone: "Europe/Berlin" }), { title: "x", duration: "15 mins", startTime, participants: ["a@example.com"] });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param: "startTime" });
    expect(answer.body.error.message).toContain("startTime");
  });

  it.each([
    [{ title: "x", duration: "15 mins", startTime: "2031-01-01T10:00:00Z" }, "participants"],
    [{ title: "x", duration: "25 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com"] }, "duration"],
    [{ title: "x", duration: "15 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com", "nope"] }, "participants[1]"],
    [{ title: "x", duration: "15 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com"], extra: 1 }, "extra"],
    [{ title: "x", duration: "15 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com"], status: "cancelled" }, "status"],
    [{ title: "", duration: "15 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com"] }, "title"],
  ])("when the body is %j, then 400 invalid_request naming %s", async (body, param) => {
    const answer = await api.create(newCaller(), body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param });
    expect(answer.body.error.message).toContain(param);
  });

  it("when there is no caller, then 401", async () => {
    const answer = await api.create(undefined, { title: "x", duration: "15 mins", startTime: "2031-01-01T10:00:00Z", participants: ["a@example.com"] });
    expect(answer.status).toBe(401);
  });

  it("when there is no body, then 400", async () => {
    const answer = await call(h.bus, meetingsCreate, {}, newCaller());
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
  });
});

describe("GET /v1/meetings/:id", () => {
  it("the organizer and every participant see the full meeting; anyone else gets 404", async () => {
    const alice = newCaller();
    const bob = newCaller({ email: "Bob.Part@Example.com" });
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(3), participants: ["bob.part@example.com"], description: "d" });
    expect(await api.get(alice, meeting.id)).toMatchObject({ status: 200, body: meeting });
    expect(await api.get(bob, meeting.id)).toMatchObject({ status: 200, body: meeting });
    const stranger = await api.get(newCaller(), meeting.id);
    expect(stranger.status).toBe(404);
    expect(stranger.body.error.code).toBe("not_found");
  });

  it("test and live are separate worlds: the same user with a live key gets 404", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(3) });
    expect((await api.get(inMode(alice, "live"), meeting.id)).status).toBe(404);
  });

  it.each(["nope", "mtg_short", "ctc_aaaaaaaaaaaaaaaaaaaaaaaa", "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", "mtg_aaaaaaaaaaaaaaaaaaaaaaa!"])("an id %j that is not a meeting of the caller is 404", async (id) => {
    const answer = await api.get(newCaller(), id);
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe("not_found");
  });
});

describe("PATCH /v1/meetings/:id", () => {
  it("the organizer changes only the provided fields and gets 200 with the full meeting", async () => {
    const alice = newCaller({ timezone: "Asia/Tokyo" });
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48), description: "keep me", participants: ["a@example.com", "b@example.com"] });
    const answer = await api.update(alice, meeting.id, { title: "Renamed", startTime: "2032-05-01T10:00", participants: ["C@example.com", "a@example.com"] });
    expect(answer.status).toBe(200);
    const attendees = ["c@example.com", "a@example.com"].map((email) => ({ email, response: "needsAction", respondedAt: null }));
    expect(answer.body).toEqual({ ...meeting, title: "Renamed", startTime: "2032-05-01T01:00:00Z", participants: ["c@example.com", "a@example.com"], attendees });
    expect((await api.get(alice, meeting.id)).body).toEqual(answer.body);
  });

  it("an empty patch changes nothing and answers the meeting", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48) });
    expect(await api.update(alice, meeting.id, {})).toMatchObject({ status: 200, body: meeting });
  });

  it("a participant gets 403 forbidden; anyone else 404", async () => {
    const alice = newCaller();
    const bob = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48), participants: [bob.email] });
    const asBob = await api.update(bob, meeting.id, { title: "Mine now" });
    expect(asBob.status).toBe(403);
    expect(asBob.body.error.code).toBe("forbidden");
    expect((await api.update(newCaller(), meeting.id, { title: "x" })).status).toBe(404);
    expect((await api.update(inMode(alice, "live"), meeting.id, { title: "x" })).status).toBe(404);
    expect((await api.get(alice, meeting.id)).body.title).toBe("Sync");
  });

  it("a participant removed from a meeting no longer sees it", async () => {
    const alice = newCaller();
    const bob = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48), participants: [bob.email, "other@example.com"] });
    expect((await api.list(bob)).body.data.map((m: Meeting) => m.id)).toContain(meeting.id);
    await api.update(alice, meeting.id, { participants: ["other@example.com"] });
    expect((await api.get(bob, meeting.id)).status).toBe(404);
    expect((await api.update(bob, meeting.id, { title: "x" })).status).toBe(404);
    expect((await api.list(bob, { filter: "all" })).body.data).toEqual([]);
  });

  it("a meeting that has ended cannot be updated: 400 meeting_ended", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(-1), duration: "30 mins" });
    const answer = await api.update(alice, meeting.id, { title: "Too late" });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("meeting_ended");
  });

  it("a meeting in progress can still be updated", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(-0.5), duration: "1 hour" });
    expect((await api.update(alice, meeting.id, { title: "Still on" })).status).toBe(200);
  });

  it("a cancelled meeting cannot be updated: 400 meeting_cancelled", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48) });
    expect((await api.update(alice, meeting.id, { status: "cancelled" })).body.status).toBe("cancelled");
    for (const body of [{ title: "x" }, { status: "confirmed" }, { status: "cancelled" }, {}]) {
      const answer = await api.update(alice, meeting.id, body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("meeting_cancelled");
    }
  });

  it("status moves: draft → confirmed → cancelled, draft → cancelled; confirmed → draft is 400 naming status", async () => {
    const alice = newCaller();
    const a = await created(h.bus, alice, { startTime: hoursFromNow(48), status: "draft" });
    expect((await api.update(alice, a.id, { status: "confirmed" })).body.status).toBe("confirmed");
    const back = await api.update(alice, a.id, { status: "draft" });
    expect(back.status).toBe(400);
    expect(back.body.error).toMatchObject({ code: "invalid_request", param: "status" });
    expect((await api.update(alice, a.id, { status: "confirmed" })).status).toBe(200);
    expect((await api.update(alice, a.id, { status: "cancelled" })).body.status).toBe("cancelled");
    const b = await created(h.bus, alice, { startTime: hoursFromNow(48), status: "draft" });
    expect((await api.update(alice, b.id, { status: "cancelled" })).body.status).toBe("cancelled");
  });

  it("checks run in order: validation before the meeting, 404 before 403, 403 before meeting_ended", async () => {
    const alice = newCaller();
    const bob = newCaller();
    const ended = await created(h.bus, alice, { startTime: hoursFromNow(-5), participants: [bob.email] });
    expect((await api.update(newCaller(), "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", { duration: "3 hours" })).body.error).toMatchObject({ code: "invalid_request", param: "duration" });
    expect((await api.update(newCaller(), ended.id, { startTime: "2031-02-30T10:00:00Z" })).body.error.param).toBe("startTime");
    expect((await api.update(newCaller(), ended.id, { title: "x" })).status).toBe(404);
    expect((await api.update(bob, ended.id, { title: "x" })).status).toBe(403);
    expect((await api.update(alice, ended.id, { title: "x" })).body.error.code).toBe("meeting_ended");
  });

  it("a naive startTime in an update is read in the caller's zone, and impossible dates are refused", async () => {
    const alice = newCaller({ timezone: "America/Los_Angeles" });
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48) });
    expect((await api.update(alice, meeting.id, { startTime: "2032-01-15T08:00:00" })).body.startTime).toBe("2032-01-15T16:00:00Z");
    const bad = await api.update(alice, meeting.id, { startTime: "2032-02-30T08:00:00" });
    expect(bad.body.error).toMatchObject({ code: "invalid_request", param: "startTime" });
  });

  it("an unknown field is 400 naming it", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(48) });
    const answer = await api.update(alice, meeting.id, { organizer: "me@example.com" });
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param: "organizer" });
  });
});
