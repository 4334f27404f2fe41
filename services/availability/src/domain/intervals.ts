import { MINUTE_MS, ZoneClock } from "@sched/time";

/** A half-open span of time [start, end) in epoch milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

export type SlotStatus = "free" | "busy";

export interface Piece extends Interval {
  status: SlotStatus;
}

/**
 * Sorted, disjoint intervals covering the same time as the input: overlapping and
 * touching intervals coalesce, empty ones vanish. The input is not modified.
 * "Merged" below means a list in this form.
 */
export function merge(intervals: readonly Interval[]): Interval[] {
  let ordered = true;
  for (let i = 1; i < intervals.length && ordered; i++) ordered = intervals[i]!.start >= intervals[i - 1]!.start;
  return ordered ? coalesceOrdered(intervals) : coalesceUnordered(intervals);
}

function coalesceOrdered(byStart: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let last: Interval | undefined;
  for (const i of byStart) {
    if (!(i.end > i.start)) continue;
    if (last && i.start <= last.end) {
      if (i.end > last.end) last.end = i.end;
    } else {
      last = { start: i.start, end: i.end };
      out.push(last);
    }
  }
  return out;
}

/**
 * Orders by start with one native sort of plain numbers, several times faster than
 * sorting objects with a comparator: each key packs the start (relative to the
 * smallest) and the interval's index into one exact integer. When the numbers do
 * not fit 53 bits (fractional milliseconds, or centuries of range times a huge
 * list), it falls back to the comparator sort.
 */
function coalesceUnordered(intervals: readonly Interval[]): Interval[] {
  const n = intervals.length;
  let min = Infinity;
  let max = -Infinity;
  let integral = true;
  for (const i of intervals) {
    if (i.start < min) min = i.start;
    if (i.start > max) max = i.start;
    integral &&= Number.isInteger(i.start);
  }
  if (!integral || (max - min + 1) * n > Number.MAX_SAFE_INTEGER) {
    return coalesceOrdered(intervals.slice().sort((a, b) => a.start - b.start));
  }
  const keys = new Float64Array(n);
  for (let k = 0; k < n; k++) keys[k] = (intervals[k]!.start - min) * n + k;
  keys.sort();
  const byStart = new Array<Interval>(n);
  for (let k = 0; k < n; k++) byStart[k] = intervals[keys[k]! % n]!;
  return coalesceOrdered(byStart);
}

/** The union of several merged lists, in time linear in their total length per level of pairing. */
export function union(lists: readonly (readonly Interval[])[]): Interval[] {
  let level: Interval[][] = lists.map((l) => l.slice());
  if (level.length === 0) return [];
  while (level.length > 1) {
    const next: Interval[][] = [];
    for (let i = 0; i < level.length; i += 2) {
      next.push(i + 1 < level.length ? unionOfTwo(level[i]!, level[i + 1]!) : level[i]!);
    }
    level = next;
  }
  return level[0]!;
}

function unionOfTwo(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const take = j >= b.length || (i < a.length && a[i]!.start <= b[j]!.start) ? a[i++]! : b[j++]!;
    const last = out[out.length - 1];
    if (last && take.start <= last.end) {
      if (take.end > last.end) last.end = take.end;
    } else {
      out.push({ start: take.start, end: take.end });
    }
  }
  return out;
}

/** The parts of merged list `from` not covered by merged list `remove`. */
export function subtract(from: readonly Interval[], remove: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let j = 0;
  for (const i of from) {
    let cursor = i.start;
    while (j < remove.length && remove[j]!.end <= cursor) j++;
    let k = j;
    while (k < remove.length && remove[k]!.start < i.end) {
      const r = remove[k]!;
      if (r.start > cursor) out.push({ start: cursor, end: r.start });
      if (r.end > cursor) cursor = r.end;
      if (cursor >= i.end) break;
      k++;
    }
    if (cursor < i.end) out.push({ start: cursor, end: i.end });
  }
  return out;
}

/** The time covered by both merged lists. */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i]!.start, b[j]!.start);
    const end = Math.min(a[i]!.end, b[j]!.end);
    if (start < end) out.push({ start, end });
    if (a[i]!.end < b[j]!.end) i++;
    else j++;
  }
  return out;
}

/** The intervals cut to the window; those outside it vanish. Order is kept. */
export function clip(intervals: readonly Interval[], window: Interval): Interval[] {
  const out: Interval[] = [];
  for (const i of intervals) {
    const start = Math.max(i.start, window.start);
    const end = Math.min(i.end, window.end);
    if (start < end) out.push({ start, end });
  }
  return out;
}

/**
 * The window cut into maximal pieces that alternate between free and busy,
 * cover it exactly and have non-zero length. Busy time in any form is accepted;
 * a merged list is used as it is.
 */
export function tile(window: Interval, busyInput: readonly Interval[]): Piece[] {
  const pieces: Piece[] = [];
  if (window.end <= window.start) return pieces;
  const busy = isMerged(busyInput) ? busyInput : merge(busyInput);
  let cursor = window.start;
  let k = firstEndingAfter(busy, window.start);
  for (; k < busy.length && busy[k]!.start < window.end; k++) {
    const b = busy[k]!;
    if (b.start > cursor) pieces.push({ start: cursor, end: b.start, status: "free" });
    const end = Math.min(b.end, window.end);
    pieces.push({ start: Math.max(b.start, cursor), end, status: "busy" });
    cursor = end;
  }
  if (cursor < window.end) pieces.push({ start: cursor, end: window.end, status: "free" });
  return pieces;
}

export function isMerged(list: readonly Interval[]): boolean {
  for (let k = 0; k < list.length; k++) {
    if (!(list[k]!.end > list[k]!.start)) return false;
    if (k > 0 && !(list[k]!.start > list[k - 1]!.end)) return false;
  }
  return true;
}

/** Index of the first interval of a merged list that ends after `instant`. */
function firstEndingAfter(merged: readonly Interval[], instant: number): number {
  let lo = 0;
  let hi = merged.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (merged[mid]!.end <= instant) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Starts s inside the window, with s + duration ≤ window end, at which the local
 * clock of `anchorZone` shows a whole multiple of `stepMinutes` (seconds zero):
 * with a 15-minute step, :00, :15, :30 and :45 local time. In a zone offset by a
 * fraction of the step from UTC (none today for 15 minutes) the grid still follows
 * the local clock. Across an offset change the grid follows the new offset.
 */
export function gridStarts(window: Interval, stepMinutes: number, durationMs: number, anchorZone: string): number[] {
  if (!(stepMinutes > 0) || !(durationMs > 0)) throw new RangeError("step and duration must be positive");
  const latest = window.end - durationMs;
  const starts: number[] = [];
  if (latest < window.start) return starts;
  const step = stepMinutes * MINUTE_MS;
  for (const piece of ZoneClock.of(anchorZone).constantOffsetPieces(window.start, latest + 1)) {
    const wallStart = piece.start + piece.offset;
    let s = Math.ceil(wallStart / step) * step - piece.offset;
    for (; s < piece.end; s += step) starts.push(s);
  }
  return starts;
}
