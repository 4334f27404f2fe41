import { IANAZone } from "luxon";
import { DAY_MS, MINUTE_MS, dateOfWall, wallMidnight, type LocalDate } from "./calendar.js";

/**
 * Conversions between instants and one zone's wall clock.
 *
 * Offsets come from luxon's IANAZone (the platform's tz database). Asking it costs
 * ~10 µs a call, too slow for a recommendation that converts thousands of
 * instants, so each zone keeps the offsets of every UTC month it has seen as a
 * short table of transitions. Zone rules do not change while the process runs,
 * so the tables never go stale. A month's table samples the offset once a day
 * and bisects to the second where two samples differ: it assumes at most one
 * offset change within any 24 hours, which holds for every zone in the tz
 * database since the 1970s.
 *
 * Wall-clock time is handled as "wall milliseconds": the epoch value the same
 * clock reading would have in UTC (see calendar.ts).
 *
 * Local → instant rule, used everywhere in this service:
 * - a reading that happens once maps to that instant;
 * - a reading inside a skipped hour (spring forward) moves forward by the length
 *   of the gap, as luxon does: 02:30 in Berlin on 2026-03-29 is 03:30 CEST;
 * - a reading inside a repeated hour (fall back) takes the FIRST occurrence:
 *   02:30 in Berlin on 2026-10-25 is 02:30 CEST (00:30Z). luxon itself picks the
 *   occurrence whose offset matches the current date's offset, so its answer
 *   would depend on the season the server runs in; this rule does not.
 */
export class ZoneClock {
  private static readonly clocks = new Map<string, ZoneClock>();

  /** The clock of an IANA zone name; throws RangeError for an unknown zone. */
  static of(zone: string): ZoneClock {
    let clock = ZoneClock.clocks.get(zone);
    if (!clock) {
      if (!isValidTimeZone(zone)) throw new RangeError(`unknown time zone: ${zone}`);
      clock = new ZoneClock(zone, IANAZone.create(zone));
      ZoneClock.clocks.set(zone, clock);
    }
    return clock;
  }

  private readonly months = new Map<number, MonthTable>();
  /** Most lookups fall in the month of the previous one. */
  private lastTable: MonthTable | undefined;

  private constructor(
    readonly zone: string,
    private readonly luxonZone: IANAZone,
  ) {}

  /** UTC offset at the instant, in milliseconds (positive east of Greenwich). */
  offsetAt(instant: number): number {
    const table = this.monthTable(instant);
    let i = table.starts.length - 1;
    while (i > 0 && table.starts[i]! > instant) i--;
    return table.offsets[i]!;
  }

  toWall(instant: number): number {
    return instant + this.offsetAt(instant);
  }

  /** The instant a wall-clock reading stands for, by the rule in the header comment. */
  fromWall(wall: number): number {
    const before = this.offsetAt(wall - DAY_MS);
    const after = this.offsetAt(wall + DAY_MS);
    const early = wall - Math.max(before, after);
    const late = wall - Math.min(before, after);
    const earlyFits = this.offsetAt(early) === Math.max(before, after);
    const lateFits = this.offsetAt(late) === Math.min(before, after);
    if (earlyFits) return early;
    if (lateFits) return late;
    // Neither offset reproduces the reading: it lies in a gap. Reading it with the
    // offset in force before the gap lands the same distance past the gap's end.
    return wall - before;
  }

  localDateOf(instant: number): LocalDate {
    return dateOfWall(this.toWall(instant));
  }

  /** The instant the local date begins (its first existing moment when midnight is skipped). */
  startOfDay(date: LocalDate): number {
    return this.fromWall(wallMidnight(date));
  }

  /** The instant of a local date and minute of the day (0–1439). */
  at(date: LocalDate, minuteOfDay: number): number {
    return this.fromWall(wallMidnight(date) + minuteOfDay * MINUTE_MS);
  }

  /**
   * Pieces of [start, end) on which the offset is constant, in order.
   * Used to lay a grid on the local clock without asking for each point's offset.
   */
  constantOffsetPieces(start: number, end: number): Array<{ start: number; end: number; offset: number }> {
    const pieces: Array<{ start: number; end: number; offset: number }> = [];
    let cursor = start;
    while (cursor < end) {
      const table = this.monthTable(cursor);
      let i = table.starts.length - 1;
      while (i > 0 && table.starts[i]! > cursor) i--;
      const nextChange = i + 1 < table.starts.length ? table.starts[i + 1]! : table.end;
      const pieceEnd = Math.min(end, nextChange);
      const offset = table.offsets[i]!;
      const last = pieces[pieces.length - 1];
      if (last && last.offset === offset && last.end === cursor) last.end = pieceEnd;
      else pieces.push({ start: cursor, end: pieceEnd, offset });
      cursor = pieceEnd;
    }
    return pieces;
  }

  private monthTable(instant: number): MonthTable {
    const last = this.lastTable;
    if (last && instant >= last.starts[0]! && instant < last.end) return last;
    const d = new Date(instant);
    const key = d.getUTCFullYear() * 12 + d.getUTCMonth();
    let table = this.months.get(key);
    if (!table) {
      table = this.buildMonth(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
      if (this.months.size >= MAX_MONTHS_PER_ZONE) this.months.clear();
      this.months.set(key, table);
    }
    this.lastTable = table;
    return table;
  }

  private luxonOffset(instant: number): number {
    return this.luxonZone.offset(instant) * MINUTE_MS;
  }

  private buildMonth(monthStart: number, monthEnd: number): MonthTable {
    const starts = [monthStart];
    const offsets = [this.luxonOffset(monthStart)];
    let previous = monthStart;
    let previousOffset = offsets[0]!;
    while (previous < monthEnd) {
      const sample = Math.min(previous + DAY_MS, monthEnd);
      const sampleOffset = this.luxonOffset(sample);
      if (sampleOffset !== previousOffset) {
        const change = this.firstChange(previous, sample, previousOffset);
        if (change < monthEnd) {
          starts.push(change);
          offsets.push(sampleOffset);
        }
      }
      previous = sample;
      previousOffset = sampleOffset;
    }
    return { starts, offsets, end: monthEnd };
  }

  /** The first whole second in (low, high] whose offset differs from `lowOffset`. */
  private firstChange(low: number, high: number, lowOffset: number): number {
    let lo = low;
    let hi = high;
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (this.luxonOffset(mid) === lowOffset) lo = mid;
      else hi = mid;
    }
    return hi;
  }
}

interface MonthTable {
  /** Instants at which an offset starts to apply; the first is the month's start. */
  starts: number[];
  offsets: number[];
  end: number;
}

/** Plenty for any realistic horizon; the bound only keeps a runaway caller from growing memory. */
const MAX_MONTHS_PER_ZONE = 2400;

export function isValidTimeZone(zone: string): boolean {
  return typeof zone === "string" && zone.length > 0 && IANAZone.isValidZone(zone);
}
