import type { BusyInterval } from "@sched/proto";
import { declined, occurrenceAnswers, ownAnswersOf, type AnswersByOccurrence } from "./seriesAnswers.js";
import { occurrencesIn, seesOccurrence, type ExceptionRecord, type SeriesRecord } from "./series.js";
import { durationMs } from "./timing.js";

/**
 * A user's busy time from recurring meetings over [from, to): the confirmed
 * occurrences of the series they organize, or whose occurrence lists them
 * (seesOccurrence) and they have not declined (its own answer, else their
 * answer to the series), as `[start, end)` in epoch seconds; each series
 * with its own exceptions and its occurrences' own answers.
 */
export function occurrenceBusy(
  kept: readonly { series: SeriesRecord; exceptions: readonly ExceptionRecord[]; answers: AnswersByOccurrence }[],
  user: { userId: string; email: string },
  from: Date,
  to: Date,
): BusyInterval[] {
  const email = user.email.toLowerCase();
  const viewer = { userId: user.userId, email };
  const out: BusyInterval[] = [];
  for (const { series: s, exceptions, answers } of kept) {
    const organizes = s.organizerId === user.userId;
    if (!organizes && !s.participants.includes(email) && !exceptions.some((e) => e.participants.includes(email))) continue;
    for (const o of occurrencesIn(s, exceptions, from, to)) {
      if (o.status !== "confirmed" || !seesOccurrence(s, o, viewer)) continue;
      // Without own answers to any occurrence, each one's answers are the series'.
      if (!organizes && declined(answers.size === 0 ? s.responses : occurrenceAnswers(s.responses, ownAnswersOf(answers, o)), email)) continue;
      const start = o.startTime.getTime();
      out.push([Math.floor(start / 1_000), Math.ceil((start + durationMs(o.duration)) / 1_000)]);
    }
  }
  return out;
}

/** Intervals merged where they overlap or touch, in start order. */
export function mergeIntervals(intervals: readonly BusyInterval[]): BusyInterval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: BusyInterval[] = [];
  for (const [start, end] of sorted) {
    const last = out[out.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}
