import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import { contactsGrantsView, contactsVisibility } from "@sched/proto";
import { normalizeEmail } from "../domain/contacts.js";
import { grantsView, visibleUserIds } from "../domain/visibility.js";
import { linksBetween, viewLinks } from "../db/queries.js";

/** The questions other services ask: who counts for whom, and whose day may be seen. */
export function visibilityBindings(db: Knex): EndpointBinding[] {
  return [
    bind(contactsVisibility, async ({ mode, viewer, others }) => {
      const me = { userId: viewer.userId, email: normalizeEmail(viewer.email) };
      const them = others.map((o) => ({ userId: o.userId, email: normalizeEmail(o.email) }));
      const links = await linksBetween(db, mode, me, them);
      return { visibleUserIds: visibleUserIds(me, them, links) };
    }),

    bind(contactsGrantsView, async ({ mode, owner, viewerEmail, viewerUserId }) => {
      const viewer = viewerUserId !== undefined && owner.email !== undefined ? { userId: viewerUserId, ownerEmail: normalizeEmail(owner.email) } : undefined;
      const { ownerRow, viewerRow } = await viewLinks(db, mode, { userId: owner.userId, viewerEmail: normalizeEmail(viewerEmail) }, viewer);
      return { granted: grantsView(ownerRow, viewerRow) };
    }),
  ];
}
