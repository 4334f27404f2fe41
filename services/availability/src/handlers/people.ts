import type { Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { accountsLookupUsers, type Caller, type UserProfile } from "@sched/proto";
import { SIBLING_TIMEOUT_MS } from "./deps.js";

/** Profiles (zone, working hours) of the users with these ids or e-mails; unknown ones are absent. */
export async function lookupUsers(bus: Bus, query: { ids?: string[]; emails?: string[] }): Promise<UserProfile[]> {
  const { users } = await bus.request(accountsLookupUsers, query, { timeoutMs: SIBLING_TIMEOUT_MS });
  return users;
}

/**
 * The caller's own profile among looked-up users. Its absence means the account
 * behind the key is gone since the gateway authenticated it.
 */
export function callerProfile(users: readonly UserProfile[], caller: Caller): UserProfile {
  const me = users.find((u) => u.id === caller.userId);
  if (!me) throw new AppError("unauthorized", "The account behind this API key no longer exists.");
  return me;
}
