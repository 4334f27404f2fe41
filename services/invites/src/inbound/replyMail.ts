import type { Bus, Stoppable } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse } from "@sched/proto";
import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { answersPresentTime } from "../domain/answeredVersion.js";
import { parseItipReply } from "../domain/itipReply.js";
import { proveAnswer } from "../domain/replyJudge.js";
import type { ReplyAddresses } from "../domain/replyAddress.js";

/** A calendar reply is a few kilobytes; anything far larger is no reply. */
const MAX_MESSAGE_BYTES = 1_000_000;
/** Meetings answers within this, or the sending server is told to try again later. */
const MEETINGS_TIMEOUT_MS = 2_000;

export interface ReplyMailSettings {
  host: string;
  port: number;
  uidDomain: string;
  /** The sequence of the last change that asked the meeting's participants again, if any. */
  answersResetAt: (meetingId: string) => Promise<number | undefined>;
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
 * the sender asked to try again (451), so no real answer is lost.
 */
export async function startReplyListener(bus: Bus, logger: Logger, addresses: ReplyAddresses, settings: ReplyMailSettings): Promise<Stoppable & { port: number }> {
  const log = logger.child({ component: "reply-mail" });

  const apply = async (mail: ParsedMail, token: string): Promise<void> => {
    const ics = calendarPartOf(mail);
    if (!ics) return log.warn({ problem: "no text/calendar part" }, "reply dropped");
    const parsed = parseItipReply(ics);
    if (!parsed.ok) return log.warn({ problem: parsed.problem }, "reply dropped");
    const proven = proveAnswer(parsed.value, { token, uidDomain: settings.uidDomain, tokenMatches: (t, m, p) => addresses.matches(t, m, p), now: new Date() });
    if (!proven.ok) return log.warn({ problem: proven.problem, uid: parsed.value.uid }, "reply dropped");
    const answer = proven.value;
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

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) => {
    simpleParser(stream)
      .then(async (mail) => {
        if (stream.sizeExceeded) return callback(smtpError(552, "Message too large for a calendar reply"));
        const tokens = session.envelope.rcptTo.map((r) => addresses.tokenOf(r.address)).filter((t): t is string => t !== undefined);
        try {
          for (const token of new Set(tokens)) await apply(mail, token);
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
  };

  const server = new SMTPServer({
    name: addresses.domain,
    authOptional: true,
    // Mail arrives from other mail servers, which do not log in; TLS is the job of the relay or load balancer in front.
    disabledCommands: ["AUTH", "STARTTLS"],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onRcptTo: (address, _session, callback) => {
      callback(addresses.tokenOf(address.address) ? null : smtpError(550, "No such mailbox here"));
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
