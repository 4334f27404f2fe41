import type { Bus } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse } from "@sched/proto";
import { type ProviderEvent, recordAnsweredApart } from "../db/queries.js";
import type { AnswerToRecord } from "../domain/calendarAnswers.js";

/** Where answers are read back from, with the name its log lines give it. */
export interface AnswerSource {
  source: "google" | "microsoft";
  calendarName: string;
}

/**
 * Hands answers read from organizers' calendars to meetings, each once
 * (remembered, so an unchanged calendar costs meetings nothing), dated when
 * the provider dated it or else when first read; an answer to one occurrence
 * joins `apart`, the occurrences (with the attendee) answered on their own,
 * and answered_apart, which keeps them across restarts and replicas.
 */
export function answerRecorder(db: Knex, bus: Bus, log: Logger, { source, calendarName }: AnswerSource, timeoutMs: number) {
  const seen = new Set<string>();
  return async (meeting: ProviderEvent, answer: AnswerToRecord, apart: Set<string>): Promise<void> => {
    const key = `${answer.meetingId}|${answer.email}|${answer.response}|${answer.at ?? ""}`;
    if (seen.has(key)) return;
    const { outcome } = await bus.request(
      meetingsRecordResponse,
      { mode: "live", meetingId: answer.meetingId, organizerEmail: meeting.organizerEmail, email: answer.email, response: answer.response, respondedAt: answer.at ?? formatTimestamp(new Date()), source },
      { timeoutMs },
    );
    seen.add(key);
    const apartKey = `${answer.meetingId}|${answer.email}`;
    if (answer.occurrence && !apart.has(apartKey)) {
      await recordAnsweredApart(db, [{ ...answer.occurrence, email: answer.email }]);
      apart.add(apartKey);
    }
    if (outcome === "applied") log.info({ meetingId: answer.meetingId, response: answer.response }, `answer read from the organizer's ${calendarName} calendar`);
    else if (outcome !== "unchanged" && outcome !== "stale") log.debug({ meetingId: answer.meetingId, outcome }, `answer from the organizer's ${calendarName} calendar not recorded`);
  };
}
