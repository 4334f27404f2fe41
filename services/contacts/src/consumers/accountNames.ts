import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { accountsLookupUsers, userCreated, userUpdated } from "@sched/proto";
import { accountNameFor, normalizeEmail } from "../domain/contacts.js";
import { setNameForEmail } from "../db/queries.js";

/** A contact is still added when accounts is slow; its name then arrives with the account events. */
export const ACCOUNT_LOOKUP_TIMEOUT_MS = 1_000;

const USER_NAMES_CONSUMER = "contacts-user-names";

/** The account name for `email`, or null when there is none or accounts did not answer in time. */
export async function lookupAccountName(bus: Bus, logger: Logger, email: string): Promise<string | null> {
  try {
    const { users } = await bus.request(accountsLookupUsers, { emails: [email] }, { timeoutMs: ACCOUNT_LOOKUP_TIMEOUT_MS });
    return accountNameFor(users, email);
  } catch (err) {
    logger.warn({ err }, "accounts did not answer the name lookup; the contact is added without a name");
    return null;
  }
}

/**
 * Keeps contact names in step with accounts: a user created or renamed names
 * every row holding his e-mail, for all owners and both modes. Setting a name
 * is idempotent, so a redelivered event does no harm.
 */
export function consumeAccountNames(bus: Bus, db: Knex, logger: Logger): Promise<Stoppable> {
  return bus.consume({ durable: USER_NAMES_CONSUMER, events: [userCreated, userUpdated] }, async (message) => {
    const user = message.payload;
    const changed = await setNameForEmail(db, normalizeEmail(user.email), user.name);
    logger.debug({ userId: user.userId, changed }, "contact names brought up to date");
  });
}
