import type { Migration } from "@sched/db";
import { outboxMigration, outboxTraceContextMigration } from "@sched/outbox";
import { createMeetings } from "./001_create_meetings.js";
import { createIdempotencyKeys } from "./002_create_idempotency_keys.js";
import { coverEndTime } from "./005_cover_end_time.js";
import { storeListItems } from "./006_store_list_items.js";
import { claimsExpireWithRequests } from "./007_claims_expire_with_requests.js";
import { createTimeOff } from "./008_create_time_off.js";
import { participantResponses } from "./009_participant_responses.js";
import { recurringSeries } from "./010_recurring_series.js";
import { seriesAnswers } from "./011_series_answers.js";
import { seriesVersions } from "./012_series_versions.js";
import { seriesRangeCoversExceptions } from "./013_series_range_covers_exceptions.js";
import { occurrenceAnswerVersions } from "./014_occurrence_answer_versions.js";

/** The meetings schema, in order. Released migrations never change. */
export const migrations: readonly Migration[] = [
  createMeetings,
  createIdempotencyKeys,
  outboxMigration("003_create_outbox"),
  outboxTraceContextMigration("004_outbox_trace_context"),
  coverEndTime,
  storeListItems,
  claimsExpireWithRequests,
  createTimeOff,
  participantResponses,
  recurringSeries,
  seriesAnswers,
  seriesVersions,
  seriesRangeCoversExceptions,
  occurrenceAnswerVersions,
];
