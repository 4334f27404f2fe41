import { DateTime } from "luxon";
import { MIN, type SyntheticPerson } from "./world.js";

/** A clusterer's slot this close to one of their meetings of the same day is next to it. */
const CLOSE_MINUTES = 30;

/**
 * How much a slot suits a person by their hidden preferences, 0 to 3: a
 * favourite day (1), inside favourite hours (1), within the daily cap (0.5),
 * the buffer kept (0.5; for those who cluster, lying within 30 minutes of
 * another of their meetings that day instead). A day they never meet on, or
 * a slot outside their working hours, is 0 whatever else. Read with luxon, apart from the ranker's own clock.
 */
function personRelevance(person: SyntheticPerson, slot: { start: number; end: number; withinWorkingHours?: readonly string[] }): number {
  if (slot.withinWorkingHours && !slot.withinWorkingHours.includes(person.userId)) return 0;
  const local = DateTime.fromMillis(slot.start, { zone: person.zone });
  const localEnd = DateTime.fromMillis(slot.end, { zone: person.zone });
  const { hidden } = person;
  const favouriteDay = hidden.favouriteDays.includes(local.weekday - 1);
  const startMinute = local.hour * 60 + local.minute;
  const endMinute = localEnd.hour * 60 + localEnd.minute || 24 * 60;
  const favouriteHours = startMinute >= hidden.favouriteHours.from * 60 && endMinute <= hidden.favouriteHours.to * 60;
  if (local.weekday - 1 === hidden.avoidedDay) return 0;
  const sameDayMeetings = person.upcoming.filter((m) => DateTime.fromMillis(m.start, { zone: person.zone }).hasSame(local, "day"));
  const gapTo = (m: { start: number; end: number }) => (m.start >= slot.end ? m.start - slot.end : slot.start - m.end);
  const gap = Math.min(Infinity, ...person.upcoming.map(gapTo));
  const spacing = hidden.clusters ? sameDayMeetings.some((m) => gapTo(m) <= CLOSE_MINUTES * MIN) : gap >= hidden.bufferMinutes * MIN;
  return (favouriteDay ? 1 : 0) + (favouriteHours ? 1 : 0) + (sameDayMeetings.length + 1 <= hidden.dailyCap ? 0.5 : 0) + (spacing ? 0.5 : 0);
}

/** A group's relevance: the mean over its people. */
export function groupRelevance(people: readonly SyntheticPerson[], slot: { start: number; end: number; withinWorkingHours?: readonly string[] }): number {
  return people.reduce((sum, p) => sum + personRelevance(p, slot), 0) / people.length;
}

/** NDCG@k of an ordering of slots whose relevances are known, with gain 2^rel − 1. */
export function ndcgAt(k: number, ranked: readonly number[], all: readonly number[]): number {
  const dcg = (rels: readonly number[]) => rels.slice(0, k).reduce((sum, rel, i) => sum + (2 ** rel - 1) / Math.log2(i + 2), 0);
  const ideal = dcg([...all].sort((a, b) => b - a));
  return ideal === 0 ? 1 : dcg(ranked) / ideal;
}
