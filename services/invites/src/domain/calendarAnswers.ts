import { occurrenceIdOf, type GivenResponse } from "@sched/proto";

/** One attendee's answer as a provider's calendar shows it; `at` when the provider keeps the time of the answer. */
export interface ShownAnswer {
  email: string;
  response: GivenResponse;
  at?: string | undefined;
}

/** An answer for the meetings service to record (meetings.v1.responses.record): to a meeting, a series or one occurrence. */
export interface AnswerToRecord extends ShownAnswer {
  /** A single meeting's or a series' id, or an occurrence's (`<series id>_<YYYYMMDDTHHMMSSZ>`). */
  meetingId: string;
  /** For an answer to one occurrence: its series and original start (what answered_apart keeps). */
  occurrence?: { seriesId: string; originalStart: Date };
}

/**
 * The answers the organizer's calendar shows for one of our events. A
 * single meeting's event, or a series' recurring event (its master), gives
 * each attendee's answer to the meeting or the whole series. An instance
 * of the series (named by its original start) gives an answer to that
 * occurrence only where the attendee answered it otherwise than the series:
 * calendars copy the series' answer into every instance, and an answer to
 * the series must not become one per occurrence. Once an attendee has an
 * answer of their own to an occurrence (`answeredApart`: one was sent for
 * it), the instance's answer goes for the occurrence whatever it is, so
 * coming back to the series' answer is recorded too.
 */
export function answersToRecord(
  meetingId: string,
  shown: readonly ShownAnswer[],
  instances: ReadonlyArray<{ originalStart: string; shown: readonly ShownAnswer[] }> = [],
  answeredApart: (occurrenceId: string, email: string) => boolean = () => false,
): AnswerToRecord[] {
  const ofSeries = new Map(shown.map((a) => [a.email.toLowerCase(), a.response]));
  const answers: AnswerToRecord[] = shown.map((a) => ({ ...a, email: a.email.toLowerCase(), meetingId }));
  for (const instance of instances) {
    const originalStart = new Date(instance.originalStart);
    const occurrenceId = occurrenceIdOf(meetingId, originalStart);
    for (const a of instance.shown) {
      const email = a.email.toLowerCase();
      if (ofSeries.get(email) !== a.response || answeredApart(occurrenceId, email)) answers.push({ ...a, email, meetingId: occurrenceId, occurrence: { seriesId: meetingId, originalStart } });
    }
  }
  return answers;
}

/** An event as Google lists it with `singleEvents: false`: the fields the answers need. */
export interface GoogleListedEvent {
  id?: string | null;
  status?: string | null;
  /** An instance of a series changed on its own: the series' event. */
  recurringEventId?: string | null;
  originalStartTime?: { dateTime?: string | null } | null;
  attendees?: Array<{ email?: string | null; responseStatus?: string | null }> | null;
}

const GOOGLE_GIVEN: Readonly<Record<string, GivenResponse>> = { accepted: "accepted", declined: "declined", tentative: "tentative" };

/**
 * The answers each of our events shows in one listing of a Google calendar:
 * a single event's, or a series' event's with those of its instances listed
 * beside it (answersToRecord). Cancelled items show none.
 */
export function answersOfGoogleEvents<M extends { providerEventId: string; meetingId: string }>(
  items: readonly GoogleListedEvent[],
  ours: readonly M[],
  answeredApart?: (occurrenceId: string, email: string) => boolean,
): Array<{ meeting: M; answers: AnswerToRecord[] }> {
  const byEventId = new Map(ours.map((e) => [e.providerEventId, e]));
  const live = items.filter((e) => e.status !== "cancelled");
  const shown = (event: GoogleListedEvent): ShownAnswer[] =>
    (event.attendees ?? []).flatMap((a) => {
      const response = a.responseStatus ? GOOGLE_GIVEN[a.responseStatus] : undefined;
      return a.email && response ? [{ email: a.email, response }] : [];
    });
  return live.flatMap((event) => {
    const meeting = event.id ? byEventId.get(event.id) : undefined;
    if (!meeting) return [];
    const instances = live
      .filter((i) => i.recurringEventId === event.id && i.originalStartTime?.dateTime)
      .map((i) => ({ originalStart: new Date(i.originalStartTime!.dateTime!).toISOString(), shown: shown(i) }));
    return [{ meeting, answers: answersToRecord(meeting.meetingId, shown(event), instances, answeredApart) }];
  });
}
