import { SCOPES, type Caller, type Mode, type UserProfile } from "@sched/proto";

/**
 * The caller the public endpoints expect, for the signed-in user rather than
 * a key: the services check ownership against `userId` and `mode` exactly as
 * they do for a key, so another user's resources stay 404.
 */
export function actingFor(user: UserProfile, mode: Mode): Caller {
  return { userId: user.id, email: user.email, timezone: user.timezone, mode, scopes: [...SCOPES], apiKeyId: "dashboard" };
}
