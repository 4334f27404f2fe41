// The Idempotency-Key rules are shared by every service that writes on a POST; this service's tests read them here.
export { readIdempotencyKey } from "@sched/db/idempotent-writes";
