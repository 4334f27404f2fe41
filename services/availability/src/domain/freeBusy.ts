import type { CalendarProvider } from "@sched/proto";
import { clip, merge, type Interval } from "./intervals.js";

export interface FreeBusyInput {
  /** The range asked about; fractions of a second are dropped from both ends. */
  window: Interval;
  /** The e-mails asked about, lower-cased, without repeats, in the order asked. */
  listed: readonly string[];
  /** The user id of each listed e-mail whose time the caller may see. */
  visible: ReadonlyMap<string, string>;
  /** Busy time by user id, in any order and form. */
  busy: ReadonlyMap<string, readonly Interval[]>;
  /** User ids whose busy time may miss a calendar that did not answer. */
  incomplete: ReadonlySet<string>;
  /** The providers of those calendars, by user id, when known. */
  missing?: ReadonlyMap<string, readonly CalendarProvider[]>;
}

interface FreeBusyPerson {
  email: string;
  /** Merged and cut to the window. */
  busy: Interval[];
  busyComplete: boolean;
  /** Present exactly when `busyComplete` is false. */
  missingCalendars?: CalendarProvider[];
}

export interface FreeBusy {
  window: Interval;
  people: FreeBusyPerson[];
  notVisible: string[];
}

const SECOND_MS = 1_000;

/**
 * What a free-busy request answers: each listed person the caller may see,
 * in the order listed, with their busy time merged (no two intervals overlap
 * or touch) and cut to the window; every other listed person as not
 * visible, which is unknown, never free.
 */
export function freeBusy(input: FreeBusyInput): FreeBusy {
  const window = { start: Math.floor(input.window.start / SECOND_MS) * SECOND_MS, end: Math.floor(input.window.end / SECOND_MS) * SECOND_MS };
  const people: FreeBusyPerson[] = [];
  const notVisible: string[] = [];
  for (const email of input.listed) {
    const userId = input.visible.get(email);
    if (userId === undefined) {
      notVisible.push(email);
      continue;
    }
    const busyComplete = !input.incomplete.has(userId);
    people.push({ email, busy: clip(merge(input.busy.get(userId) ?? []), window), busyComplete, ...(busyComplete ? {} : { missingCalendars: [...(input.missing?.get(userId) ?? [])] }) });
  }
  return { window, people, notVisible };
}
