import { freePort } from "@sched/testing";
import nodemailer from "nodemailer";
import { systemPerSuite, type WiringKind } from "./harness.js";
import { startInvitesWorld, type InvitesWorld } from "./invitesSetup.js";

export const INBOUND_DOMAIN = "replies.sched.test";

/** A system per suite whose invites take replies by SMTP on a port of their own; `world` and `port` once started. */
export async function replySuite(wiring: WiringKind) {
  const started: { world?: InvitesWorld; port?: number } = {};
  const suite = await systemPerSuite(wiring, async () => {
    started.port = await freePort();
    started.world = await startInvitesWorld(wiring, { INBOUND_EMAIL_DOMAIN: INBOUND_DOMAIN, INBOUND_SMTP_PORT: String(started.port), INBOUND_SMTP_HOST: "127.0.0.1" });
    const world = started.world;
    return { ...world.sys, stop: () => world.stop() };
  });
  return { suite, world: () => started.world!, port: () => started.port! };
}

/** An iTIP REPLY as a calendar client writes it (RFC 5546 §3.2.3), answering one invite; with `recurrenceId` (a RECURRENCE-ID line's value and parameters), one occurrence of it. */
export function itipReply(a: { uid: string; sequence: number; organizer: string; attendee: string; partstat: string; start: string; end: string; recurrenceId?: string }): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const compact = (iso: string) => iso.replace(/[-:]/g, "");
  return [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Example Corp.//Calendar Client 1.0//EN",
    "METHOD:REPLY",
    "BEGIN:VEVENT",
    `UID:${a.uid}`,
    ...(a.recurrenceId ? [`RECURRENCE-ID${a.recurrenceId}`] : []),
    `DTSTAMP:${stamp}`,
    `SEQUENCE:${a.sequence}`,
    `DTSTART:${compact(a.start)}`,
    `DTEND:${compact(a.end)}`,
    `ORGANIZER:mailto:${a.organizer}`,
    `ATTENDEE;PARTSTAT=${a.partstat}:mailto:${a.attendee}`,
    "END:VEVENT",
    "END:VCALENDAR",
    "",
  ].join("\r\n");
}

/** Mails a message to the service's inbound SMTP listener on `port`, as the attendee's mail server would. */
export async function mailReply(port: number, to: string, from: string, ics: string | { raw: string }): Promise<void> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({
      from,
      to,
      subject: "Re: invitation",
      text: "Answered",
      ...(typeof ics === "string" ? { icalEvent: { method: "REPLY", content: ics } } : { attachments: [{ filename: "invite.ics", contentType: "text/calendar; method=REPLY", content: ics.raw }] }),
    });
  } finally {
    transport.close();
  }
}
