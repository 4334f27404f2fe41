import type { Attendee, AttendeeResponse } from "@sched/proto";
import { formatTimestamp } from "./timing.js";

/**
 * An answer as kept: a given one with its time, or `needsAction` with none,
 * which an occurrence keeps when its own time changed, so that it asks again
 * instead of taking the series' answer (docs/recurrence.md).
 */
interface KeptAnswer {
  response: AttendeeResponse;
  respondedAt: Date | null;
}

/** Answers by participant e-mail (lower-cased); a participant missing here has not answered. */
export type Answers = Readonly<Record<string, KeptAnswer>>;

/** One participant's own answer to one occurrence of a series. */
export interface OccurrenceAnswer extends KeptAnswer {
  seriesId: string;
  originalStart: Date;
  email: string;
}

/** What each participant answered: their answer, else `needsAction`, in the order of `participants`. */
export function attendeesOf(participants: readonly string[], answers: Answers): Attendee[] {
  return participants.map((email) => {
    const answer = answers[email];
    return { email, response: answer?.response ?? "needsAction", respondedAt: answer?.respondedAt ? formatTimestamp(answer.respondedAt) : null };
  });
}

/** An occurrence's answers: each participant's own answer to it, else their answer to the series. */
export function occurrenceAnswers(seriesAnswers: Answers, own: Answers | undefined): Answers {
  return own ? { ...seriesAnswers, ...own } : seriesAnswers;
}

/** The key of an occurrence among answers of many series. */
const keyOf = (seriesId: string, originalStart: Date) => `${seriesId} ${originalStart.getTime()}`;

/** Own answers grouped by occurrence, for `ownAnswersOf`. */
export type AnswersByOccurrence = ReadonlyMap<string, Answers>;

export function groupAnswers(rows: readonly OccurrenceAnswer[]): AnswersByOccurrence {
  const out = new Map<string, Record<string, KeptAnswer>>();
  for (const row of rows) {
    const key = keyOf(row.seriesId, row.originalStart);
    const answers = out.get(key) ?? {};
    answers[row.email] = { response: row.response, respondedAt: row.respondedAt };
    out.set(key, answers);
  }
  return out;
}

export function ownAnswersOf(grouped: AnswersByOccurrence, occurrence: { seriesId: string; originalStart: Date }): Answers | undefined {
  return grouped.get(keyOf(occurrence.seriesId, occurrence.originalStart));
}

/** Whether a participant's answer takes the meeting out of their busy time. */
export function declined(answers: Answers, email: string): boolean {
  return answers[email]?.response === "declined";
}

/** An occurrence whose own time changed asks every participant again: `needsAction` of its own, over any series answer. */
export function askAgain(seriesId: string, occurrence: { originalStart: Date; participants: readonly string[] }): OccurrenceAnswer[] {
  return occurrence.participants.map((email) => ({ seriesId, originalStart: occurrence.originalStart, email, response: "needsAction", respondedAt: null }));
}
