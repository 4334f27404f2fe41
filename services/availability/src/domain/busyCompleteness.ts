import type { CalendarProvider } from "@sched/proto";

/** A counted person whose busy time may miss a calendar, and which providers did not answer. */
export interface IncompleteBusy {
  email: string;
  missingCalendars: CalendarProvider[];
}

/**
 * The people whose connected calendars did not answer, in the order given,
 * so an answer built on their busy time says so instead of counting them
 * free there. Providers are listed once each; none when the calendars
 * could not be asked at all.
 */
export function incompleteBusyOf(
  people: ReadonlyArray<{ id: string; email: string }>,
  incomplete: ReadonlySet<string>,
  missing: ReadonlyMap<string, readonly CalendarProvider[]> | undefined,
): IncompleteBusy[] {
  const seen = new Set<string>();
  return people.flatMap((person) => {
    if (!incomplete.has(person.id) || seen.has(person.id)) return [];
    seen.add(person.id);
    return [{ email: person.email.toLowerCase(), missingCalendars: [...new Set(missing?.get(person.id) ?? [])] }];
  });
}
