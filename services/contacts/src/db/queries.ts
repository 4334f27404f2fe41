import type { Knex } from "@sched/db";
import type { Mode, Relationship } from "@sched/proto";
import type { ListState, StoredContact } from "../domain/contacts.js";
import type { ContactLink } from "../domain/visibility.js";

/** Whose list a query works on: every row belongs to one user in one mode. */
export interface Owner {
  userId: string;
  mode: Mode;
}

interface ContactRow {
  id: string;
  owner_user_id: string;
  mode: Mode;
  email: string;
  name: string | null;
  relationship: Relationship;
  blocked: boolean;
  added_at: Date | string;
}

/** The unique constraint that makes a second row for the same e-mail impossible. */
export const UNIQUE_EMAIL_CONSTRAINT = "contacts_owner_mode_email_key";

const COLUMNS = ["id", "owner_user_id", "mode", "email", "name", "relationship", "blocked", "added_at"];

function toStored(row: ContactRow): StoredContact {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    relationship: row.relationship,
    blocked: row.blocked,
    addedAt: row.added_at instanceof Date ? row.added_at : new Date(row.added_at),
  };
}

function ownedBy(db: Knex, owner: Owner) {
  return db("contacts").where({ owner_user_id: owner.userId, mode: owner.mode });
}

export async function listContacts(db: Knex, owner: Owner, withBlocked: boolean): Promise<StoredContact[]> {
  const query = ownedBy(db, owner).select(COLUMNS);
  if (!withBlocked) query.where({ blocked: false });
  const rows = (await query.orderBy([
    { column: "added_at", order: "desc" },
    { column: "id", order: "desc" },
  ])) as ContactRow[];
  return rows.map(toStored);
}

export async function findContact(db: Knex, owner: Owner, id: string): Promise<StoredContact | undefined> {
  const row = (await ownedBy(db, owner).where({ id }).first(COLUMNS)) as ContactRow | undefined;
  return row ? toStored(row) : undefined;
}

/**
 * Runs `work` while holding the owner's list lock for this mode, so that the
 * size check and the insert of concurrent additions cannot interleave.
 */
export async function withListLock<T>(db: Knex, owner: Owner, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`contacts:${owner.userId}:${owner.mode}`]);
    return work(trx);
  });
}

export async function listState(db: Knex, owner: Owner, email: string): Promise<ListState> {
  const row = (await ownedBy(db, owner)
    .select(db.raw("count(*)::int as total"), db.raw("coalesce(bool_or(email = ?), false) as already_listed", [email]))
    .first()) as { total: number; already_listed: boolean };
  return { total: row.total, alreadyListed: row.already_listed };
}

export async function insertContact(
  db: Knex,
  owner: Owner,
  contact: { id: string; email: string; relationship: Relationship },
): Promise<StoredContact> {
  const [row] = (await db("contacts")
    .insert({ id: contact.id, owner_user_id: owner.userId, mode: owner.mode, email: contact.email, relationship: contact.relationship })
    .returning(COLUMNS)) as ContactRow[];
  return toStored(row!);
}

export async function updateContact(
  db: Knex,
  owner: Owner,
  id: string,
  changes: { relationship?: Relationship | undefined; blocked?: boolean | undefined },
): Promise<StoredContact | undefined> {
  const set: Partial<Pick<ContactRow, "relationship" | "blocked">> = {};
  if (changes.relationship !== undefined) set.relationship = changes.relationship;
  if (changes.blocked !== undefined) set.blocked = changes.blocked;
  const [row] = (await ownedBy(db, owner).where({ id }).update(set).returning(COLUMNS)) as ContactRow[];
  return row ? toStored(row) : undefined;
}

/** Whether a row was removed. */
export async function deleteContact(db: Knex, owner: Owner, id: string): Promise<boolean> {
  return (await ownedBy(db, owner).where({ id }).delete()) > 0;
}

/**
 * Sets the name of a new contact unless the account events got there first
 * (their name is the newer one).
 */
export async function fillMissingName(db: Knex, id: string, name: string): Promise<void> {
  await db("contacts").where({ id }).whereNull("name").update({ name });
}

/** Names every row holding `email`, whoever owns it and in both modes; returns how many changed. */
export async function setNameForEmail(db: Knex, email: string, name: string): Promise<number> {
  return db("contacts").where({ email }).whereRaw("name is distinct from ?", [name]).update({ name });
}

/**
 * The rows between `viewer` and `others`, in both directions, in one query:
 * the viewer's rows naming them, and their rows naming the viewer.
 */
export async function linksBetween(
  db: Knex,
  mode: Mode,
  viewer: { userId: string; email: string },
  others: ReadonlyArray<{ userId: string; email: string }>,
): Promise<ContactLink[]> {
  if (others.length === 0) return [];
  const rows = (await db("contacts")
    .select("owner_user_id", "email", "blocked")
    .where({ mode })
    .andWhere((q) =>
      q
        .where((mine) => mine.where({ owner_user_id: viewer.userId }).whereIn("email", others.map((o) => o.email)))
        .orWhere((theirs) => theirs.where({ email: viewer.email }).whereIn("owner_user_id", others.map((o) => o.userId))),
    )) as Array<Pick<ContactRow, "owner_user_id" | "email" | "blocked">>;
  return rows.map((r) => ({ ownerUserId: r.owner_user_id, email: r.email, blocked: r.blocked }));
}

/**
 * The two rows a day-view grant depends on, in one query: the owner's row for
 * the viewer's e-mail and, when the viewer is named, the viewer's row for the owner's.
 */
export async function viewLinks(
  db: Knex,
  mode: Mode,
  owner: { userId: string; viewerEmail: string },
  viewer?: { userId: string; ownerEmail: string },
): Promise<{ ownerRow: { blocked: boolean } | undefined; viewerRow: { blocked: boolean } | undefined }> {
  const rows = (await db("contacts")
    .select("owner_user_id", "blocked")
    .where({ mode })
    .andWhere((q) => {
      q.where((own) => own.where({ owner_user_id: owner.userId, email: owner.viewerEmail }));
      if (viewer) q.orWhere((theirs) => theirs.where({ owner_user_id: viewer.userId, email: viewer.ownerEmail }));
    })) as Array<Pick<ContactRow, "owner_user_id" | "blocked">>;
  const rowOf = (userId: string) => rows.find((r) => r.owner_user_id === userId);
  return { ownerRow: rowOf(owner.userId), viewerRow: viewer ? rowOf(viewer.userId) : undefined };
}
