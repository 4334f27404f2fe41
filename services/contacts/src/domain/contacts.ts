import { formatTimestamp } from "@sched/proto";
import { AppError, notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import type { Contact, Relationship } from "@sched/proto";

/** Contacts one user may keep in one mode (api-decisions 8). */
export const MAX_CONTACTS = 1_000;

export const DEFAULT_RELATIONSHIP: Relationship = "other";

/** A contact as stored, before it is shaped for the API. */
export interface StoredContact {
  id: string;
  email: string;
  name: string | null;
  relationship: Relationship;
  blocked: boolean;
  addedAt: Date;
}

/** The one form of an e-mail address that is stored and compared. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A user cannot list himself: his own availability needs no grant. */
export function refuseOwnEmail(email: string, ownerEmail: string): void {
  if (normalizeEmail(email) === normalizeEmail(ownerEmail)) {
    throw new AppError("invalid_request", "Invalid email: you cannot add your own e-mail address as a contact.", { param: "email" });
  }
}

/** What the owner's list already holds, as far as adding one e-mail is concerned. */
export interface ListState {
  total: number;
  alreadyListed: boolean;
}

/** Refuses an e-mail already in the list (409) or a list that is full (400). */
export function refuseIfNoRoom(state: ListState): void {
  if (state.alreadyListed) throw contactExists();
  if (state.total >= MAX_CONTACTS) {
    throw new AppError("invalid_request", `A user can keep at most ${MAX_CONTACTS.toLocaleString("en-US")} contacts; remove one before adding another.`);
  }
}

export function contactExists(): AppError {
  return new AppError("contact_exists", "This e-mail address is already in your contacts.", { param: "email" });
}

/** Blocked contacts are listed only on request (api-spec 3.2). */
export function includeBlocked(query: { includeBlocked?: "true" | "false" | undefined }): boolean {
  return query.includeBlocked === "true";
}

/** An id of the wrong shape names nothing: 404, like an unknown one. */
export function requireContactId(id: string): string {
  if (!isId("ctc", id)) throw notFound("contact");
  return id;
}

export { formatTimestamp };

export function contactView(c: StoredContact): Contact {
  return {
    id: c.id,
    email: c.email,
    name: c.name,
    relationship: c.relationship,
    blocked: c.blocked,
    addedAt: formatTimestamp(c.addedAt),
  };
}

/** The account name for `email` among looked-up users, if one of them has it. */
export function accountNameFor(users: ReadonlyArray<{ email: string; name: string }>, email: string): string | null {
  const wanted = normalizeEmail(email);
  return users.find((u) => normalizeEmail(u.email) === wanted)?.name ?? null;
}
