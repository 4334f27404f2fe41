import type { PersonFit, PersonView, StatedWindow } from "./fit.js";
import { WEEKDAY_NAMES } from "./localTime.js";

/** Habit at or above this is "usual"; at or below the low mark, "unusual". */
const USUAL_HABIT = 0.6;
const UNUSUAL_HABIT = 0.25;
/** Learned clustering at or above this is worth naming: calendars without the habit reach about half by chance when meetings crowd a short favourite stretch. */
const CLUSTERS = 0.75;
/** A clusterer's slot this close to another meeting is "next to" it; this far or more, "away from" them. */
const NEXT_TO_MINUTES = 30;
const AWAY_MINUTES = 120;
/** Lists longer than this name the first few and count the others. */
const LONGEST_LIST = 4;
/** Stated hours are spelled out for this many people at most; more are named only. */
const SPELLED_OUT = 2;
/** The contract's limit on a reason. */
const MAX_REASON = 500;

export type PartOfDay = "morning" | "afternoon" | "evening";

/** One thing a reason says about one person; `userId` is whom it is about. */
export type Claim =
  | { kind: "usualTime"; userId: string; weekday: number; partOfDay: PartOfDay }
  | { kind: "unusualTime"; userId: string; weekday: number; hour: number }
  | { kind: "avoidsDay"; userId: string; weekday: number; stated: boolean }
  | { kind: "statedTime" | "outsideStatedTime"; userId: string }
  | { kind: "backToBack" | "awayFromOthers"; userId: string }
  | { kind: "outsideWorkingHours" | "overMax" | "withinLoad" | "busierDay" | "shortBuffer"; userId: string };
type PlainClaimKind = Exclude<Claim["kind"], "usualTime" | "unusualTime" | "avoidsDay">;

export interface Reason {
  /** One sentence, at most 500 characters. */
  text: string;
  claims: Claim[];
}

interface Scored {
  fits: readonly PersonFit[];
}

interface Named {
  name: string;
  isCaller: boolean;
}

/**
 * One sentence naming the patterns and preferences behind a slot's score,
 * strongest first: working hours, then broken stated preferences and avoided
 * days, then stated or learned times, then clustering, the day's load and
 * buffers. Each person's times are read on their own clock; people are named
 * ("you" for the caller), verbs agree with them, and long lists are counted.
 */
export function explain(slot: Scored, views: readonly PersonView[]): Reason {
  const entries: Entry[] = views.map((v, i) => ({ person: v.person, f: slot.fits[i]! }));
  const pick = picker(entries);
  const clauses: string[] = [];
  const claims: Claim[] = [];
  const claim = claimer(claims);

  const outside = pick((f) => f.insideWorkingHours === false);
  if (outside.length) {
    const people = outside.map((e) => e.person);
    clauses.push(people.length > LONGEST_LIST ? `outside the working hours of ${list(people.map(nameOf))}` : `outside ${list(people.map(possessive))} working hours`);
    claim("outsideWorkingHours", outside);
  }

  for (const [weekday, group] of byKey(pick((f) => f.avoidedDay), (e) => e.f.weekday)) {
    const who = subject(group.map((e) => e.person));
    clauses.push(`${who.text} ${agree(who, "avoid")} ${WEEKDAY_NAMES[weekday]}s`);
    for (const e of group) claims.push({ kind: "avoidsDay", userId: e.person.userId, weekday, stated: true });
  }
  for (const [weekday, group] of byKey(pick((f) => f.neverMeetsThatDay), (e) => e.f.weekday)) {
    const who = subject(group.map((e) => e.person));
    clauses.push(`${who.text} never ${agree(who, "meet")} on ${WEEKDAY_NAMES[weekday]}s`);
    for (const e of group) claims.push({ kind: "avoidsDay", userId: e.person.userId, weekday, stated: false });
  }

  for (const { person, f } of pick((f) => f.overMax)) {
    clauses.push(`puts ${nameOf(person)} past ${person.isCaller ? "your" : "their"} limit of ${count(f.usualLoad!, "meeting")} a day`);
    claim("overMax", [{ person }]);
  }

  const preferred = pick((f) => f.preferredTime === true);
  if (preferred.length) {
    clauses.push(`inside ${statedList(preferred)}`);
    claim("statedTime", preferred);
  }
  const notPreferred = pick((f) => f.preferredTime === false);
  if (notPreferred.length) {
    clauses.push(`outside ${statedList(notPreferred)}`);
    claim("outsideStatedTime", notPreferred);
  }

  const callerIndex = Math.max(0, views.findIndex((v) => v.person.isCaller));
  const callerTime = timeKey(slot.fits[callerIndex]!);
  const habitual = (usual: boolean) => pick((f) => f.knowsHabit && f.preferredTime === null && (usual ? f.habit >= USUAL_HABIT : f.habit <= UNUSUAL_HABIT));
  for (const [key, group] of byKey(habitual(true), (e) => timeKey(e.f))) {
    const who = subject(group.map((e) => e.person));
    clauses.push(`${whenText(group[0]!.f)}${key === callerTime ? "" : " (local time)"} are when ${who.text} usually ${agree(who, "meet")}`);
    for (const e of group) claims.push({ kind: "usualTime", userId: e.person.userId, weekday: e.f.weekday, partOfDay: partOfDay(e.f.minuteOfDay) });
  }
  // Unusual is said of the time itself: a usual morning can still hold an hour they never meet at.
  const callerHour = hourKey(slot.fits[callerIndex]!);
  for (const [key, group] of byKey(habitual(false), (e) => hourKey(e.f))) {
    const f = group[0]!.f;
    clauses.push(`${WEEKDAY_NAMES[f.weekday]}s at ${clockText(f.minuteOfDay)}${key === callerHour ? "" : " (local time)"} are unusual for ${subject(group.map((e) => e.person)).text}`);
    for (const e of group) claims.push({ kind: "unusualTime", userId: e.person.userId, weekday: e.f.weekday, hour: Math.floor(e.f.minuteOfDay / 60) });
  }

  const clusterers = pick((f) => f.knowsHabit && f.clustering >= CLUSTERS);
  const nextTo = clusterers.filter((e) => e.f.gapMinutes <= NEXT_TO_MINUTES);
  const away = clusterers.filter((e) => e.f.gapMinutes >= AWAY_MINUTES);
  if (nextTo.length) {
    const who = subject(nextTo.map((e) => e.person));
    clauses.push(`next to other meetings, the way ${who.text} ${agree(who, "like")} them`);
    claim("backToBack", nextTo);
  }
  if (away.length) {
    const who = subject(away.map((e) => e.person));
    clauses.push(`away from other meetings, though ${who.text} usually ${agree(who, "keep")} them back to back`);
    claim("awayFromOthers", away);
  }

  const load = loadReason(entries);
  if (load) {
    clauses.push(load.text);
    claims.push(load.claim);
  }

  for (const { person, f } of pick((f) => f.shortBuffer)) {
    clauses.push(`leaves ${nameOf(person)} only ${Math.floor(f.gapMinutes)} of the ${count(f.wantedGapMinutes, "minute")} ${person.isCaller ? "you" : "they"} want between meetings`);
    claim("shortBuffer", [{ person }]);
  }

  if (clauses.length === 0) {
    const knowsNothing = entries.every((e) => e.f.knowledge === 0 && e.f.preferredTime === null);
    const text = knowsNothing
      ? "No meeting history or stated preferences to learn from yet; ranked as without AI: inside working hours, with room between meetings, soon, and spread over the days."
      : "No habit or stated preference speaks for or against this time; ranked by the day's load and the room between meetings.";
    return { text, claims };
  }
  // The strongest clauses come first: a sentence too long loses its last ones whole.
  let sentence = clauses.join("; ");
  while (sentence.length > MAX_REASON - 1 && clauses.length > 1) {
    clauses.pop();
    sentence = clauses.join("; ");
  }
  const text = `${sentence[0]!.toUpperCase()}${sentence.slice(1, MAX_REASON - 1)}.`;
  return { text, claims };
}

interface Entry {
  person: Named & { userId: string };
  f: PersonFit;
}

function picker(entries: readonly Entry[]): (test: (f: PersonFit) => boolean) => Entry[] {
  return (test) => entries.filter((e) => test(e.f));
}

function claimer(claims: Claim[]): (kind: PlainClaimKind, who: ReadonlyArray<{ person: { userId: string } }>) => void {
  return (kind, who) => {
    for (const e of who) claims.push({ kind, userId: e.person.userId });
  };
}

/** The tightest load among those whose usual load is known: what the slot does to their day. */
function loadReason(entries: readonly Entry[]): { text: string; claim: Claim } | null {
  let tightest: { i: number; margin: number } | null = null;
  for (let i = 0; i < entries.length; i++) {
    const f = entries[i]!.f;
    if (f.usualLoad === null || f.overMax) continue;
    const margin = f.usualLoad - (f.sameDay + 1);
    if (!tightest || margin < tightest.margin) tightest = { i, margin };
  }
  if (!tightest) return null;
  const { person, f } = entries[tightest.i]!;
  const after = f.sameDay + 1;
  if (tightest.margin >= 0) {
    return {
      text: `keeps ${nameOf(person)} within ${person.isCaller ? "your" : "their"} usual ${count(f.usualLoad!, "meeting")} that day`,
      claim: { kind: "withinLoad", userId: person.userId },
    };
  }
  return { text: `makes it a busier day than usual for ${nameOf(person)} (${count(after, "meeting")} against a usual ${f.usualLoad})`, claim: { kind: "busierDay", userId: person.userId } };
}

function partOfDay(minuteOfDay: number): PartOfDay {
  if (minuteOfDay < 12 * 60) return "morning";
  if (minuteOfDay < 17 * 60) return "afternoon";
  return "evening";
}

const timeKey = (f: PersonFit) => `${f.weekday}:${partOfDay(f.minuteOfDay)}`;
const hourKey = (f: PersonFit) => `${f.weekday}:${f.minuteOfDay}`;
const clockText = (minuteOfDay: number) => `${String(Math.floor(minuteOfDay / 60)).padStart(2, "0")}:${String(minuteOfDay % 60).padStart(2, "0")}`;
const whenText = (f: PersonFit) => `${WEEKDAY_NAMES[f.weekday]} ${partOfDay(f.minuteOfDay)}s`;

/** Entries grouped by a key, groups in the order their first member came. */
function byKey<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** "1 meeting", "3 meetings". */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function nameOf(p: Named): string {
  return p.isCaller ? "you" : p.name;
}

/** "you", "Ana", "you and Ana", "Ana, Bo and you"; more than four: the first three and how many others. */
function list(items: readonly string[]): string {
  if (items.length > LONGEST_LIST) return `${items.slice(0, 3).join(", ")} and ${items.length - 3} others`;
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

interface Subject {
  text: string;
  /** Takes the verb without -s: several people, or "you". */
  plural: boolean;
}

function subject(people: readonly Named[]): Subject {
  return { text: list(people.map(nameOf)), plural: people.length > 1 || people[0]!.isCaller };
}

/** The present-tense verb agreeing with the subject: "Bo meets", "you meet", "Ana and Bo meet". */
function agree(who: Subject, verb: string): string {
  return who.plural ? verb : `${verb}s`;
}

/** "your", "Bo's". */
function possessive(p: Named): string {
  return p.isCaller ? "your" : `${p.name}'s`;
}

/** "Ana's stated 14:00–16:00", "your stated 09:00–11:00 on Tuesdays and Bo's stated 14:00–16:00"; for more people "the stated hours of Ana, Bo and you". */
function statedList(entries: ReadonlyArray<{ person: Named; f: PersonFit }>): string {
  if (entries.length > SPELLED_OUT) return `the stated hours of ${list(entries.map((e) => nameOf(e.person)))}`;
  return list(entries.map(({ person, f }) => `${possessive(person)} stated ${windowsText(f.statedWindows)}`));
}

function windowsText(windows: readonly StatedWindow[]): string {
  const texts = windows.map((w) => `${w.start}–${w.end}${w.days && w.days.length < 7 ? ` on ${list(w.days.map((d) => `${d[0]!.toUpperCase()}${d.slice(1)}s`))}` : ""}`);
  if (texts.length > 2) return `${texts.slice(0, 2).join(", ")} or ${texts.length - 2} more`;
  return texts.join(" or ");
}
