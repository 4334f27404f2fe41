import type { Migration } from "@sched/db";
import { createWebhooks } from "./001_create_webhooks.js";
import { deliveriesRoomToLease } from "./002_deliveries_room_to_lease.js";
import { createIdempotencyKeys } from "./003_create_idempotency_keys.js";
import { deliveriesLeaseAndLastAttempt } from "./004_deliveries_lease_and_last_attempt.js";
import { deliveriesClaimPerEndpoint } from "./005_deliveries_claim_per_endpoint.js";
import { pendingDeliveries } from "./006_pending_deliveries.js";
import { consumerPositions } from "./007_consumer_positions.js";
import { deliveriesWithoutForeignKeys } from "./008_deliveries_without_foreign_keys.js";

/** Every migration of the webhooks schema, in order. */
export const migrations: readonly Migration[] = [createWebhooks, deliveriesRoomToLease, createIdempotencyKeys, deliveriesLeaseAndLastAttempt, deliveriesClaimPerEndpoint, pendingDeliveries, consumerPositions, deliveriesWithoutForeignKeys];
