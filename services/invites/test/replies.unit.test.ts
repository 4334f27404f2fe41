import ical, { ICalAttendeeStatus, ICalCalendarMethod } from "ical-generator";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { buildIcs } from "../src/domain/ics.js";
import { parseItipReply, parseStoredEvent } from "../src/domain/itipReply.js";
import { ReplyAddresses } from "../src/domain/replyAddress.js";
import { proveAnswer } from "../src/domain/replyJudge.js";
import { vtimezoneOf } from "../src/domain/seriesZone.js";

const MEETING_ID = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const addresses = new ReplyAddresses(Buffer.alloc(32, 7), "replies.example.com");
const NOW = new Date("2031-05-02T12:00:00Z");

function replyIcs(options: { uid?: string; organizer?: string; attendee?: string; status?: ICalAttendeeStatus; method?: ICalCalendarMethod; stamp?: Date } = {}): string {
  const calendar = ical({ method: options.method ?? ICalCalendarMethod.REPLY });
  calendar.createEvent({
    id: options.uid ?? `${MEETING_ID}@sched.invalid`,
    start: new Date("2031-05-05T09:00:00Z"),
    end: new Date("2031-05-05T09:30:00Z"),
    stamp: options.stamp ?? new Date("2031-05-02T10:00:00Z"),
    summary: "Planning",
    organizer: { name: "Org", email: options.organizer ?? "org@example.com" },
    attendees: [{ email: options.attendee ?? "ann@example.com", status: options.status ?? ICalAttendeeStatus.ACCEPTED }],
  });
  return calendar.toString();
}

const prove = (ics: string, token = addresses.tokenOf(addresses.addressFor(MEETING_ID, "ann@example.com"))!) => {
  const parsed = parseItipReply(ics);
  if (!parsed.ok) return parsed;
  return proveAnswer(parsed.value, { token, uidDomain: "sched.invalid", tokenMatches: (t, m, p) => addresses.matches(t, m, p), now: NOW });
};

describe("reply addresses", () => {
  it("are per meeting and participant, at the inbound domain, and read back only there", () => {
    const ann = addresses.addressFor(MEETING_ID, "ann@example.com");
    expect(ann).toMatch(/^reply-[0-9a-f]{32}@replies\.example\.com$/);
    expect(addresses.addressFor(MEETING_ID, "ANN@example.com")).toBe(ann);
    expect(addresses.addressFor(MEETING_ID, "bob@example.com")).not.toBe(ann);
    expect(addresses.addressFor("mtg_siC47wqaMl9Xvq2ZG4MzAOUQ", "ann@example.com")).not.toBe(ann);
    expect(addresses.tokenOf(ann.toUpperCase())).toBe(ann.slice(6, 38));
    expect(addresses.tokenOf(ann.replace("replies.example.com", "elsewhere.example.com"))).toBeUndefined();
    expect(addresses.tokenOf("postmaster@replies.example.com")).toBeUndefined();
  });

  it("depend on the service's key", () => {
    const other = new ReplyAddresses(Buffer.alloc(32, 8), "replies.example.com");
    expect(other.addressFor(MEETING_ID, "ann@example.com")).not.toBe(addresses.addressFor(MEETING_ID, "ann@example.com"));
  });

  it("are the ORGANIZER's address in the invite, where clients send their REPLY, the organizer named beside it", () => {
    const address = addresses.addressFor(MEETING_ID, "ann@example.com");
    const meeting = { id: MEETING_ID, title: "T", description: "", startTime: "2031-05-05T09:00:00Z", duration: "30 mins" as const, participants: ["ann@example.com"], status: "confirmed" as const, organizer: "org@example.com", createdAt: "2031-05-01T00:00:00Z", attendees: [], recurrence: null, seriesId: null, originalStartTime: null };
    const ics = buildIcs({ meeting, sequence: 1, kind: "request", recipient: "ann@example.com", organizer: { email: "org@example.com" }, uidDomain: "sched.invalid", replyAddress: address });
    const organizer = new ICAL.Component(ICAL.parse(ics)).getFirstSubcomponent("vevent")!.getFirstProperty("organizer")!;
    expect(organizer.getFirstValue()).toBe(`mailto:${address}`);
    expect(organizer.getParameter("cn")).toBe("org@example.com");
    expect(organizer.getParameter("sent-by")).toBeUndefined();
  });
});

describe("what a reply proves", () => {
  it("an attendee's answer to a meeting of ours, at the time the client stamped", () => {
    expect(prove(replyIcs())).toEqual({ ok: true, value: { meetingId: MEETING_ID, organizerEmail: "org@example.com", email: "ann@example.com", response: "accepted", respondedAt: new Date("2031-05-02T10:00:00Z") } });
    expect(prove(replyIcs({ status: ICalAttendeeStatus.DECLINED }))).toMatchObject({ ok: true, value: { response: "declined" } });
    expect(prove(replyIcs({ status: ICalAttendeeStatus.TENTATIVE }))).toMatchObject({ ok: true, value: { response: "tentative" } });
  });

  it("never an answer from the future: a stamp past now counts as now", () => {
    expect(prove(replyIcs({ stamp: new Date("2040-01-01T00:00:00Z") }))).toMatchObject({ ok: true, value: { respondedAt: NOW } });
  });

  it("nothing for another attendee, another meeting's address, a foreign UID or a non-answer", () => {
    expect(prove(replyIcs({ attendee: "bob@example.com" }))).toMatchObject({ ok: false });
    expect(prove(replyIcs(), addresses.tokenOf(addresses.addressFor("mtg_siC47wqaMl9Xvq2ZG4MzAOUQ", "ann@example.com"))!)).toMatchObject({ ok: false });
    expect(prove(replyIcs(), "0".repeat(32))).toMatchObject({ ok: false });
    expect(prove(replyIcs({ uid: "something@elsewhere.example.com" }))).toMatchObject({ ok: false, problem: "UID of no meeting of ours" });
    expect(prove(replyIcs({ status: ICalAttendeeStatus.NEEDSACTION }))).toMatchObject({ ok: false });
  });

  it("nothing from what is not a REPLY calendar", () => {
    expect(parseItipReply(replyIcs({ method: ICalCalendarMethod.REQUEST }))).toMatchObject({ ok: false, problem: "METHOD is REQUEST, not REPLY" });
    expect(parseItipReply("hello")).toMatchObject({ ok: false });
    expect(parseItipReply("BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nEND:VCALENDAR\r\n")).toMatchObject({ ok: false, problem: "0 VEVENTs, not one" });
  });

  it("an answer with RECURRENCE-ID is the occurrence's (its id as meetings spells it), the reply address still the series'", () => {
    const withRecurrenceId = (line: string, extra = "") => replyIcs().replace("BEGIN:VEVENT\r\n", `${extra}BEGIN:VEVENT\r\n${line}\r\n`);
    const occurrence = `${MEETING_ID}_20310512T070000Z`;
    expect(prove(withRecurrenceId("RECURRENCE-ID:20310512T070000Z"))).toMatchObject({ ok: true, value: { meetingId: occurrence, response: "accepted" } });
    // A local time in an IANA zone, with or without its VTIMEZONE in the message (09:00 Berlin in May is 07:00 UTC).
    expect(prove(withRecurrenceId("RECURRENCE-ID;TZID=Europe/Berlin:20310512T090000"))).toMatchObject({ ok: true, value: { meetingId: occurrence } });
    expect(prove(withRecurrenceId("RECURRENCE-ID;TZID=Europe/Berlin:20310512T090000", `${vtimezoneOf("Europe/Berlin")!.trimEnd()}\r\n`))).toMatchObject({ ok: true, value: { meetingId: occurrence } });
    // Outlook names zones its own way and sends their VTIMEZONE.
    const outlookZone = [
      "BEGIN:VTIMEZONE", "TZID:W. Europe Standard Time",
      "BEGIN:STANDARD", "DTSTART:16010101T030000", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "END:STANDARD",
      "BEGIN:DAYLIGHT", "DTSTART:16010101T020000", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3", "END:DAYLIGHT",
      "END:VTIMEZONE", "",
    ].join("\r\n");
    expect(prove(withRecurrenceId('RECURRENCE-ID;TZID="W. Europe Standard Time":20310512T090000', outlookZone))).toMatchObject({ ok: true, value: { meetingId: occurrence } });
    expect(prove(withRecurrenceId('RECURRENCE-ID;TZID="W. Europe Standard Time":20311212T090000', outlookZone))).toMatchObject({ ok: true, value: { meetingId: `${MEETING_ID}_20311212T080000Z` } });
    // What names no instant answers nothing.
    expect(parseItipReply(withRecurrenceId("RECURRENCE-ID;VALUE=DATE:20310512"))).toMatchObject({ ok: false, problem: "RECURRENCE-ID is not a date-time" });
    expect(parseItipReply(withRecurrenceId("RECURRENCE-ID:20310512T090000"))).toMatchObject({ ok: false, problem: "RECURRENCE-ID in floating time" });
    expect(parseItipReply(withRecurrenceId("RECURRENCE-ID;TZID=Nowhere/Atlantis:20310512T090000"))).toMatchObject({ ok: false });
  });

  it("leaves the organizer as the reply names it, for meetings to compare", () => {
    expect(prove(replyIcs({ organizer: "Mallory@Example.com" }))).toMatchObject({ ok: true, value: { organizerEmail: "mallory@example.com" } });
  });
});

it("a stored series with a changed occurrence answers with the series' own event", () => {
  const calendar = ical();
  const common = { id: `${MEETING_ID}@sched.invalid`, stamp: new Date("2031-05-02T10:00:00Z"), summary: "Planning", organizer: { name: "Org", email: "org@example.com" } };
  calendar.createEvent({ ...common, start: new Date("2031-05-12T10:00:00Z"), end: new Date("2031-05-12T10:30:00Z"), recurrenceId: new Date("2031-05-12T09:00:00Z"), attendees: [{ email: "ann@example.com", status: ICalAttendeeStatus.DECLINED }] });
  calendar.createEvent({ ...common, start: new Date("2031-05-05T09:00:00Z"), end: new Date("2031-05-05T09:30:00Z"), repeating: "FREQ=WEEKLY;COUNT=3", attendees: [{ email: "ann@example.com", status: ICalAttendeeStatus.ACCEPTED }] });
  expect(parseStoredEvent(calendar.toString())).toMatchObject({ ok: true, value: { uid: `${MEETING_ID}@sched.invalid`, attendees: [{ email: "ann@example.com", partstat: "ACCEPTED" }] } });
});
