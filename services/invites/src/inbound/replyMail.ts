import type { Bus, Stoppable } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse } from "@sched/proto";
import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { answersPresentTime } from "../domain/answeredVersion.js";
import { parseItipReply } from "../domain/itipReply.js";
import { meetingIdOfUid } from "../domain/ics.js";
import { proveAnswer, type ProvenAnswer } from "../domain/replyJudge.js";
import type { ReplyAddresses } from "../domain/replyAddress.js";
import { SenderRate } from "../domain/senderRate.js";

/** A calendar reply is a few kilobytes; anything far larger is no reply. */
const MAX_MESSAGE_BYTES = 1_000_000;
/** Reply addresses one message may be for: a client answers one invite, to one address. */
const MAX_RECIPIENTS = 10;
/** Connections open at once; each holds at most one message's MAX_MESSAGE_BYTES. */
const MAX_CONNECTIONS = 100;
/** A connection silent this long is closed. */
const IDLE_TIMEOUT_MS = 30_000;
/** Meetings answers within this, or the sending server is told to try again later. */
const MEETINGS_TIMEOUT_MS = 2_000;

export interface ReplyMailSettings {
  host: string;
  port: number;
  uidDomain: string;
  /** Messages one sending address may hand over a minute; more are told to try again later (450). */
  messagesPerMinute: number;
  /** The sequence of the last change that asked the meeting's participants again, if any. */
  answersResetAt: (meetingId: string) => Promise<number | undefined>;
  /** The organizer's address of the meeting (or series) a UID names, as the invites service last saw it. */
  organizerOf: (calendarMeetingId: string) => Promise<string | undefined>;
}

/** An SMTP answer: 4xx asks the sender to try again later, 5xx refuses for good. */
const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

/**
 * The service's own mailbox for answers to e-mail invites: the SMTP server
 * that the invites' reply addresses point to (through the domain's MX). It
 * takes mail only for reply addresses of ours, reads the iTIP REPLY that a
 * calendar client sends, and has meetings record the answer it proves.
 * A reply that proves nothing (another meeting's, another attendee's, a
 * forged organizer, not a REPLY at all), or that answers a time the meeting
 * no longer has (its SEQUENCE below the change that asked everyone again),
 * is accepted and dropped with a log
 * line, so a forger learns nothing; only when meetings cannot be reached is
 * the sender asked to try again (451), so no real answer is lost. What one
 * peer may cost is bounded: a message's size, its recipients, the messages
 * a sending address may hand over a minute, the connections open at once.
 */
export async function startReplyListener(bus: Bus, logger: Logger, addresses: ReplyAddresses, settings: ReplyMailSettings): Promise<Stoppable & { port: number }> {
  const log = logger.child({ component: "reply-mail" });

  const apply = async (ics: string, token: string): Promise<void> => {
    const parsed = parseItipReply(ics);
    if (!parsed.ok) return log.warn({ problem: parsed.problem }, "reply dropped");
    const proven = proveAnswer(parsed.value, { token, uidDomain: settings.uidDomain, tokenMatches: (t, m, p) => addresses.matches(t, m, p), now: new Date() });
    if (!proven.ok) return log.warn({ problem: proven.problem, uid: parsed.value.uid }, "reply dropped");
    const answer = await withOrganizer(proven.value, parsed.value.uid, token);
    if (!answer) return log.warn({ problem: "a meeting the invites service never sent", uid: parsed.value.uid }, "reply dropped");
    const resetAt = await settings.answersResetAt(answer.meetingId);
    if (!answersPresentTime(parsed.value.sequence, resetAt)) {
      return log.warn({ problem: `answers an earlier time of the meeting (SEQUENCE ${parsed.value.sequence}, asked again at ${resetAt})`, uid: parsed.value.uid }, "reply dropped");
    }
    const { outcome } = await bus.request(
      meetingsRecordResponse,
      { mode: "live", ...answer, respondedAt: formatTimestamp(answer.respondedAt), source: "email" },
      { timeoutMs: MEETINGS_TIMEOUT_MS },
    );
    if (outcome === "applied" || outcome === "unchanged") log.info({ meetingId: answer.meetingId, response: answer.response, outcome }, "reply recorded");
    else log.warn({ meetingId: answer.meetingId, outcome }, "reply dropped");
  };

  /**
   * Invites name their reply address as ORGANIZER, so clients answer there
   * and copy it into the REPLY: naming the very address the reply came to,
   * it answers the meeting's own organizer. Any other ORGANIZER is left as
   * written, for meetings to compare with the meeting's.
   */
  const withOrganizer = async (answer: ProvenAnswer, uid: string, token: string): Promise<ProvenAnswer | undefined> => {
    if (addresses.tokenOf(answer.organizerEmail) !== token) return answer;
    const organizerEmail = await settings.organizerOf(meetingIdOfUid(uid, settings.uidDomain)!);
    return organizerEmail ? { ...answer, organizerEmail } : undefined;
  };

  const rate = new SenderRate(settings.messagesPerMinute);

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) => {
    // At most MAX_MESSAGE_BYTES are kept: a larger message is read to its end and refused, never held whole.
    const kept: Buffer[] = [];
    let bytes = 0;
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= MAX_MESSAGE_BYTES) kept.push(chunk);
    });
    stream.on("end", () => {
      if (bytes > MAX_MESSAGE_BYTES) return callback(smtpError(552, "Message too large for a calendar reply"));
      simpleParser(Buffer.concat(kept))
        .then(async (mail) => {
          const ics = calendarPartOf(mail);
          // The invite names this address as its organizer's, so a person may write here: bounce it back, never drop it unseen.
          if (!ics) {
            log.warn({ problem: "no text/calendar part" }, "message refused");
            return callback(smtpError(550, "This address takes calendar replies only; write to the meeting's organizer directly"));
          }
          const tokens = session.envelope.rcptTo.map((r) => addresses.tokenOf(r.address)).filter((t): t is string => t !== undefined);
          try {
            for (const token of new Set(tokens)) await apply(ics, token);
          } catch (err) {
            log.warn({ err }, "could not record a reply; the sender will try again");
            return callback(smtpError(451, "Try again later"));
          }
          callback();
        })
        .catch((err: unknown) => {
          log.warn({ err }, "unreadable message dropped");
          callback(smtpError(554, "Unreadable message"));
        });
    });
  };

  const server = new SMTPServer({
    name: addresses.domain,
    authOptional: true,
    // Mail arrives from other mail servers, which do not log in; TLS is the job of the relay or load balancer in front.
    disabledCommands: ["AUTH", "STARTTLS"],
    size: MAX_MESSAGE_BYTES,
    maxClients: MAX_CONNECTIONS,
    socketTimeout: IDLE_TIMEOUT_MS,
    logger: false,
    onMailFrom: (_address, session, callback) => {
      if (rate.take(session.remoteAddress, Date.now())) return callback();
      log.warn({ remoteAddress: session.remoteAddress }, "sender over its share of replies a minute; told to try later");
      callback(smtpError(450, "Too many messages from this address; try again later"));
    },
    onRcptTo: (address, session, callback) => {
      if (!addresses.tokenOf(address.address)) return callback(smtpError(550, "No such mailbox here"));
      // Each reply address is an answer to look up: a message for many is no calendar reply.
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(smtpError(452, "Too many recipients"));
      callback();
    },
    onData,
  });
  // A peer that drops its connection must not end the process.
  server.on("error", (err) => log.debug({ err }, "SMTP connection ended in an error"));
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  log.info({ port }, "listening for replies to e-mail invites");
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The calendar of a reply: an attachment or an alternative body part of type text/calendar. */
function calendarPartOf(mail: ParsedMail): string | undefined {
  const part = mail.attachments.find((a) => /^(text\/calendar|application\/ics)/i.test(a.contentType));
  if (part) return part.content.toString("utf8");
  return typeof mail.text === "string" && mail.text.includes("BEGIN:VCALENDAR") ? mail.text : undefined;
}
