import type { Migration } from "@sched/db";
import { createWebhooks } from "./001_create_webhooks.js";

/** Every migration of the webhooks schema, in order. */
export const migrations: readonly Migration[] = [createWebhooks];
