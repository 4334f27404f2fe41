import type { Migration } from "@sched/db";
import { outboxMigration } from "@sched/outbox";
import { createInvites } from "./001_create_invites.js";
import { addLeaseOwnerAndTrace } from "./002_lease_owner_and_trace.js";
import { settledChangesKeepKeys } from "./003_settled_changes_keep_keys.js";
import { deliveriesBeingSent } from "./004_deliveries_being_sent.js";
import { caldavConnections } from "./005_caldav_connections.js";
import { microsoftConnections } from "./007_microsoft_connections.js";
import { seriesChanges } from "./008_series_changes.js";
import { dashboardConsents } from "./009_dashboard_consents.js";
import { deliveryFallbackReason } from "./010_delivery_fallback_reason.js";
import { answerResets } from "./011_answer_resets.js";
import { answerPollTurns } from "./012_answer_poll_turns.js";
import { answeredApart } from "./013_answered_apart.js";
import { answerWatches } from "./014_answer_watches.js";

/** Every migration of the invites schema, in order. */
export const migrations: readonly Migration[] = [
  createInvites,
  addLeaseOwnerAndTrace,
  settledChangesKeepKeys,
  deliveriesBeingSent,
  caldavConnections,
  outboxMigration("006_create_outbox"),
  microsoftConnections,
  seriesChanges,
  dashboardConsents,
  deliveryFallbackReason,
  answerResets,
  answerPollTurns,
  answeredApart,
  answerWatches,
];
