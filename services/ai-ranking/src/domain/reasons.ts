import type { PersonFit, PersonView } from "./fit.js";
import { WEEKDAY_NAMES } from "./localTime.js";

/** Habit at or above this is "usual"; at or below the low mark, "unusual". */
export const USUAL_HABIT = 0.6;
const UNUSUAL_HABIT = 0.25;

interface Scored {
  start: number;
  fits: readonly PersonFit[];
}

/**
 * One sentence naming the patterns and preferences behind a slot's score,
 * strongest first: broken stated preferences, then stated or learned times,
 * then the day's load, then buffers. Times are read on the caller's clock.
 */
export function reasonFor(slot: Scored, views: readonly PersonView[]): string {
  const callerIndex = Math.max(0, views.findIndex((v) => v.person.isCaller));
  const local = views[callerIndex]!.clock.read(slot.start);
  const when = `${WEEKDAY_NAMES[local.weekday]} ${partOfDay(local.minuteOfDay)}s`;
  const who = (pick: (f: PersonFit) => boolean) => views.filter((_, i) => pick(slot.fits[i]!)).map((v) => v.person);

  const clauses: string[] = [];
  const avoided = who((f) => f.avoidedDay);
  if (avoided.length) clauses.push(`falls on a day ${names(avoided)} ${avoided.length === 1 && !avoided[0]!.isCaller ? "prefers" : "prefer"} to avoid`);
  const over = views.map((v, i) => ({ v, f: slot.fits[i]! })).filter(({ f }) => f.overMax);
  for (const { v, f } of over) clauses.push(`puts ${nameOf(v.person)} past ${possessive(v.person)} limit of ${f.usualLoad} meetings a day`);

  const preferred = who((f) => f.preferredTime === true);
  const notPreferred = who((f) => f.preferredTime === false);
  if (preferred.length) clauses.push(`inside the hours ${names(preferred)} ${preferred.length === 1 && !preferred[0]!.isCaller ? "prefers" : "prefer"}`);
  if (notPreferred.length) clauses.push(`outside the hours ${names(notPreferred)} ${notPreferred.length === 1 && !notPreferred[0]!.isCaller ? "prefers" : "prefer"}`);

  const usual = who((f) => f.knowsHabit && f.habit >= USUAL_HABIT && f.preferredTime === null);
  const unusual = who((f) => f.knowsHabit && f.habit <= UNUSUAL_HABIT && f.preferredTime === null);
  if (usual.length) clauses.push(`${when} are when ${names(usual)} usually ${usual.length === 1 && !usual[0]!.isCaller ? "meets" : "meet"}`);
  if (unusual.length) clauses.push(`${when} are unusual for ${names(unusual)}`);

  const loadClause = loadReason(slot.fits, views);
  if (loadClause) clauses.push(loadClause);

  const short = views.map((v, i) => ({ v, f: slot.fits[i]! })).filter(({ f }) => f.shortBuffer);
  for (const { v, f } of short) {
    clauses.push(`leaves ${nameOf(v.person)} only ${Math.floor(f.gapMinutes)} of the ${f.wantedGapMinutes} minutes ${pronoun(v.person)} want between meetings`);
  }

  if (clauses.length === 0) {
    return "No meeting history or stated preferences to learn from yet; ranked by how light the day is and the room left between meetings.";
  }
  const sentence = clauses.join("; ");
  const text = `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`;
  return text.length <= 500 ? text : `${text.slice(0, 497)}...`;
}

/** The tightest load among those whose usual load is known: what the slot does to their day. */
function loadReason(fits: readonly PersonFit[], views: readonly PersonView[]): string | null {
  let tightest: { i: number; margin: number } | null = null;
  for (let i = 0; i < fits.length; i++) {
    const f = fits[i]!;
    if (f.usualLoad === null || f.overMax) continue;
    const margin = f.usualLoad - (f.sameDay + 1);
    if (!tightest || margin < tightest.margin) tightest = { i, margin };
  }
  if (!tightest) return null;
  const person = views[tightest.i]!.person;
  const f = fits[tightest.i]!;
  const after = f.sameDay + 1;
  if (tightest.margin >= 0) {
    return `keeps ${nameOf(person)} within ${possessive(person)} usual ${f.usualLoad} meeting${f.usualLoad === 1 ? "" : "s"} that day`;
  }
  return `makes it a busier day than usual for ${nameOf(person)} (${after} meetings against a usual ${f.usualLoad})`;
}

function partOfDay(minuteOfDay: number): string {
  if (minuteOfDay < 12 * 60) return "morning";
  if (minuteOfDay < 17 * 60) return "afternoon";
  return "evening";
}

interface Named {
  name: string;
  isCaller: boolean;
}

function nameOf(p: Named): string {
  return p.isCaller ? "you" : p.name;
}

function possessive(p: Named): string {
  return p.isCaller ? "your" : "their";
}

function pronoun(p: Named): string {
  return p.isCaller ? "you" : "they";
}

/** "you", "Ana", "you and Ana", "Ana, Bo and you"; long lists are shortened. */
function names(people: readonly Named[]): string {
  const list = people.map(nameOf);
  if (list.length > 4) return `${list.slice(0, 3).join(", ")} and ${list.length - 3} others`;
  return list.length <= 1 ? (list[0] ?? "") : `${list.slice(0, -1).join(", ")} and ${list.at(-1)}`;
}
