import { dateOfWall, DAY_MS, isValidTimeZone, MINUTE_MS, ZoneClock } from "@sched/time";

/** No zone has moved its clock by more than this at once since the 1970s (two hours, double summer time). */
const LARGEST_CLOCK_CHANGE_MS = 2 * 3_600_000;

/** What ranking needs to know of an instant on one person's clock. */
export interface LocalMoment {
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
  /** Minutes after local midnight. */
  minuteOfDay: number;
  /** Days since 1970-01-01 on the local calendar: equal for instants on the same local date. */
  dayNumber: number;
}

/**
 * Reads instants on a zone's clock, through the zone clock availability uses
 * too (offset tables per month, exact to the second at every change).
 */
export class ZoneReader {
  private static readonly readers = new Map<string, ZoneReader>();

  private constructor(private readonly clock: ZoneClock) {}

  /** An unknown zone reads as UTC rather than failing a ranking. */
  static of(zone: string): ZoneReader {
    let reader = ZoneReader.readers.get(zone);
    if (!reader) {
      reader = isValidTimeZone(zone) ? new ZoneReader(ZoneClock.of(zone)) : ZoneReader.of("UTC");
      ZoneReader.readers.set(zone, reader);
    }
    return reader;
  }

  /**
   * Instants [from, to) holding every instant that reads as this local day (read's dayNumber): from
   * its first moment to the next day's first (ZoneClock.startOfDay), exactly; except where a clock
   * turned back within the next day's first hours, by more than they had run, reads this day again
   * after the next began (St John's, Moncton and Goose Bay turned back at 00:01 until 2011): the
   * range then runs on to the end of that repeat.
   */
  dayRange(dayNumber: number): { from: number; to: number } {
    const startOf = (day: number) => this.clock.startOfDay(dateOfWall(day * DAY_MS));
    const next = startOf(dayNumber + 1);
    const goesBack = this.clock.offsetAt(next) - this.clock.offsetAt(next + LARGEST_CLOCK_CHANGE_MS);
    const readAgain = goesBack > 0 && this.read(next + goesBack - 1).dayNumber === dayNumber;
    return { from: startOf(dayNumber), to: readAgain ? next + goesBack : next };
  }

  read(epochMs: number): LocalMoment {
    const wall = this.clock.toWall(epochMs);
    const dayNumber = Math.floor(wall / DAY_MS);
    // 1970-01-01 was a Thursday (3 with Monday = 0).
    return { weekday: (((dayNumber + 3) % 7) + 7) % 7, minuteOfDay: Math.floor((wall - dayNumber * DAY_MS) / MINUTE_MS), dayNumber };
  }
}

export const WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;
