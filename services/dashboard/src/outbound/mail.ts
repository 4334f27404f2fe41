import type { Logger } from "@sched/logging";
import nodemailer, { type Transporter } from "nodemailer";

/** Sends sign-in links by e-mail through SMTP_URL; without one, links can only come from an operator. */
export class SignInMailer {
  private readonly transport: Transporter | undefined;

  constructor(
    private readonly settings: { smtpUrl: string | undefined; from: string; timeoutMs: number },
    private readonly logger: Logger,
  ) {
    this.transport = settings.smtpUrl
      ? nodemailer.createTransport({ url: settings.smtpUrl, connectionTimeout: settings.timeoutMs, greetingTimeout: settings.timeoutMs, socketTimeout: settings.timeoutMs })
      : undefined;
  }

  /** Whether a link can be sent at all. */
  get configured(): boolean {
    return this.transport !== undefined;
  }

  async send(to: string, url: string): Promise<void> {
    if (!this.transport) {
      this.logger.warn("a sign-in link was asked for by e-mail, but no SMTP_URL is set");
      return;
    }
    await this.transport.sendMail({
      from: this.settings.from,
      to,
      subject: "Your sign-in link",
      text: `Open this link to sign in to the dashboard. It works once, within 15 minutes:\n\n${url}\n\nIf you did not ask for it, ignore this message.`,
    });
  }

  close(): void {
    this.transport?.close();
  }
}
