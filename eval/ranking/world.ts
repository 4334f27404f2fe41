/**
 * Synthetic people for the ranking evaluation. Each has hidden preferences
 * (favourite weekdays, a favourite stretch of hours, a daily cap, a buffer)
 * that shaped months of meeting history and shape their coming weeks; the
 * models see only the meetings, never the preferences.
 */
import type { HistoryMeeting } from "../../services/ai-ranking/src/domain/patterns.js";

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

export { seededRandom as random } from "@sched/testing";

interface HiddenPreferences {
  /** 0 = Monday … 4 = Friday. */
  favouriteDays: number[];
  /** Local hours [from, to) they like meetings in. */
  favouriteHours: { from: number; to: number };
  dailyCap: number;
  /** 0 for those who cluster. */
  bufferMinutes: number;
  /** Puts meetings back to back on few days rather than spreading them with room between. */
  clusters: boolean;
  /** A working weekday they never meet on (0 = Monday), or null. */
  avoidedDay: number | null;
}

export interface SyntheticPerson {
  userId: string;
  zone: string;
  hidden: HiddenPreferences;
  history: HistoryMeeting[];
  /** Meetings already in the coming weeks (busy time for both models). */
  upcoming: Array<{ start: number; end: number }>;
}

const ZONES = ["UTC", "Europe/Berlin", "Europe/London", "America/New_York"];
/** Shares of people who cluster their meetings, and who never meet on one weekday. */
const SHARE = { clusterers: 0.25, avoiders: 0.3 };
/** How often a meeting lands in their favourite hours, and on a favourite day. */
const HABIT_STRENGTH = { hours: 0.8, days: 0.8 };

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!;
}

export function makePerson(rnd: () => number, index: number, zone: string = pick(rnd, ZONES)): SyntheticPerson {
  const days = [0, 1, 2, 3, 4].sort(() => rnd() - 0.5).slice(0, 2 + Math.floor(rnd() * 2));
  const from = 9 + Math.floor(rnd() * 6);
  const clusters = rnd() < SHARE.clusterers;
  const otherDays = [0, 1, 2, 3, 4].filter((d) => !days.includes(d));
  const hidden: HiddenPreferences = {
    favouriteDays: days.sort(),
    favouriteHours: { from, to: Math.min(17, from + 2 + Math.floor(rnd() * 2)) },
    // Clusterers fill their days: a cap of 3–5.
    dailyCap: clusters ? 3 + Math.floor(rnd() * 3) : 2 + Math.floor(rnd() * 4),
    bufferMinutes: clusters ? 0 : pick(rnd, [0, 15, 30, 45]),
    clusters,
    avoidedDay: rnd() < SHARE.avoiders ? pick(rnd, otherDays) : null,
  };
  return { userId: `usr_${index}`, zone, hidden, history: [], upcoming: [] };
}

/** Local midnight of a UTC date in a zone, as epoch ms (good to the hour; the eval avoids DST weeks). */
export function localMidnight(dateUtcMidnight: number, zone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", hour: "numeric", day: "numeric" }).formatToParts(new Date(dateUtcMidnight + 12 * HOUR));
  const hour = Number(parts.find((p) => p.type === "hour")!.value);
  return dateUtcMidnight - (hour - 12) * HOUR;
}

/**
 * Fills `days` working days from `firstMonday` (UTC) with meetings the hidden
 * preferences would make: on favourite days up to the cap, elsewhere fewer;
 * mostly in favourite hours; never closer than the buffer to another.
 */
export function meetingsFor(rnd: () => number, person: SyntheticPerson, firstMonday: number, weeks: number): HistoryMeeting[] {
  const { hidden } = person;
  const meetings: HistoryMeeting[] = [];
  for (let w = 0; w < weeks; w++) {
    for (let d = 0; d < 5; d++) {
      const midnight = localMidnight(firstMonday + (w * 7 + d) * DAY, person.zone);
      const favourite = hidden.favouriteDays.includes(d);
      const wanted = d === hidden.avoidedDay ? 0 : favourite ? 1 + Math.floor(rnd() * hidden.dailyCap) : rnd() < (1 - HABIT_STRENGTH.days) * 2 ? 1 : 0;
      const day: Array<{ start: number; end: number }> = [];
      for (let attempt = 0; attempt < 30 && day.length < wanted; attempt++) {
        const inFavourite = rnd() < HABIT_STRENGTH.hours;
        const range = inFavourite ? hidden.favouriteHours : { from: 9, to: 17 };
        const durationMinutes = pick(rnd, [30, 60]);
        const latest = range.to * 60 - durationMinutes;
        if (latest < range.from * 60) continue;
        let start = midnight + (range.from * 60 + 30 * Math.floor(rnd() * ((latest - range.from * 60) / 30 + 1))) * MIN;
        if (hidden.clusters && day.length > 0) {
          // Right after, or right before, one of the day's meetings.
          const next = pick(rnd, day);
          start = rnd() < 0.5 ? next.end : next.start - durationMinutes * MIN;
          if (start < midnight + 9 * HOUR || start + durationMinutes * MIN > midnight + 17 * HOUR) continue;
        }
        const end = start + durationMinutes * MIN;
        const buffer = hidden.bufferMinutes * MIN;
        if (day.some((m) => start < m.end + buffer && m.start < end + buffer)) continue;
        day.push({ start, end });
        meetings.push({ start, durationMinutes, scheduledAt: start - (1 + Math.floor(rnd() * 7)) * DAY });
      }
    }
  }
  return meetings;
}
