import type { InviteKind, Meeting, SeriesOfEvent } from "@sched/proto";
import { createHash } from "node:crypto";
import nodemailer, { type Transporter } from "nodemailer";
import { buildIcs } from "../domain/ics.js";
import type { ReplyAddresses } from "../domain/replyAddress.js";
import { calendarMeetingId, occurrenceStart } from "../domain/series.js";
import { DeliveryFailure } from "../domain/retry.js";

export interface EmailInvite {
  meeting: Meeting;
  series?: SeriesOfEvent | null | undefined;
  sequence: number;
  kind: InviteKind;
  recipient: string;
  organizerEmail: string;
}

export interface EmailSettings {
  /** `smtp://…` or `smtps://…`; without it live e-mail invites fail visibly rather than vanish. */
  smtpUrl?: string;
  from: string;
  uidDomain: string;
  timeoutMs: number;
  /** The service's own reply addresses; without them replies go to the organizer and no answer is seen. */
  replies?: ReplyAddresses | undefined;
}

/** Sends iCalendar invites by e-mail through one SMTP relay. */
export class EmailSender {
  private readonly transport: Transporter | undefined;

  constructor(private readonly settings: EmailSettings) {
    this.transport = settings.smtpUrl
      ? nodemailer.createTransport({
          // Pooled: a burst of invites reuses a few connections instead of opening one per message.
          pool: true,
          maxConnections: 5,
          url: settings.smtpUrl,
          connectionTimeout: settings.timeoutMs,
          greetingTimeout: settings.timeoutMs,
          socketTimeout: settings.timeoutMs,
        })
      : undefined;
  }

  async send(invite: EmailInvite): Promise<void> {
    if (!this.transport) throw new DeliveryFailure("permanent", "No SMTP server is configured (SMTP_URL).");
    const { meeting, kind } = invite;
    // Replies name the calendar object's UID, the series' for an occurrence: its address is the series'.
    const replyAddress = this.settings.replies?.addressFor(calendarMeetingId(meeting), invite.recipient);
    const ics = buildIcs({
      ...{ meeting, series: invite.series ?? undefined, sequence: invite.sequence, kind, recipient: invite.recipient, organizer: { email: invite.organizerEmail }, uidDomain: this.settings.uidDomain },
      ...(replyAddress ? { replyAddress } : {}),
    });
    const subject = kind === "request" ? (invite.sequence > 1 ? `Updated invitation: ${meeting.title}` : `Invitation: ${meeting.title}`) : `Cancelled: ${meeting.title}`;
    try {
      await this.transport.sendMail({
        from: this.settings.from,
        replyTo: replyAddress ?? invite.organizerEmail,
        to: invite.recipient,
        subject,
        text: describe(invite),
        icalEvent: { method: kind === "request" ? "REQUEST" : "CANCEL", content: ics },
        // The same change to the same person always has the same Message-ID, so a resend after a crash can be recognised.
        messageId: `<${createHash("sha256").update(`${meeting.id}|${invite.sequence}|${kind}|${invite.recipient}`).digest("hex").slice(0, 32)}@${this.settings.uidDomain}>`,
      });
    } catch (err) {
      throw smtpFailure(err);
    }
  }

  close(): void {
    this.transport?.close();
  }
}

function describe(invite: EmailInvite): string {
  const { meeting } = invite;
  const original = occurrenceStart(meeting);
  const repeats = !original && invite.series ? `, repeating ${invite.series.rule} in ${invite.series.timeZone}` : "";
  const when = `${meeting.startTime} (${meeting.duration}${repeats})${original && original !== meeting.startTime ? `, instead of ${original}` : ""}`;
  if (invite.kind === "cancel") return `${invite.organizerEmail} cancelled "${meeting.title}" at ${when} for you.`;
  return `${invite.organizerEmail} invites you to "${meeting.title}" at ${when}.${meeting.description ? `\n\n${meeting.description}` : ""}`;
}

/**
 * SMTP 5xx refuses for good (a bad address); 4xx, refused or lost connections
 * are worth another try. A relay that falls silent in the middle of the
 * conversation may have taken the message already (its answer to it is what
 * never came): that send is in doubt, not failed.
 */
function smtpFailure(err: unknown): DeliveryFailure {
  const { responseCode: code, code: errorCode, timeoutType } = err as { responseCode?: number; code?: string; timeoutType?: string };
  const message = err instanceof Error ? err.message : String(err);
  if (code === undefined && errorCode === "ETIMEDOUT" && timeoutType === SILENT_RELAY) return new DeliveryFailure("in-doubt", `SMTP: ${message}`);
  return new DeliveryFailure(code !== undefined && code >= 500 ? "permanent" : "transient", `SMTP: ${message}`);
}

/** nodemailer's timeout of a connection that stopped answering once the conversation was under way (not one that never connected or greeted). */
const SILENT_RELAY = "SOCKET_TIMEOUT";
