import type { Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { accountsLookupUsers, contactsVisibility, type Caller, type UserProfile } from "@sched/proto";
import { SIBLING_TIMEOUT_MS, type AvailabilityDeps } from "../inbound/deps.js";

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

/**
 * The participants who count, in the order they were listed: those with an
 * account (never the caller) whom the visibility rule lets the caller see.
 */
export async function visibleParticipants(
  deps: Pick<AvailabilityDeps, "bus">,
  caller: Caller,
  me: UserProfile,
  emails: readonly string[],
  users: readonly UserProfile[],
): Promise<UserProfile[]> {
  const byEmail = new Map(users.filter((u) => u.id !== me.id).map((u) => [u.email.toLowerCase(), u]));
  const withAccount = [...new Set(emails.flatMap((e) => byEmail.get(e) ?? []))];
  if (withAccount.length === 0) return [];
  const { visibleUserIds } = await deps.bus.request(
    contactsVisibility,
    { mode: caller.mode, viewer: { userId: me.id, email: me.email }, others: withAccount.map((u) => ({ userId: u.id, email: u.email })) },
    { timeoutMs: SIBLING_TIMEOUT_MS },
  );
  const visible = new Set(visibleUserIds);
  return withAccount.filter((u) => visible.has(u.id));
}
