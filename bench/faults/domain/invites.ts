/**
 * Counts the invite e-mails the SMTP catcher received against those owed:
 * one per participant per change of every meeting that exists, told apart by
 * the iCalendar UID (one per meeting), SEQUENCE (the change number) and
 * METHOD, and the envelope recipient.
 */

export interface CaughtMail {
  /** Envelope recipients, lower-cased. */
  recipients: string[];
  messageId?: string;
  /** The text/calendar part. */
  ics?: string;
}

export interface IcsFacts {
  uid: string;
  sequence: number;
  method: string;
}

/** UID, SEQUENCE and METHOD of an iCalendar text (RFC 5545 lines, folded or not); undefined when one is missing. */
export function icsFacts(ics: string): IcsFacts | undefined {
  const lines = ics.replace(/\r?\n[ \t]/g, "").split(/\r?\n/);
  const value = (name: string) => lines.find((l) => l.toUpperCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
  const [uid, sequence, method] = [value("UID"), value("SEQUENCE"), value("METHOD")];
  if (uid === undefined || sequence === undefined || method === undefined || !/^\d+$/.test(sequence)) return undefined;
  return { uid, sequence: Number(sequence), method: method.toUpperCase() };
}

/** A meeting that exists: it owes a REQUEST to each participant for each of its changes 1…changes. */
export interface OwingMeeting {
  uid: string;
  changes: number;
  participants: string[];
}

export interface InviteCheck {
  owed: number;
  /** Owed and received exactly once. */
  deliveredOnce: number;
  /** Owed and never received. */
  lost: number;
  /** Copies beyond the first of an owed invite. */
  doubled: number;
  /** Of those copies, how many repeat the Message-ID of the first (a resend of the same message). */
  doubledSameMessageId: number;
  /** Received but not owed (an unknown UID, change or method). */
  unowed: number;
  /** Received without a readable text/calendar part. */
  unreadable: number;
}

const inviteKey = (uid: string, sequence: number, method: string, recipient: string) => `${uid}|${sequence}|${method}|${recipient}`;

export function checkInvites(meetings: readonly OwingMeeting[], mails: readonly CaughtMail[]): InviteCheck {
  const owed = new Set<string>();
  for (const m of meetings) {
    for (let sequence = 1; sequence <= m.changes; sequence++) for (const p of m.participants) owed.add(inviteKey(m.uid, sequence, "REQUEST", p.toLowerCase()));
  }
  const copies = new Map<string, Array<string | undefined>>();
  let unreadable = 0;
  for (const mail of mails) {
    const facts = mail.ics === undefined ? undefined : icsFacts(mail.ics);
    if (!facts) {
      unreadable++;
      continue;
    }
    for (const r of mail.recipients) {
      const key = inviteKey(facts.uid, facts.sequence, facts.method, r.toLowerCase());
      copies.set(key, [...(copies.get(key) ?? []), mail.messageId]);
    }
  }
  const check: InviteCheck = { owed: owed.size, deliveredOnce: 0, lost: 0, doubled: 0, doubledSameMessageId: 0, unowed: 0, unreadable };
  for (const key of owed) {
    const ids = copies.get(key) ?? [];
    if (ids.length === 0) check.lost++;
    if (ids.length === 1) check.deliveredOnce++;
    check.doubled += Math.max(0, ids.length - 1);
    check.doubledSameMessageId += ids.slice(1).filter((id) => id !== undefined && id === ids[0]).length;
  }
  for (const [key, ids] of copies) if (!owed.has(key)) check.unowed += ids.length;
  return check;
}
