import { describe, expect, it } from "vitest";
import { occurrenceBusy } from "../src/domain/busyOccurrences.js";
import { judgeResponse } from "../src/domain/responses.js";
import { retimedExceptions } from "../src/domain/retimedExceptions.js";
import { askAgain, attendeesOf, groupAnswers, occurrenceAnswers } from "../src/domain/seriesAnswers.js";
import { checkRule } from "../src/domain/recurrence.js";
import type { ExceptionRecord, SeriesRecord } from "../src/domain/series.js";
import { endTimeOf } from "../src/domain/timing.js";

const at = (iso: string) => new Date(iso);

/** A series of `rule` from `start` in `zone`, every field as the service stores it. */
function series(rule: string, start: string, zone = "UTC", extra: Partial<SeriesRecord> = {}): SeriesRecord {
  const checked = checkRule(rule, at(start), zone);
  if (!checked.ok) throw new Error(checked.problem);
  const duration = extra.duration ?? "1 hour";
  return {
    id: "mtg_series",
    mode: "test",
    organizerId: "usr_org",
    organizerEmail: "org@example.com",
    title: "Sync",
    description: "",
    startTime: at(start),
    duration,
    participants: ["bea@example.com", "cal@example.com"],
    status: "confirmed",
    sequence: 1,
    createdAt: at("2031-01-01T00:00:00Z"),
    recurrence: checked.rule,
    timeZone: zone,
    lastEnd: endTimeOf(checked.lastStart, duration),
    activeFrom: null,
    responses: {},
    ...extra,
  };
}

function exception(s: SeriesRecord, originalStart: string, change: Partial<ExceptionRecord> = {}): ExceptionRecord {
  const { title, description, duration, participants, status } = s;
  return { seriesId: s.id, originalStart: at(originalStart), title, description, startTime: at(originalStart), duration, participants, status, sequence: 2, ...change };
}

describe("answers of an occurrence", () => {
  const accepted = { response: "accepted" as const, respondedAt: at("2031-05-01T10:00:00Z") };
  const declined = { response: "declined" as const, respondedAt: at("2031-05-01T09:00:00Z") };

  it("an occurrence's own answer wins over the series', whichever is later; the others take the series'", () => {
    const answers = occurrenceAnswers({ "bea@example.com": accepted, "cal@example.com": accepted }, { "bea@example.com": declined });
    expect(attendeesOf(["bea@example.com", "cal@example.com", "dan@example.com"], answers)).toEqual([
      { email: "bea@example.com", response: "declined", respondedAt: "2031-05-01T09:00:00Z" },
      { email: "cal@example.com", response: "accepted", respondedAt: "2031-05-01T10:00:00Z" },
      { email: "dan@example.com", response: "needsAction", respondedAt: null },
    ]);
  });

  it("an occurrence asking again (needsAction of its own) hides the series answer and takes any answer, however old", () => {
    const [asked] = askAgain("mtg_series", { originalStart: at("2031-06-02T09:00:00Z"), participants: ["bea@example.com"] });
    const own = { "bea@example.com": asked! };
    expect(occurrenceAnswers({ "bea@example.com": accepted }, own)["bea@example.com"]).toMatchObject({ response: "needsAction", respondedAt: null });
    const judged = judgeResponse({ organizerEmail: "org@example.com", participants: ["bea@example.com"], status: "confirmed", responses: own }, { organizerEmail: "org@example.com", email: "bea@example.com", response: "accepted", respondedAt: at("2020-01-01T00:00:00Z") });
    expect(judged).toBe("applied");
  });
});

describe("busy time of a series with answers", () => {
  const window = [at("2031-06-01T00:00:00Z"), at("2031-06-30T00:00:00Z")] as const;
  const days = (intervals: [number, number][]) => intervals.map(([s]) => new Date(s * 1_000).toISOString().slice(5, 10));
  const bea = { userId: "usr_bea", email: "Bea@example.com" };

  it("a declined series is busy only on the occurrences the person answered otherwise; the organizer stays busy", () => {
    const s = series("FREQ=WEEKLY;COUNT=3", "2031-06-02T09:00:00Z", "UTC", { responses: { "bea@example.com": { response: "declined", respondedAt: at("2031-05-01T00:00:00Z") } } });
    const own = groupAnswers([{ seriesId: s.id, originalStart: at("2031-06-09T09:00:00Z"), email: "bea@example.com", response: "tentative", respondedAt: at("2031-05-01T00:00:00Z") }]);
    expect(days(occurrenceBusy([{ series: s, exceptions: [], answers: own }], bea, ...window))).toEqual(["06-09"]);
    expect(days(occurrenceBusy([{ series: s, exceptions: [], answers: own }], { userId: "usr_org", email: "bea@example.com" }, ...window))).toEqual(["06-02", "06-09", "06-16"]);
  });

  it("a declined occurrence of an accepted series is not busy, at its changed time too", () => {
    const s = series("FREQ=WEEKLY;COUNT=3", "2031-06-02T09:00:00Z", "UTC", { responses: { "bea@example.com": { response: "accepted", respondedAt: at("2031-05-01T00:00:00Z") } } });
    const moved = exception(s, "2031-06-09T09:00:00Z", { startTime: at("2031-06-10T15:00:00Z") });
    const own = groupAnswers([{ seriesId: s.id, originalStart: at("2031-06-09T09:00:00Z"), email: "bea@example.com", response: "declined", respondedAt: at("2031-05-01T00:00:00Z") }]);
    expect(days(occurrenceBusy([{ series: s, exceptions: [moved], answers: own }], bea, ...window))).toEqual(["06-02", "06-16"]);
    expect(days(occurrenceBusy([{ series: s, exceptions: [moved], answers: groupAnswers([]) }], bea, ...window))).toEqual(["06-02", "06-10", "06-16"]);
  });
});

describe("exceptions kept when a series takes a new time or rule", () => {
  const now = at("2031-06-01T00:00:00Z");
  const before = series("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6", "2031-06-02T07:00:00Z", "Europe/Berlin");

  it("a new time of day: each exception moves to the new occurrence of its day; a moved one keeps its own time", () => {
    const after = { ...series("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6", "2031-06-02T08:30:00Z", "Europe/Berlin", { duration: "30 mins" }), activeFrom: now };
    const cancelled = exception(before, "2031-06-04T07:00:00Z", { status: "cancelled" });
    const renamed = exception(before, "2031-06-09T07:00:00Z", { title: "Renamed" });
    const moved = exception(before, "2031-06-11T07:00:00Z", { startTime: at("2031-06-12T12:00:00Z") });
    expect(retimedExceptions(before, after, [cancelled, renamed, moved], now)).toEqual([
      { ...cancelled, originalStart: at("2031-06-04T08:30:00Z"), startTime: at("2031-06-04T08:30:00Z"), duration: "30 mins" },
      { ...renamed, originalStart: at("2031-06-09T08:30:00Z"), startTime: at("2031-06-09T08:30:00Z"), duration: "30 mins" },
      { ...moved, originalStart: at("2031-06-11T08:30:00Z") },
    ]);
  });

  it("a new rule: exceptions of days the new series still has stay where they were, the others go", () => {
    const after = { ...series("FREQ=WEEKLY;BYDAY=WE;COUNT=3", "2031-06-04T07:00:00Z", "Europe/Berlin"), activeFrom: now };
    const monday = exception(before, "2031-06-02T07:00:00Z", { status: "cancelled" });
    const wednesday = exception(before, "2031-06-11T07:00:00Z", { status: "cancelled" });
    expect(retimedExceptions(before, after, [monday, wednesday], now)).toEqual([wednesday]);
  });

  it("a day is read in the series' zone, not in UTC", () => {
    // 23:30 in Los Angeles is the next day in UTC; the occurrence of that local day moves to 08:00 on it.
    const la = series("FREQ=DAILY;COUNT=5", "2031-06-03T06:30:00Z", "America/Los_Angeles");
    const after = { ...series("FREQ=DAILY;COUNT=5", "2031-06-02T15:00:00Z", "America/Los_Angeles"), activeFrom: now };
    const e = exception(la, "2031-06-04T06:30:00Z", { status: "cancelled" });
    expect(retimedExceptions(la, after, [e], now)).toEqual([{ ...e, originalStart: at("2031-06-03T15:00:00Z"), startTime: at("2031-06-03T15:00:00Z") }]);
  });

  it("an exception whose new occurrence has already ended goes", () => {
    const after = { ...series("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6", "2031-06-02T07:00:00Z", "Europe/Berlin"), activeFrom: now };
    const e = exception(before, "2031-06-04T07:00:00Z", { status: "cancelled" });
    expect(retimedExceptions(before, after, [e], at("2031-06-04T09:00:00Z"))).toEqual([]);
  });
});
