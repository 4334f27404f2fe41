import { compareForList, matchesPlan, type ListPlan } from "./filters.js";
import { occurrenceListItemJson, occurrencesIn, seesOccurrence, type ExceptionRecord, type Occurrence, type SeriesRecord } from "./series.js";
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
}): Promise<{ items: OccurrenceEntry[]; exhausted: boolean }> {
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
    const window = { from: new Date(from), to: new Date(to) };
    const exceptions = bySeries(await input.exceptionsOf(window.from, window.to));
    for (const s of series) {
      for (const o of occurrencesIn(s, exceptions.get(s.id) ?? NO_EXCEPTIONS, window.from, window.to)) {
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
  // Only the occurrences the page can hold are kept; each becomes a list item only if the merged page takes it (mergePage).
  const items = found.slice(0, input.wanted).map(({ series: s, occurrence: o }) => ({ at: o.startTime.getTime(), id: o.id, series: s, occurrence: o }));
  return { items, exhausted: done && found.length <= input.wanted };
}

const NO_EXCEPTIONS: readonly ExceptionRecord[] = [];

function bySeries(exceptions: readonly ExceptionRecord[]): Map<string, ExceptionRecord[]> {
  const out = new Map<string, ExceptionRecord[]>();
  for (const e of exceptions) {
    const list = out.get(e.seriesId);
    if (list) list.push(e);
    else out.set(e.seriesId, [e]);
  }
  return out;
}

/** A single meeting of the page: its list item's JSON text as Postgres wrote it, with its start (epoch ms) and id to merge by. */
export interface SingleEntry {
  at: number;
  id: string;
  text: string;
}

/** An occurrence the page may take, with its start (epoch ms) and id to merge by. */
export interface OccurrenceEntry {
  at: number;
  id: string;
  series: SeriesRecord;
  occurrence: Occurrence;
}

/** Where one list item ends and the next begins: no string value holds it, since their quotes are escaped. */
const BETWEEN_ITEMS = '},{"id":"';

/**
 * The items of the single meetings' page (a JSON array of list items, as
 * the page's statement writes them: compact, `id` first, 006_store_list_items),
 * each as its own text with its start and id, found by searching the text
 * rather than parsing it into objects. A key's name with its quotes
 * (`"startTime":"`, `},{"id":"`) cannot occur inside a string value, whose
 * quotes are escaped, and list items hold no nested objects.
 */
export function singleEntries(itemsJson: string): SingleEntry[] {
  const out: SingleEntry[] = [];
  const last = itemsJson.length - 1; // the closing bracket
  if (last <= 1) return out;
  let start = 1;
  while (start < last) {
    const next = itemsJson.indexOf(BETWEEN_ITEMS, start);
    const end = next < 0 ? last : next + 1;
    out.push(entryOf(itemsJson, start, end));
    start = end + 1;
  }
  return out;
}

function entryOf(json: string, start: number, end: number): SingleEntry {
  return { at: Date.parse(stringValue(json, start, end, "startTime")), id: stringValue(json, start, end, "id"), text: json.slice(start, end) };
}

/** The value of a top-level string field of the object at [start, end) of `json`; its values here (ids, timestamps) hold no escapes. */
function stringValue(json: string, start: number, end: number, field: string): string {
  const key = `"${field}":"`;
  const at = json.indexOf(key, start);
  if (at < 0 || at >= end) throw new Error(`list item without ${field}`);
  const from = at + key.length;
  return json.slice(from, json.indexOf('"', from));
}

/**
 * One page from the single meetings' page and the occurrences, both in list
 * order: merged in list order, cut at `limit` and where the items pass
 * `itemBytes` (the first always counts). The singles' texts go out as
 * Postgres wrote them; an occurrence becomes a list item only when the page
 * takes it. More follow when anything was left out or either source has
 * more.
 */
export function mergePage(input: {
  direction: ListPlan["direction"];
  singles: SingleEntry[];
  singlesHaveMore: boolean;
  occurrences: readonly OccurrenceEntry[];
  occurrencesExhausted: boolean;
  limit: number;
  itemBytes: number | undefined;
}): { itemsJson: string; hasMore: boolean } {
  const sign = input.direction === "asc" ? 1 : -1;
  const order = (a: { at: number; id: string }, b: { at: number; id: string }) => sign * (a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Postgres orders ids by its collation; the page's order is this one (almost always the same: a no-op pass).
  const singles = input.singles.sort(order);
  const { occurrences } = input;
  const texts: string[] = [];
  let bytes = 0;
  let i = 0;
  let j = 0;
  while (texts.length < input.limit && (i < singles.length || j < occurrences.length)) {
    const takeSingle = j >= occurrences.length || (i < singles.length && order(singles[i]!, occurrences[j]!) <= 0);
    const text = takeSingle ? singles[i]!.text : occurrenceListItemJson(occurrences[j]!.series, occurrences[j]!.occurrence);
    bytes += Buffer.byteLength(text) + 1;
    if (texts.length > 0 && input.itemBytes !== undefined && bytes > input.itemBytes) break;
    texts.push(text);
    if (takeSingle) i++;
    else j++;
  }
  const hasMore = texts.length < singles.length + occurrences.length || input.singlesHaveMore || !input.occurrencesExhausted;
  return { itemsJson: `[${texts.join(",")}]`, hasMore };
}
