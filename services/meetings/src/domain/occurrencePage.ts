import type { MeetingListItem } from "@sched/proto";
import { compareForList, matchesPlan, type ListPlan } from "./filters.js";
import { occurrenceListItem, occurrencesIn, seesOccurrence, type ExceptionRecord, type Occurrence, type SeriesRecord } from "./series.js";
import { LONGEST_MEETING_MS } from "./timing.js";

const DAY_MS = 86_400_000;
/** The first window a list expands its series over; each further one is four times as long. */
const FIRST_SPAN_MS = 7 * DAY_MS;

export interface Position {
  startTime: Date;
  id: string;
}

/** The plan's earliest and latest possible start, the cursor and the series' own span included. */
function startRange(plan: ListPlan, series: readonly SeriesRecord[], after: Position | undefined): { lo: number; hi: number } {
  let lo = Math.min(...series.map((s) => s.startTime.getTime()));
  let hi = Math.max(...series.map((s) => s.lastEnd.getTime()));
  if (plan.startAfter) lo = Math.max(lo, plan.startAfter.getTime() + 1);
  if (plan.endAfter) lo = Math.max(lo, plan.endAfter.getTime() - LONGEST_MEETING_MS);
  if (plan.startBefore) hi = Math.min(hi, plan.startBefore.getTime());
  if (plan.startAtOrBefore) hi = Math.min(hi, plan.startAtOrBefore.getTime() + 1);
  if (after && plan.direction === "asc") lo = Math.max(lo, after.startTime.getTime());
  if (after && plan.direction === "desc") hi = Math.min(hi, after.startTime.getTime() + 1);
  return { lo, hi };
}

/**
 * The occurrences a list page may need, as list items in list order: those
 * matching the plan after the cursor, from the cursor's side up to `bound`
 * (the last single meeting of the page, when more follow it). The series are
 * expanded a window at a time (a week, then four times longer each time)
 * until `wanted` occurrences are found or the range is done: never the
 * whole series unless the page needs it. `exceptionsOf` reads the series'
 * exceptions near a window. Only the occurrences in the viewer's calendar
 * count (seesOccurrence).
 */
export async function occurrencesForPage(input: {
  plan: ListPlan;
  series: readonly SeriesRecord[];
  viewer: { userId: string; email: string };
  after: Position | undefined;
  bound: Date | undefined;
  wanted: number;
  exceptionsOf: (from: Date, to: Date) => Promise<ExceptionRecord[]>;
}): Promise<{ items: (MeetingListItem & { at: number })[]; exhausted: boolean }> {
  const { plan, series, after } = input;
  if (series.length === 0) return { items: [], exhausted: true };
  let { lo, hi } = startRange(plan, series, after);
  if (input.bound) {
    if (plan.direction === "asc") hi = Math.min(hi, input.bound.getTime() + 1);
    else lo = Math.max(lo, input.bound.getTime());
  }
  const found: { series: SeriesRecord; occurrence: Occurrence }[] = [];
  let span = FIRST_SPAN_MS;
  let done = lo >= hi;
  while (!done) {
    const from = plan.direction === "asc" ? lo : Math.max(lo, hi - span);
    const to = plan.direction === "asc" ? Math.min(hi, lo + span) : hi;
    const exceptions = bySeries(await input.exceptionsOf(new Date(from), new Date(to)));
    for (const s of series) {
      for (const o of occurrencesIn(s, exceptions.get(s.id) ?? [], new Date(from), new Date(to))) {
        const start = o.startTime.getTime();
        if (start < from || start >= to) continue; // another window's
        if (!matchesPlan(plan, o) || !seesOccurrence(s, o, input.viewer)) continue;
        if (after && compareForList(plan.direction, o, after) <= 0) continue;
        found.push({ series: s, occurrence: o });
      }
    }
    if (plan.direction === "asc") lo = to;
    else hi = from;
    done = lo >= hi;
    if (found.length >= input.wanted) break;
    span *= 4;
  }
  found.sort((a, b) => compareForList(plan.direction, a.occurrence, b.occurrence));
  // Only the occurrences the page can hold become list items.
  const items = found.slice(0, input.wanted).map(({ series: s, occurrence: o }) => ({ ...occurrenceListItem(s, o), at: o.startTime.getTime() }));
  return { items, exhausted: done && found.length <= input.wanted };
}

function bySeries(exceptions: readonly ExceptionRecord[]): Map<string, ExceptionRecord[]> {
  const out = new Map<string, ExceptionRecord[]>();
  for (const e of exceptions) {
    const list = out.get(e.seriesId);
    if (list) list.push(e);
    else out.set(e.seriesId, [e]);
  }
  return out;
}

/**
 * One page from the single meetings' page and the occurrences: merged in
 * list order, cut at `limit` and where the items pass `itemBytes` (the first
 * always counts). More follow when anything was left out or either source
 * has more.
 */
export function mergePage(input: {
  direction: ListPlan["direction"];
  singles: MeetingListItem[];
  singlesHaveMore: boolean;
  occurrences: (MeetingListItem & { at: number })[];
  occurrencesExhausted: boolean;
  limit: number;
  itemBytes: number | undefined;
}): { itemsJson: string; hasMore: boolean } {
  const keyed = [
    ...input.singles.map((item) => ({ item, at: Date.parse(item.startTime) })),
    ...input.occurrences.map(({ at, ...item }) => ({ item, at })),
  ].sort((a, b) => compareForList(input.direction, { startTime: new Date(a.at), id: a.item.id }, { startTime: new Date(b.at), id: b.item.id }));
  const texts: string[] = [];
  let bytes = 0;
  for (const { item } of keyed) {
    if (texts.length === input.limit) break;
    const text = JSON.stringify(item);
    bytes += Buffer.byteLength(text) + 1;
    if (texts.length > 0 && input.itemBytes !== undefined && bytes > input.itemBytes) break;
    texts.push(text);
  }
  const hasMore = texts.length < keyed.length || input.singlesHaveMore || !input.occurrencesExhausted;
  return { itemsJson: `[${texts.join(",")}]`, hasMore };
}
