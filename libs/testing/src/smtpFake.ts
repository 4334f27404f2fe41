import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface CapturedMail {
  envelopeTo: string[];
  mail: ParsedMail;
  /** The text/calendar part, as sent. */
  ics: string | undefined;
}

/**
 * A real SMTP server on loopback that keeps every message. `refuse` makes it
 * answer RCPT TO for an address with the given code (450: try later, 550: never);
 * `answerDelayMs` holds back its answer to a message it has taken (a slow relay).
 * A sender that dies mid-conversation (a reset connection) ends only its own
 * connection, as with a real relay.
 */
export class SmtpFake {
  readonly messages: CapturedMail[] = [];
  answerDelayMs = 0;
  /** Connections that ended in an error, such as a sender that died. */
  brokenConnections = 0;
  private readonly refusals = new Map<string, number>();
  private readonly server: SMTPServer;

  constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        const code = this.refusals.get(address.address.toLowerCase());
        if (code === undefined) return callback();
        const err = Object.assign(new Error(code >= 500 ? "No such user" : "Try again later"), { responseCode: code });
        callback(err);
      },
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((mail) => {
            const calendar = mail.attachments.find((a) => a.contentType.startsWith("text/calendar"));
            const ics = calendar ? calendar.content.toString("utf8") : undefined;
            this.messages.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), mail, ics: ics ?? textCalendar(mail) });
            setTimeout(callback, this.answerDelayMs);
          })
          .catch((err: Error) => callback(err));
      },
    });
    // Without a listener, the first reset connection would throw and end the whole process.
    this.server.on("error", () => this.brokenConnections++);
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.server.address() as AddressInfo;
    return `smtp://127.0.0.1:${port}`;
  }

  refuse(address: string, code: number | undefined): void {
    if (code === undefined) this.refusals.delete(address);
    else this.refusals.set(address, code);
  }

  to(address: string): CapturedMail[] {
    return this.messages.filter((m) => m.envelopeTo.includes(address));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** nodemailer's icalEvent may arrive as an alternative body rather than an attachment. */
function textCalendar(mail: ParsedMail): string | undefined {
  const text = typeof mail.text === "string" && mail.text.includes("BEGIN:VCALENDAR") ? mail.text : undefined;
  return text;
}
