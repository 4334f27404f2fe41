/** What ranking needs to know of an instant on one person's clock. */
export interface LocalMoment {
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
  /** Minutes after local midnight. */
  minuteOfDay: number;
  /** Days since 1970-01-01 on the local calendar: equal for instants on the same local date. */
  dayNumber: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * Reads instants on a zone's clock. Intl is slow for thousands of calls, and
 * offsets change only a few times a year, so the offset is looked up once an
 * hour of time and reused.
 */
export class ZoneReader {
  private static readonly readers = new Map<string, ZoneReader>();
  private readonly offsets = new Map<number, number>();
  private readonly format: Intl.DateTimeFormat;

  private constructor(zone: string) {
    this.format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
    });
  }

  /** An unknown zone reads as UTC rather than failing a ranking. */
  static of(zone: string): ZoneReader {
    let reader = ZoneReader.readers.get(zone);
    if (!reader) {
      try {
        reader = new ZoneReader(zone);
      } catch {
        reader = ZoneReader.of("UTC");
      }
      ZoneReader.readers.set(zone, reader);
    }
    return reader;
  }

  read(epochMs: number): LocalMoment {
    const wall = epochMs + this.offsetAt(epochMs);
    const dayNumber = Math.floor(wall / DAY_MS);
    // 1970-01-01 was a Thursday (3 with Monday = 0).
    return { weekday: (((dayNumber + 3) % 7) + 7) % 7, minuteOfDay: Math.floor((wall - dayNumber * DAY_MS) / 60_000), dayNumber };
  }

  /** Milliseconds to add to UTC for the wall clock, valid for the whole hour containing the instant (zones shift on whole quarter hours at most). */
  private offsetAt(epochMs: number): number {
    const hour = Math.floor(epochMs / HOUR_MS);
    let offset = this.offsets.get(hour);
    if (offset === undefined) {
      const parts = this.format.formatToParts(new Date(hour * HOUR_MS));
      const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
      const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"));
      offset = wall - hour * HOUR_MS;
      // About two years of hours per zone; a long-running process must not grow without end.
      if (this.offsets.size > 20_000) this.offsets.clear();
      this.offsets.set(hour, offset);
    }
    return offset;
  }
}

export const WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;
