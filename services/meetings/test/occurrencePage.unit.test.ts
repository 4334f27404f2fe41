import type { MeetingListItem } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { mergePage, singleEntries, type OccurrenceEntry } from "../src/domain/occurrencePage.js";
import { checkRule } from "../src/domain/recurrence.js";
import { occurrenceListItem, occurrencesIn, type SeriesRecord } from "../src/domain/series.js";
import { endTimeOf } from "../src/domain/timing.js";

const at = (iso: string) => new Date(iso);

/** A list item as the page's statement writes it (006_store_list_items: compact, `id` first). */
function single(id: string, startTime: string, title = "Single"): MeetingListItem {
  return { id, title, startTime, duration: "30 mins", participants: ["bea@example.com"], status: "confirmed", organizer: "org@example.com", recurrence: null, seriesId: null, originalStartTime: null };
}

const pageOf = (items: MeetingListItem[]) => `[${items.map((i) => JSON.stringify(i)).join(",")}]`;

/** A daily series of three at 09:00 UTC from 2031-06-02. */
function daily(): SeriesRecord {
  const checked = checkRule("FREQ=DAILY;COUNT=3", at("2031-06-02T09:00:00Z"), "UTC");
  if (!checked.ok) throw new Error(checked.problem);
  return {
    id: "mtg_series",
    mode: "test",
    organizerId: "usr_org",
    organizerEmail: "org@example.com",
    title: "Daily",
    description: "",
    startTime: at("2031-06-02T09:00:00Z"),
    duration: "30 mins",
    participants: ["bea@example.com"],
    status: "confirmed",
    sequence: 0,
    createdAt: at("2031-01-01T00:00:00Z"),
    recurrence: checked.rule,
    timeZone: "UTC",
    lastEnd: endTimeOf(checked.lastStart, "30 mins"),
    activeFrom: null,
    responses: {},
  };
}

function occurrenceEntries(s: SeriesRecord, direction: "asc" | "desc" = "asc"): OccurrenceEntry[] {
  const entries = occurrencesIn(s, [], at("2031-06-01T00:00:00Z"), at("2031-06-10T00:00:00Z")).map((o) => ({ at: o.startTime.getTime(), id: o.id, series: s, occurrence: o }));
  return direction === "asc" ? entries : entries.reverse();
}

describe("the single meetings' page read without parsing it", () => {
  it("finds each item's text, start and id, whatever its title holds", () => {
    const titles = ['Quote " and \\ backslash', 'Braces { } [ ] and a key "startTime":"2000-01-01T00:00:00Z"', "Ünïcödé \u0001 control", 'Looks like the next item: },{"id":"mtg_fake","startTime":"', ""];
    const items = titles.map((title, n) => single(`mtg_${n}`, `2031-06-0${n + 1}T10:00:00Z`, title));
    const entries = singleEntries(pageOf(items));
    expect(entries.map((e) => JSON.parse(e.text) as MeetingListItem)).toEqual(items);
    expect(entries.map((e) => [e.id, e.at])).toEqual(items.map((i) => [i.id, Date.parse(i.startTime)]));
  });

  it("reads an empty page as no item", () => {
    expect(singleEntries("[]")).toEqual([]);
  });
});

describe("a page merged from single meetings and occurrences", () => {
  const singles = [single("mtg_a", "2031-06-02T08:00:00Z"), single("mtg_b", "2031-06-03T09:00:00Z"), single("mtg_c", "2031-06-05T09:00:00Z")];
  const s = daily();

  it("merges both in list order, ties by id, each item as its own text or the occurrence's list item", () => {
    const page = mergePage({ direction: "asc", singles: singleEntries(pageOf(singles)), singlesHaveMore: false, occurrences: occurrenceEntries(s), occurrencesExhausted: true, limit: 10, itemBytes: undefined });
    const ids = (JSON.parse(page.itemsJson) as MeetingListItem[]).map((i) => i.id);
    // mtg_b and the 3rd's occurrence start together: "mtg_b" < "mtg_series_…".
    expect(ids).toEqual(["mtg_a", "mtg_series_20310602T090000Z", "mtg_b", "mtg_series_20310603T090000Z", "mtg_series_20310604T090000Z", "mtg_c"]);
    const occurrence = (JSON.parse(page.itemsJson) as MeetingListItem[])[1];
    expect(occurrence).toEqual(occurrenceListItem(s, occurrenceEntries(s)[0]!.occurrence));
    expect(page.hasMore).toBe(false);
  });

  it("merges newest first for a descending list", () => {
    const descending = [...singles].reverse();
    const page = mergePage({ direction: "desc", singles: singleEntries(pageOf(descending)), singlesHaveMore: false, occurrences: occurrenceEntries(s, "desc"), occurrencesExhausted: true, limit: 4, itemBytes: undefined });
    expect((JSON.parse(page.itemsJson) as MeetingListItem[]).map((i) => i.id)).toEqual(["mtg_c", "mtg_series_20310604T090000Z", "mtg_series_20310603T090000Z", "mtg_b"]);
    expect(page.hasMore).toBe(true);
  });

  it("stops at the byte budget (the first item always counts), and says more follow", () => {
    const entries = singleEntries(pageOf(singles));
    const first = entries[0]!.text;
    const tight = mergePage({ direction: "asc", singles: entries, singlesHaveMore: false, occurrences: occurrenceEntries(s), occurrencesExhausted: true, limit: 10, itemBytes: 1 });
    expect(tight).toEqual({ itemsJson: `[${first}]`, hasMore: true });
  });

  it("says more follow when either source has more, even if every item fit", () => {
    const base = { direction: "asc" as const, singles: singleEntries(pageOf(singles)), occurrences: occurrenceEntries(s), limit: 10, itemBytes: undefined };
    expect(mergePage({ ...base, singlesHaveMore: true, occurrencesExhausted: true }).hasMore).toBe(true);
    expect(mergePage({ ...base, singles: singleEntries(pageOf(singles)), singlesHaveMore: false, occurrencesExhausted: false }).hasMore).toBe(true);
  });
});

describe("occurrences kept with their series record", () => {
  const window = [at("2031-06-01T00:00:00Z"), at("2031-06-10T00:00:00Z")] as const;
  const itemOf = (s: SeriesRecord) => JSON.parse(mergePage({ direction: "asc", singles: [], singlesHaveMore: false, occurrences: occurrenceEntries(s), occurrencesExhausted: true, limit: 1, itemBytes: undefined }).itemsJson) as MeetingListItem[];

  it("are the same for the same record, and a changed record's own", () => {
    const s = daily();
    expect(occurrencesIn(s, [], ...window)).toEqual(occurrencesIn(s, [], ...window));
    expect(itemOf(s)[0]!.title).toBe("Daily");
    // A change makes a new record (never one changed in place): its occurrences and list items are its own.
    const renamed: SeriesRecord = { ...s, title: "Renamed", participants: ["cy@example.com"] };
    expect(occurrencesIn(renamed, [], ...window).map((o) => [o.title, o.participants])).toEqual(Array.from({ length: 3 }, () => ["Renamed", ["cy@example.com"]]));
    expect(itemOf(renamed)).toEqual([occurrenceListItem(renamed, occurrencesIn(renamed, [], ...window)[0]!)]);
    expect(itemOf(s)[0]!.title).toBe("Daily");
  });

  it("give way to exceptions, moved ones in start order", () => {
    const s = daily();
    const moved = { seriesId: s.id, originalStart: at("2031-06-02T09:00:00Z"), title: "Moved", description: "", startTime: at("2031-06-03T12:00:00Z"), duration: "30 mins" as const, participants: ["bea@example.com"], status: "confirmed" as const, sequence: 1 };
    const other = { ...moved, seriesId: "mtg_other", title: "Another series'" };
    const occurrences = occurrencesIn(s, [moved, other], ...window);
    expect(occurrences.map((o) => [o.startTime.toISOString(), o.title, o.exception])).toEqual([
      ["2031-06-03T09:00:00.000Z", "Daily", false],
      ["2031-06-03T12:00:00.000Z", "Moved", true],
      ["2031-06-04T09:00:00.000Z", "Daily", false],
    ]);
    // The plain occurrences kept with the record before are not changed by an exception seen later.
    expect(occurrencesIn(s, [], ...window).map((o) => o.title)).toEqual(["Daily", "Daily", "Daily"]);
  });
});
