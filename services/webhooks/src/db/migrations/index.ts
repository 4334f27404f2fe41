import type { Migration } from "@sched/db";
import { createWebhooks } from "./001_create_webhooks.js";
import { deliveriesRoomToLease } from "./002_deliveries_room_to_lease.js";
import { deliveriesLeaseAndLastAttempt } from "./003_deliveries_lease_and_last_attempt.js";

/** Every migration of the webhooks schema, in order. */
export const migrations: readonly Migration[] = [createWebhooks, deliveriesRoomToLease, deliveriesLeaseAndLastAttempt];
