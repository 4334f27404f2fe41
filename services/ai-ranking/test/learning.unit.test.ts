import { seededRandom as random } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { keptSpanAfter, learnChanges, learnWhole, patternsAfter, planRelearning, windowAt, type Learned } from "../src/domain/learning.js";
import { HISTORY_DAYS, learnPatterns, spanOf, type HistoryMeeting } from "../src/domain/patterns.js";
import { quantileOf, sumTallies, type Tally } from "../src/domain/tally.js";
import { learnPatternsByList } from "./listPatterns.js";
import { DAY, HOUR, MIN, MONDAY } from "./people.js";

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "America/Santiago", "Asia/Kolkata"];

/** A meeting around `at`: starts on the quarter hour or off it, common and odd lengths, scheduled ahead or after. */
function randomMeeting(next: () => number, at: number, spreadDays: number): HistoryMeeting {
  const start = at + Math.floor((next() - 0.5) * spreadDays * DAY / (15 * MIN)) * 15 * MIN + (next() < 0.2 ? Math.floor(next() * 900) * 1000 : 0);
  const durationMinutes = [15, 30, 30, 45, 60, 60, 90, 7][Math.floor(next() * 8)]!;
  return { start, durationMinutes, scheduledAt: start - Math.floor((next() * 25 - 3) * DAY) - Math.floor(next() * DAY) };
}

describe("quantileOf", () => {
  it("is the nearest-rank quantile of the counted values", () => {
    const values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
    const counts: Record<string, number> = {};
    for (const v of values) counts[String(v)] = (counts[String(v)] ?? 0) + 1;
    const sorted = [...values].sort((a, b) => a - b);
    for (const q of [0.1, 0.2, 0.5, 0.9, 1]) expect(quantileOf(counts, q)).toBe(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
    expect(quantileOf({}, 0.5)).toBeNull();
  });
});

describe("learnPatterns over day tallies", () => {
  it("learns what learning from the kept and sorted lists learns, over random histories in many zones", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const next = random(seed);
      const zone = ZONES[seed % ZONES.length]!;
      const count = Math.floor(next() * 120);
      const history = Array.from({ length: count }, () => randomMeeting(next, MONDAY, 100));
      expect(learnPatterns(history, zone), `seed ${seed}`).toEqual(learnPatternsByList(history, zone));
    }
  });
});

/** What the database keeps, held in memory: relearning's reads and writes, done as relearning does them. */
class KeptLearning {
  learned: Learned | null = null;
  readonly days = new Map<number, Tally>();

  relearn(history: ReadonlyMap<string, HistoryMeeting>, zone: string, now: number, touched: readonly number[]) {
    const plan = planRelearning(this.learned, zone, now, touched);
    const inWindow = [...history.values()].filter((m) => m.start >= plan.since);
    let relearned;
    // As the database's read gives it: the kept days the plan neither recounts nor takes off, before the writes.
    let untouched = null;
    if (plan.full || !this.learned) {
      this.days.clear();
      relearned = learnWhole(inWindow, zone, plan.firstFullDay);
    } else {
      const kept = new Map([...this.days].filter(([day]) => day < plan.firstFullDay || plan.daysToRecount.includes(day)));
      untouched = spanOf([...this.days.keys()].filter((day) => day >= plan.firstFullDay && !plan.daysToRecount.includes(day)));
      const read = inWindow.filter((m) => plan.ranges.some((r) => m.start >= r.from && m.start < r.to));
      relearned = learnChanges(plan, this.learned, kept, read);
    }
    for (const day of relearned.remove) this.days.delete(day);
    for (const [day, tally] of relearned.write) this.days.set(day, tally);
    this.learned = relearned.learned;
    const span = keptSpanAfter(relearned, untouched);
    expect(span, "the span told from the read and the writes is the kept days' after the writes").toEqual(spanOf([...this.days.keys()].filter((d) => d >= plan.firstFullDay)));
    return { plan, patterns: patternsAfter(relearned, span), inWindow };
  }
}

describe("incremental relearning", () => {
  it("learns what a full relearning learns after every run, over random changes, a moving window and zone changes", () => {
    for (let seed = 1; seed <= 25; seed++) {
      const next = random(seed);
      let zone = ZONES[seed % ZONES.length]!;
      let now = MONDAY;
      const history = new Map<string, HistoryMeeting>();
      // A history reaching past the window, so the window's edge moves through it.
      for (let i = 0; i < 150; i++) history.set(`m${i}`, randomMeeting(next, now - 90 * DAY, 2 * (HISTORY_DAYS + 20)));
      let ids = history.size;
      const kept = new KeptLearning();
      let fullRuns = 0;
      for (let run = 0; run < 40; run++) {
        const touched: number[] = [];
        for (let change = Math.floor(next() * 6); change > 0; change--) {
          const pick = [...history.keys()][Math.floor(next() * history.size)];
          const roll = next();
          if (roll < 0.45 || pick === undefined) {
            const added = randomMeeting(next, now + 20 * DAY, 60);
            history.set(`m${ids++}`, added);
            touched.push(added.start);
          } else if (roll < 0.75) {
            const old = history.get(pick)!;
            const moved = { ...old, start: old.start + Math.floor((next() - 0.5) * 10 * DAY / HOUR) * HOUR, durationMinutes: next() < 0.3 ? 45 : old.durationMinutes };
            history.set(pick, moved);
            touched.push(old.start, moved.start);
          } else {
            touched.push(history.get(pick)!.start);
            history.delete(pick);
          }
        }
        if (next() < 0.05) zone = ZONES[Math.floor(next() * ZONES.length)]!;
        const { plan, patterns, inWindow } = kept.relearn(history, zone, now, touched);
        if (plan.full) fullRuns++;
        expect(patterns, `seed ${seed}, run ${run}`).toEqual(learnPatterns(inWindow, zone));
        expect(kept.learned!.totals, `seed ${seed}, run ${run}: the totals are the sum of the kept days`).toEqual(sumTallies(kept.days.values()));
        now += Math.floor(next() * 3 * DAY) + Math.floor(next() * DAY);
      }
      // The first run, and one per zone change at most: the rest were incremental.
      expect(fullRuns).toBeLessThan(10);
    }
  });

  it("starts over when nothing is kept, the zone changed or the clock went back, and otherwise counts only the touched days", () => {
    const now = MONDAY + 200 * DAY;
    const { firstFullDay } = windowAt(now, "UTC");
    const learned: Learned = { zone: "UTC", firstFullDay, totals: sumTallies([]) };
    expect(planRelearning(null, "UTC", now, []).full).toBe(true);
    expect(planRelearning(learned, "Europe/Berlin", now, []).full).toBe(true);
    expect(planRelearning({ ...learned, firstFullDay: firstFullDay + 1 }, "UTC", now, []).full).toBe(true);
    const plan = planRelearning(learned, "UTC", now + DAY, [MONDAY + 190 * DAY + HOUR, MONDAY + 190 * DAY + 2 * HOUR, MONDAY + 10 * DAY]);
    expect(plan).toMatchObject({ full: false, firstFullDay: firstFullDay + 1, daysToRecount: [(MONDAY + 190 * DAY) / DAY] });
  });
});
