import { simpleParser } from "mailparser";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import type { CaughtMail } from "./domain/invites.js";

/**
 * A real SMTP server on loopback that accepts every message and keeps what
 * the invite count needs: envelope recipients, Message-ID and the
 * text/calendar part. A sender killed mid-conversation (the invites process,
 * on purpose) only ends its own connection.
 */
export class MailCatcher {
  readonly mails: CaughtMail[] = [];
  /** Connections that ended in an error, such as a sender that died. */
  brokenConnections = 0;
  private readonly server: SMTPServer;

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((mail) => {
            const calendar = mail.attachments.find((a) => a.contentType.startsWith("text/calendar"))?.content.toString("utf8");
            // nodemailer's icalEvent may arrive as an alternative text body rather than an attachment.
            const ics = calendar ?? (typeof mail.text === "string" && mail.text.includes("BEGIN:VCALENDAR") ? mail.text : undefined);
            this.mails.push({
              recipients: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              ...(mail.messageId ? { messageId: mail.messageId } : {}),
              ...(ics !== undefined ? { ics } : {}),
            });
            callback();
          })
          .catch((err: Error) => callback(err));
      },
    });
    this.server.on("error", () => this.brokenConnections++);
  }

  /** Listens on a free loopback port; resolves with the SMTP_URL that reaches it. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
