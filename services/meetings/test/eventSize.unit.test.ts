import { MAX_OCCURRENCES } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { checkEventSize, eventBytes, EVENT_BYTES_LIMIT } from "../src/domain/eventSize.js";
import { checkRule, occurrenceStarts } from "../src/domain/recurrence.js";
import { ruleOf, type ExceptionRecord, type SeriesRecord } from "../src/domain/series.js";
import { seriesChangeEvent } from "../src/domain/seriesChanges.js";
import { endTimeOf } from "../src/domain/timing.js";

const NATS_MAX_PAYLOAD = 1024 * 1024;
const at = (iso: string) => new Date(iso);
/** An address of the longest length the API takes (254 characters). */
const longest = (i: number) => `${String(i).padStart(3, "0")}${"a".repeat(60)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(58)}.com`;

/** A daily series of `count` occurrences with the longest text and the most participants the API takes. */
function series(count: number, participants: number, description: number): SeriesRecord {
  const checked = checkRule(`FREQ=DAILY;COUNT=${count}`, at("2040-01-01T09:00:00Z"), "UTC");
  if (!checked.ok) throw new Error(checked.problem);
  return {
    id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE", mode: "test", organizerId: "usr_org", organizerEmail: "org@example.com", title: "t".repeat(200), description: "d".repeat(description),
    startTime: at("2040-01-01T09:00:00Z"), duration: "30 mins", participants: Array.from({ length: participants }, (_, i) => longest(i)), status: "confirmed", sequence: 1,
    createdAt: at("2039-12-01T00:00:00Z"), recurrence: checked.rule, timeZone: "UTC", lastEnd: endTimeOf(checked.lastStart, "30 mins"), activeFrom: null, responses: {},
  };
}

/** Every occurrence but the first changed on its own (moved an hour), with the series' text and participants. */
function changedAll(s: SeriesRecord): ExceptionRecord[] {
  return occurrenceStarts(ruleOf(s), s.startTime, s.lastEnd).slice(1).map((start, i) => ({
    seriesId: s.id, originalStart: start, title: s.title, description: s.description, startTime: new Date(start.getTime() + 3_600_000), duration: s.duration, participants: s.participants, status: "confirmed", sequence: i + 2,
  }));
}

const eventOf = (s: SeriesRecord) => seriesChangeEvent(s, { ...s, title: "renamed", sequence: 800 }, changedAll(s), [], ["title"], true, "evt_1", at("2039-12-02T00:00:00Z")).payload;

describe("the size of a series' event", () => {
  it("a series at the API's limits with every occurrence changed would be tens of MiB: far over NATS's 1 MiB, so it is refused", () => {
    const maximal = eventOf(series(MAX_OCCURRENCES, 100, 10_000));
    const bytes = eventBytes(maximal);
    // 729 changed occurrences × (10,000 characters of description + 100 addresses of 254) ≈ 26 MB.
    expect(bytes).toBeGreaterThan(25 * NATS_MAX_PAYLOAD);
    expect(() => checkEventSize(maximal)).toThrow(expect.objectContaining({ code: "invalid_request", status: 400 }));
  });

  it("a series at the limits with a few changed occurrences fits; the room left under 1 MiB is more than one such occurrence adds", () => {
    const one = eventOf(series(2, 100, 10_000));
    const two = eventOf(series(3, 100, 10_000));
    expect(() => checkEventSize(two)).not.toThrow();
    const perOccurrence = eventBytes(two) - eventBytes(one);
    expect(perOccurrence).toBeGreaterThan(30_000);
    // An occurrence cancelled (DELETE, not checked) or the series removed changes the event by less than that.
    expect(NATS_MAX_PAYLOAD - EVENT_BYTES_LIMIT).toBeGreaterThan(perOccurrence);
  });

  it("a full series with ordinary occurrences (five participants, a short description) changed everywhere fits", () => {
    const ordinary = { ...series(MAX_OCCURRENCES, 5, 200), participants: ["ann@example.com", "bo@example.com", "cy@example.com", "di@example.com", "ed@example.com"] };
    const payload = eventOf(ordinary);
    expect(eventBytes(payload)).toBeLessThan(EVENT_BYTES_LIMIT);
    expect(() => checkEventSize(payload)).not.toThrow();
  });
});
