/** How many times each value was seen; keys are numbers written as JSON keys. */
export type Counts = Record<string, number>;

/**
 * What learnPatterns counts over a set of local days: everything it derives
 * is a sum over days (a day's gaps and load depend on that day's meetings
 * alone), so a person's tally is the sum of their days' tallies, and a change
 * to one day takes that day's old tally off and adds its new one.
 *
 * Quantiles need only counts per value: learnPatterns rounds a quantile to a
 * whole number, and rounding keeps order, so the rounded k-th value is the
 * k-th of the rounded values. Lead days and gaps are counted rounded.
 */
export interface Tally {
  meetings: number;
  /** Meetings per weekday × 24 + hour (Monday = 0). */
  hourly: Counts;
  /** Meetings per length in minutes. */
  durations: Counts;
  /** Meetings scheduled ahead, per whole days of lead (rounded). */
  leadDays: Counts;
  /** Gaps between consecutive meetings of a day, per whole minutes (rounded). */
  gaps: Counts;
  /** Gaps of at most BACK_TO_BACK_MINUTES, counted before rounding. */
  backToBack: number;
  /** Days with meetings, per how many meetings they hold. */
  loads: Counts;
}

export const emptyTally = (): Tally => ({ meetings: 0, hourly: {}, durations: {}, leadDays: {}, gaps: {}, backToBack: 0, loads: {} });

function addCounts(into: Counts, from: Counts, sign: 1 | -1): void {
  for (const [key, n] of Object.entries(from)) {
    const sum = (into[key] ?? 0) + sign * n;
    if (sum === 0) delete into[key];
    else into[key] = sum;
  }
}

/** Adds (sign 1) or takes off (sign −1) `from` in `into`, in place; a count that reaches zero is removed. */
export function addTally(into: Tally, from: Tally, sign: 1 | -1 = 1): Tally {
  into.meetings += sign * from.meetings;
  into.backToBack += sign * from.backToBack;
  for (const key of ["hourly", "durations", "leadDays", "gaps", "loads"] as const) addCounts(into[key], from[key], sign);
  return into;
}

export const sumTallies = (tallies: Iterable<Tally>): Tally => {
  const sum = emptyTally();
  for (const t of tallies) addTally(sum, t);
  return sum;
};

export const countOf = (counts: Counts, key: number): number => counts[String(key)] ?? 0;

export function bump(counts: Counts, key: number): void {
  counts[String(key)] = (counts[String(key)] ?? 0) + 1;
}

export const totalOf = (counts: Counts): number => Object.values(counts).reduce((a, b) => a + b, 0);

/** The nearest-rank quantile of counted values; null for none. */
export function quantileOf(counts: Counts, q: number): number | null {
  const values = Object.keys(counts)
    .map(Number)
    .sort((a, b) => a - b);
  const total = totalOf(counts);
  if (total === 0) return null;
  const rank = Math.min(total - 1, Math.ceil(q * total) - 1);
  let seen = 0;
  for (const v of values) {
    seen += counts[String(v)]!;
    if (seen > rank) return v;
  }
  return values[values.length - 1]!;
}
