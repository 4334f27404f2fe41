import type { PersonFit, RankedPerson } from "../../domain/fit.js";
import { HOURS_A_WEEK } from "../../domain/patterns.js";
import { WEEKDAY_NAMES, ZoneReader } from "../../domain/localTime.js";
import type { ScoredSlot } from "../../domain/rank.js";

/**
 * What the language model is told: people as labels (P1, P2, …), their
 * learned habits and stated preferences, and each slot on each person's own
 * clock with the facts the statistical model saw. It holds no e-mail address,
 * no name and no meeting title: nothing the model sees identifies anyone.
 */
export interface RankingSummary {
  people: Array<{
    label: string;
    isCaller: boolean;
    learned: {
      meetings: number;
      usualHours: string[];
      usualMeetingsPerDay: number | null;
      usualDurationMinutes: number | null;
      usualGapMinutes: number | null;
      usualLeadDays: number | null;
      /** Share of a day's later meetings they put back to back; null when unknown. */
      backToBackShare: number | null;
      neverMeetsOn: string[];
    };
    stated: {
      preferredTimes: Array<{ start: string; end: string; days?: string[] }>;
      avoidDays: string[];
      bufferMinutes: number | null;
      maxMeetingsPerDay: number | null;
    };
  }>;
  slots: Array<{
    id: string;
    statisticalScore: number;
    perPerson: Record<string, { local: string; meetingsAlreadyThatDay: number; minutesToNearestMeeting: number | null }>;
  }>;
}

export const labelOf = (index: number): string => `P${index + 1}`;
export const slotIdOf = (index: number): string => `S${index + 1}`;

export function summarize(slots: readonly ScoredSlot[], people: readonly RankedPerson[]): RankingSummary {
  return {
    people: people.map((p, i) => ({
      label: labelOf(i),
      isCaller: p.isCaller,
      learned: {
        meetings: p.patterns.meetings,
        usualHours: topHours(p.patterns.hourly),
        usualMeetingsPerDay: p.patterns.meetings > 0 ? p.patterns.dailyLoad.usual : null,
        usualDurationMinutes: p.patterns.meetings > 0 ? p.patterns.usualDurationMinutes : null,
        usualGapMinutes: p.patterns.usualGapMinutes,
        usualLeadDays: p.patterns.usualLeadDays,
        backToBackShare: p.patterns.clustering,
        neverMeetsOn: p.patterns.avoidedWeekdays.map((d) => WEEKDAY_NAMES[d]!),
      },
      stated: {
        preferredTimes: p.preferences.preferredTimes.map((t) => ({ start: t.start, end: t.end, ...(t.days ? { days: [...t.days] } : {}) })),
        avoidDays: [...p.preferences.avoidDays],
        bufferMinutes: p.preferences.bufferMinutes,
        maxMeetingsPerDay: p.preferences.maxMeetingsPerDay,
      },
    })),
    slots: slots.map((s, i) => ({
      id: slotIdOf(i),
      statisticalScore: Math.round(s.score * 1000) / 1000,
      perPerson: Object.fromEntries(people.map((p, j) => [labelOf(j), slotFacts(s, p, s.fits[j]!)])),
    })),
  };
}

function slotFacts(slot: ScoredSlot, person: RankedPerson, fit: PersonFit) {
  const clock = ZoneReader.of(person.zone);
  const from = clock.read(slot.start);
  const to = clock.read(slot.end);
  return {
    local: `${WEEKDAY_NAMES[from.weekday]} ${hhmm(from.minuteOfDay)}-${hhmm(to.minuteOfDay)}`,
    meetingsAlreadyThatDay: fit.sameDay,
    minutesToNearestMeeting: Number.isFinite(fit.gapMinutes) ? Math.round(fit.gapMinutes) : null,
  };
}

/** The five weekday-hours they meet in most, e.g. "Tuesday 10:00" (6 meetings). */
function topHours(hourly: readonly number[]): string[] {
  return Array.from({ length: HOURS_A_WEEK }, (_, i) => i)
    .filter((i) => hourly[i]! > 0)
    .sort((a, b) => hourly[b]! - hourly[a]! || a - b)
    .slice(0, 5)
    .map((i) => `${WEEKDAY_NAMES[Math.floor(i / 24)]} ${hhmm((i % 24) * 60)} (${hourly[i]} meetings)`);
}

function hhmm(minuteOfDay: number): string {
  return `${String(Math.floor(minuteOfDay / 60)).padStart(2, "0")}:${String(minuteOfDay % 60).padStart(2, "0")}`;
}
