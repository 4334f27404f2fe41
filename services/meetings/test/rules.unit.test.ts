import fc from "fast-check";
import { thrown } from "@sched/testing";
import { MEETING_FILTERS, MEETING_STATUSES, meetingCreated, type MeetingFilter, type MeetingStatus } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { applyPatch, changedFields, invitesOnCreate, invitesOnUpdate, isInviteWorthy, type MeetingState } from "../src/domain/changes.js";
import { changeEvent, createdEventText, deletedEvent, eventMsgId } from "../src/domain/events.js";
import { compareForList, matchesPlan, planList, withWindow } from "../src/domain/filters.js";
import { cancelsOnDelete, checkStatusMove, checkUpdatable, isAllowedMove } from "../src/domain/lifecycle.js";
import { accessOf, toMeeting, type MeetingRecord } from "../src/domain/meeting.js";
import { endTimeOf, hasEnded } from "../src/domain/timing.js";


const NOW = new Date("2026-05-04T12:00:00Z");
const at = (iso: string) => new Date(iso);

function record(overrides: Partial<MeetingRecord> = {}): MeetingRecord {
  return {
    id: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa",
    mode: "test",
    organizerId: "usr_org",
    organizerEmail: "org@example.com",
    title: "Planning",
    description: "",
    startTime: at("2026-05-05T09:00:00Z"),
    duration: "30 mins",
    participants: ["a@example.com", "b@example.com"],
    status: "confirmed",
    sequence: 1,
    createdAt: at("2026-05-01T08:00:00Z"),
    responses: {},
    ...overrides,
  };
}

describe("status lifecycle", () => {
  it("allows draft → confirmed, draft → cancelled, confirmed → cancelled", () => {
    expect(isAllowedMove("draft", "confirmed")).toBe(true);
    expect(isAllowedMove("draft", "cancelled")).toBe(true);
    expect(isAllowedMove("confirmed", "cancelled")).toBe(true);
  });

  it("treats keeping the same status as no move", () => {
    for (const s of MEETING_STATUSES) expect(isAllowedMove(s, s)).toBe(true);
  });

  it("refuses every other move with 400 invalid_request naming status", () => {
    const refused: [MeetingStatus, MeetingStatus][] = [
      ["confirmed", "draft"],
      ["cancelled", "draft"],
      ["cancelled", "confirmed"],
    ];
    for (const [from, to] of refused) {
      expect(isAllowedMove(from, to)).toBe(false);
      const err = thrown(() => checkStatusMove(from, to));
      expect(err).toMatchObject({ code: "invalid_request", details: { param: "status" } });
      expect(err.message).toContain("status");
    }
  });

  it("refuses updates to a cancelled meeting before looking at its time", () => {
    expect(thrown(() => checkUpdatable({ status: "cancelled", startTime: at("2020-01-01T00:00:00Z"), duration: "15 mins" }, NOW)).code).toBe("meeting_cancelled");
  });

  it("refuses updates to a meeting whose end is not after now", () => {
    expect(thrown(() => checkUpdatable({ status: "confirmed", startTime: at("2026-05-04T11:30:00Z"), duration: "30 mins" }, NOW)).code).toBe("meeting_ended");
    expect(thrown(() => checkUpdatable({ status: "draft", startTime: at("2026-05-01T11:30:00Z"), duration: "30 mins" }, NOW)).code).toBe("meeting_ended");
  });

  it("lets a meeting in progress or in the future change", () => {
    expect(() => checkUpdatable({ status: "confirmed", startTime: at("2026-05-04T11:31:00Z"), duration: "30 mins" }, NOW)).not.toThrow();
    expect(() => checkUpdatable({ status: "draft", startTime: at("2027-01-01T00:00:00Z"), duration: "2 hours" }, NOW)).not.toThrow();
  });
});

describe("removing a meeting", () => {
  it("owes a cancellation only for a confirmed meeting that has not ended, unless told not to send", () => {
    const ahead = { startTime: at("2026-05-04T11:45:00Z"), duration: "30 mins" } as const;
    expect(cancelsOnDelete({ ...ahead, status: "confirmed" }, true, NOW)).toBe(true);
    expect(cancelsOnDelete({ ...ahead, status: "confirmed" }, false, NOW)).toBe(false);
    expect(cancelsOnDelete({ ...ahead, status: "draft" }, true, NOW)).toBe(false);
    expect(cancelsOnDelete({ ...ahead, status: "cancelled" }, true, NOW)).toBe(false);
    expect(cancelsOnDelete({ status: "confirmed", startTime: at("2026-05-04T11:30:00Z"), duration: "30 mins" }, true, NOW)).toBe(false);
  });

  it("announces the last state marked cancelled, one sequence on, with what it was before", () => {
    const event = deletedEvent(record({ sequence: 4 }), true, "evt_x", NOW);
    expect(event).toMatchObject({ meetingId: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", sequence: 5, sendInvites: true, previousStatus: "confirmed", previousParticipants: ["a@example.com", "b@example.com"] });
    expect(event.meeting).toMatchObject({ status: "cancelled", participants: ["a@example.com", "b@example.com"], title: "Planning" });
    expect(eventMsgId(event.meetingId, event.sequence)).toBe("meetings.mtg_aaaaaaaaaaaaaaaaaaaaaaaa.5");
  });
});

describe("list filters", () => {
  const meetings: MeetingRecord[] = [];
  const statuses: MeetingStatus[] = ["draft", "confirmed", "cancelled"];
  // Every status at starts from 3 hours before now to 3 hours after, every 5 minutes, every duration.
  for (let minutes = -180; minutes <= 180; minutes += 5) {
    for (const status of statuses) {
      for (const duration of ["15 mins", "2 hours"] as const) {
        meetings.push(record({ id: `mtg_${status}${duration}${minutes}`, status, duration, startTime: new Date(NOW.getTime() + minutes * 60_000) }));
      }
    }
  }
  const select = (filter: MeetingFilter) => meetings.filter((m) => matchesPlan(planList(filter, NOW), m));

  it("upcoming = confirmed and not ended, ascending", () => {
    const plan = planList("upcoming", NOW);
    expect(plan.direction).toBe("asc");
    expect(select("upcoming")).toEqual(meetings.filter((m) => m.status === "confirmed" && !hasEnded(m, NOW)));
  });

  it("past = confirmed and ended, descending", () => {
    expect(planList("past", NOW).direction).toBe("desc");
    expect(select("past")).toEqual(meetings.filter((m) => m.status === "confirmed" && hasEnded(m, NOW)));
  });

  it("draft = drafts, ascending", () => {
    expect(planList("draft", NOW).direction).toBe("asc");
    expect(select("draft")).toEqual(meetings.filter((m) => m.status === "draft"));
  });

  it("all = every meeting including cancelled, descending", () => {
    expect(planList("all", NOW).direction).toBe("desc");
    expect(select("all")).toEqual(meetings);
  });

  it("never lets the index bounds on start time drop a meeting the end-time rule selects", () => {
    for (const filter of MEETING_FILTERS) {
      const plan = planList(filter, NOW);
      const exact = { ...plan, startAfter: undefined, startAtOrBefore: undefined };
      expect(meetings.filter((m) => matchesPlan(plan, m))).toEqual(meetings.filter((m) => matchesPlan(exact, m)));
    }
  });

  it("limits every filter to the meetings overlapping a window, and its index bounds drop none of them", () => {
    const instant = fc.integer({ min: -200, max: 200 }).map((m) => new Date(NOW.getTime() + m * 60_000));
    fc.assert(
      fc.property(fc.constantFrom(...MEETING_FILTERS), fc.option(instant, { nil: undefined }), fc.option(instant, { nil: undefined }), (filter, from, to) => {
        const plan = planList(filter, NOW);
        const windowed = withWindow(plan, { from, to });
        const exact = { ...windowed, startAfter: undefined, startAtOrBefore: undefined };
        const overlaps = (m: MeetingRecord) => (from === undefined || endTimeOf(m.startTime, m.duration) > from) && (to === undefined || m.startTime < to);
        const expected = meetings.filter((m) => matchesPlan(plan, m) && overlaps(m));
        return (
          windowed.direction === plan.direction &&
          JSON.stringify(meetings.filter((m) => matchesPlan(windowed, m))) === JSON.stringify(expected) &&
          JSON.stringify(meetings.filter((m) => matchesPlan(exact, m) && (to === undefined || m.startTime < to))) === JSON.stringify(expected)
        );
      }),
      { numRuns: 300 },
    );
  });

  it("orders by start time, ties by id in the same direction", () => {
    const a = { id: "mtg_A", startTime: at("2026-05-05T09:00:00Z") };
    const b = { id: "mtg_B", startTime: at("2026-05-05T09:00:00Z") };
    const c = { id: "mtg_0", startTime: at("2026-05-05T10:00:00Z") };
    expect([c, b, a].sort((x, y) => compareForList("asc", x, y)).map((m) => m.id)).toEqual(["mtg_A", "mtg_B", "mtg_0"]);
    expect([a, c, b].sort((x, y) => compareForList("desc", x, y)).map((m) => m.id)).toEqual(["mtg_0", "mtg_B", "mtg_A"]);
  });

  it("compares ids by code point, as the database's C collation does", () => {
    const x = { id: "mtg_Z", startTime: NOW };
    const y = { id: "mtg_a", startTime: NOW };
    expect(compareForList("asc", x, y)).toBeLessThan(0);
  });
});

describe("calendar access", () => {
  const caller = { userId: "usr_org", email: "org@example.com", mode: "test" as const };

  it("the organizer organizes, a participant by account e-mail attends, anyone else sees nothing", () => {
    expect(accessOf(record(), caller)).toBe("organizer");
    expect(accessOf(record(), { userId: "usr_a", email: "A@Example.com", mode: "test" })).toBe("participant");
    expect(accessOf(record(), { userId: "usr_c", email: "c@example.com", mode: "test" })).toBe("none");
  });

  it("test and live are separate worlds", () => {
    expect(accessOf(record(), { ...caller, mode: "live" })).toBe("none");
    expect(accessOf(record(), { userId: "usr_a", email: "a@example.com", mode: "live" })).toBe("none");
  });

  it("a removed participant no longer has access", () => {
    expect(accessOf(record({ participants: ["b@example.com"] }), { userId: "usr_a", email: "a@example.com", mode: "test" })).toBe("none");
  });
});

describe("meeting representation", () => {
  it("the full meeting has every field, times in UTC seconds", () => {
    const answered = { "b@example.com": { response: "declined" as const, respondedAt: at("2026-05-02T10:11:12.900Z") } };
    expect(toMeeting(record({ startTime: at("2026-05-05T09:00:00.500Z"), responses: answered }))).toEqual({
      id: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa",
      title: "Planning",
      description: "",
      startTime: "2026-05-05T09:00:00Z",
      duration: "30 mins",
      participants: ["a@example.com", "b@example.com"],
      status: "confirmed",
      organizer: "org@example.com",
      createdAt: "2026-05-01T08:00:00Z",
      attendees: [
        { email: "a@example.com", response: "needsAction", respondedAt: null },
        { email: "b@example.com", response: "declined", respondedAt: "2026-05-02T10:11:12Z" },
      ],
      recurrence: null,
      seriesId: null,
      originalStartTime: null,
    });
  });
});

describe("changes and invites", () => {
  const { title, description, startTime, duration, participants, status } = record();
  const before: MeetingState = { title, description, startTime, duration, participants, status };

  it("a patch changes only the fields it names", () => {
    expect(applyPatch(before, { title: "New" })).toEqual({ ...before, title: "New" });
    expect(applyPatch(before, {})).toEqual(before);
  });

  it("lists changed fields, comparing times by instant and participants by members and order", () => {
    expect(changedFields(before, applyPatch(before, { startTime: new Date(before.startTime.getTime()) }))).toEqual([]);
    expect(changedFields(before, applyPatch(before, { participants: ["b@example.com", "a@example.com"] }))).toEqual(["participants"]);
    expect(changedFields(before, applyPatch(before, { title: "X", duration: "1 hour", status: "cancelled", description: "d" }))).toEqual([
      "title",
      "description",
      "duration",
      "status",
    ]);
  });

  it("time, duration, title, description and participants are invite-worthy; status alone is not", () => {
    for (const f of ["title", "description", "startTime", "duration", "participants"] as const) expect(isInviteWorthy([f])).toBe(true);
    expect(isInviteWorthy(["status"])).toBe(false);
    expect(isInviteWorthy([])).toBe(false);
  });

  it("creating invites only for a confirmed meeting with sendInvites", () => {
    expect(invitesOnCreate("confirmed", true)).toBe(true);
    expect(invitesOnCreate("confirmed", false)).toBe(false);
    expect(invitesOnCreate("draft", true)).toBe(false);
  });

  it("updates send invites per api-decisions part 5", () => {
    const draft = { ...before, status: "draft" as const };
    const titled = applyPatch(before, { title: "T" });
    expect(invitesOnUpdate(before, titled, ["title"], true)).toBe(true);
    expect(invitesOnUpdate(before, titled, ["title"], false)).toBe(false);
    const cancelled = applyPatch(before, { status: "cancelled" });
    expect(invitesOnUpdate(before, cancelled, ["status"], true)).toBe(true);
    expect(invitesOnUpdate(draft, applyPatch(draft, { status: "cancelled" }), ["status"], true)).toBe(false);
    expect(invitesOnUpdate(draft, applyPatch(draft, { status: "confirmed" }), ["status"], true)).toBe(true);
    expect(invitesOnUpdate(draft, applyPatch(draft, { title: "T" }), ["title"], true)).toBe(false);
  });
});

describe("events", () => {
  it("one msgId per meeting and sequence", () => {
    expect(eventMsgId("mtg_x", 3)).toBe("meetings.mtg_x.3");
    expect(eventMsgId("mtg_x", 3)).not.toBe(eventMsgId("mtg_x", 4));
  });

  it("created carries the organizer, the meeting, the sequence and whether to invite", () => {
    const e = meetingCreated.payload.parse(JSON.parse(createdEventText(record(), JSON.stringify(toMeeting(record())), true, "evt_1", "2026-05-04T12:00:00Z")));
    expect(e).toMatchObject({ eventId: "evt_1", meetingId: record().id, mode: "test", organizer: { userId: "usr_org", email: "org@example.com" }, sequence: 1, sendInvites: true, occurredAt: "2026-05-04T12:00:00Z" });
    expect(e.meeting.id).toBe(record().id);
  });

  it("a cancelling change is meeting.cancelled, any other meeting.updated, both with the previous participants", () => {
    const before = record();
    const cancelled = changeEvent(before, record({ status: "cancelled", sequence: 2 }), ["status"], true, "evt_2", NOW);
    expect(cancelled.def.subject).toBe("meetings.v1.events.meeting.cancelled");
    const updated = changeEvent(before, record({ participants: ["c@example.com"], sequence: 2 }), ["participants"], true, "evt_3", NOW);
    expect(updated.def.subject).toBe("meetings.v1.events.meeting.updated");
    expect(updated.payload).toMatchObject({ changedFields: ["participants"], previousParticipants: ["a@example.com", "b@example.com"], previousStatus: "confirmed", sequence: 2 });
    expect(() => updated.def.payload.parse(updated.payload)).not.toThrow();
  });

  it("end time used by the events and lists is start plus duration", () => {
    expect(endTimeOf(at("2026-05-05T09:00:00Z"), "45 mins").toISOString()).toBe("2026-05-05T09:45:00.000Z");
  });
});
