import type { Migration } from "@sched/db";
import { outboxMigration, outboxTraceContextMigration } from "@sched/outbox";
import { createUsers } from "./001_create_users.js";
import { createApiKeys } from "./002_create_api_keys.js";
import { addPreferences } from "./003_add_preferences.js";
import { addApiKeyLastFour } from "./006_add_api_key_last_four.js";

/** Every migration of the accounts schema, in order. */
export const migrations: readonly Migration[] = [
  createUsers,
  createApiKeys,
  addPreferences,
  outboxMigration("004_create_outbox"),
  outboxTraceContextMigration("005_outbox_trace_context"),
  addApiKeyLastFour,
];
