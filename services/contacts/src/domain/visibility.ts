import { normalizeEmail } from "./contacts.js";

/** A person with an account. */
export interface Party {
  userId: string;
  email: string;
}

/** One contact row reduced to what visibility needs: who owns it, whom it names, and whether it blocks. */
export interface ContactLink {
  ownerUserId: string;
  email: string;
  blocked: boolean;
}

/**
 * The user ids among `others` that count for `viewer` (api-decisions 7, 10):
 * P counts when neither side has blocked the other and at least one side has
 * the other as a contact. A blocked row is a contact that grants nothing, so
 * "has as a contact, not blocked" and "has not blocked" reduce to: some row
 * exists between them and none of them is blocked. The viewer never counts
 * for himself.
 */
export function visibleUserIds(viewer: Party, others: readonly Party[], links: readonly ContactLink[]): string[] {
  const viewerEmail = normalizeEmail(viewer.email);
  const byOwnerAndEmail = new Map(links.map((l) => [linkKey(l.ownerUserId, normalizeEmail(l.email)), l]));
  const visible: string[] = [];
  for (const other of others) {
    if (other.userId === viewer.userId || visible.includes(other.userId)) continue;
    const mine = byOwnerAndEmail.get(linkKey(viewer.userId, normalizeEmail(other.email)));
    const theirs = byOwnerAndEmail.get(linkKey(other.userId, viewerEmail));
    const related = mine !== undefined || theirs !== undefined;
    const blocked = mine?.blocked === true || theirs?.blocked === true;
    if (related && !blocked) visible.push(other.userId);
  }
  return visible;
}

/**
 * Whether the owner's row for the viewer's e-mail lets the viewer see the owner's
 * day (api-decisions 6): it must exist and not block; and a row of the viewer's
 * that blocks the owner refuses the view too (api-decisions 8, a block by either side wins).
 */
export function grantsView(ownerRowForViewer: { blocked: boolean } | undefined, viewerRowForOwner?: { blocked: boolean }): boolean {
  return ownerRowForViewer !== undefined && !ownerRowForViewer.blocked && viewerRowForOwner?.blocked !== true;
}

function linkKey(ownerUserId: string, email: string): string {
  return `${ownerUserId}\u0000${email}`;
}
