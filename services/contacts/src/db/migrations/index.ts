import type { Migration } from "@sched/db";
import { createContacts } from "./001_create_contacts.js";
import { createIdempotencyKeys } from "./002_create_idempotency_keys.js";

/** Every migration of the contacts schema, in order. */
export const migrations: readonly Migration[] = [createContacts, createIdempotencyKeys];
