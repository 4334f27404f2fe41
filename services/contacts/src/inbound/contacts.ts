import { bind, type Bus, type EndpointBinding, requireCaller } from "@sched/bus";
import { writeOnce } from "@sched/db/idempotent-writes";
import { isUniqueViolation, type Knex } from "@sched/db";
import { notFound } from "@sched/errors";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { contactsCreate, contactsDelete, contactsGet, contactsList, contactsUpdate, type Caller, type Relationship } from "@sched/proto";
import {
  DEFAULT_RELATIONSHIP,
  contactExists,
  contactView,
  includeBlocked,
  type StoredContact,
  refuseIfNoRoom,
  refuseOwnEmail,
  requireContactId,
} from "../domain/contacts.js";
import {
  UNIQUE_EMAIL_CONSTRAINT,
  deleteContact,
  fillMissingName,
  findContact,
  insertContact,
  listContacts,
  listState,
  updateContact,
  withListLock,
} from "../db/queries.js";
import { lookupAccountName } from "../consumers/accountNames.js";

export interface ContactsDeps {
  db: Knex;
  bus: Bus;
  logger: Logger;
}

/** The public routes of api-spec 4.7, 4.8 and the extensions of api-decisions 8. */
export function contactRouteBindings({ db, bus, logger }: ContactsDeps): EndpointBinding[] {
  return [
    bind(contactsList, async ({ query }, ctx) => {
      const me = requireCaller(ctx);
      const contacts = await listContacts(db, me, includeBlocked(query));
      return { status: 200, body: { data: contacts.map(contactView) } };
    }),

    bind(contactsCreate, async ({ body }, ctx) => {
      const me = requireCaller(ctx);
      refuseOwnEmail(body.email, me.email);
      const add = async (trx: Knex) => ({ status: 201 as const, body: contactView(await addToList(trx, me, body.email, body.relationship ?? DEFAULT_RELATIONSHIP)) });
      // Asked after the insert: an account created meanwhile is then named
      // either by this answer or by its user.created event, never by neither.
      const named = async (added: Awaited<ReturnType<typeof add>>) => {
        const name = await lookupAccountName(bus, logger, body.email);
        if (name !== null) await fillMissingName(db, added.body.id, name);
        const contact = await findContact(db, me, added.body.id);
        return contact ? { ...added, body: contactView(contact) } : added;
      };
      return writeOnce(db, ctx, { method: "POST", path: "/v1/contacts", body }, add, { finish: named });
    }),

    bind(contactsGet, async ({ params }, ctx) => {
      const me = requireCaller(ctx);
      const contact = await findContact(db, me, requireContactId(params.id));
      if (!contact) throw notFound("contact");
      return { status: 200, body: contactView(contact) };
    }),

    bind(contactsUpdate, async ({ params, body }, ctx) => {
      const me = requireCaller(ctx);
      const contact = await updateContact(db, me, requireContactId(params.id), body);
      if (!contact) throw notFound("contact");
      return { status: 200, body: contactView(contact) };
    }),

    bind(contactsDelete, async ({ params }, ctx) => {
      const me = requireCaller(ctx);
      if (!(await deleteContact(db, me, requireContactId(params.id)))) throw notFound("contact");
      return { status: 204 };
    }),
  ];
}

/** Adds a row if the list has room; a lost race on the same e-mail is the same 409 as a plain duplicate. */
async function addToList(db: Knex, me: Caller, email: string, relationship: Relationship): Promise<StoredContact> {
  try {
    return await withListLock(db, me, async (trx) => {
      refuseIfNoRoom(await listState(trx, me, email));
      return insertContact(trx, me, { id: newId("ctc"), email, relationship });
    });
  } catch (err) {
    if (isUniqueViolation(err, UNIQUE_EMAIL_CONSTRAINT)) throw contactExists();
    throw err;
  }
}
