import type { Migration } from "@sched/db";

/**
 * A key's claim now expires with its request's deadline rather than with
 * the key's 24 hours. Claims left by an earlier release get the minute after
 * which that release let a retry take them over.
 */
export const claimsExpireWithRequests: Migration = {
  name: "007_claims_expire_with_requests",
  up: async (db) => {
    await db.raw("update idempotency_keys set expires_at = least(expires_at, claimed_at + interval '1 minute') where state = 'in_progress'");
  },
};
