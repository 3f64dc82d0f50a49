import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';

/**
 * Outgoing e-mail: sign-in links and notices to makers. With SMTP_URL, messages go out through
 * nodemailer; without it (the embedded default), each message is written to the service log
 * instead, so a local run needs no mail server (`catalog maker link EMAIL` prints a link too).
 */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  readonly kind: 'smtp' | 'log';
  close(): void;
}

export interface MailerOptions {
  smtpUrl: string | undefined;
  from: string;
  log: Logger;
  /** Told of every message handed on (tests read sign-in links from here). */
  onSend?: (message: MailMessage) => void;
}

export function createMailer(opts: MailerOptions): Mailer {
  // nodemailer is loaded with the first message that goes out through SMTP.
  let transport: Promise<Transporter> | undefined;
  const smtp = () => (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(opts.smtpUrl!)));
  return {
    kind: opts.smtpUrl ? 'smtp' : 'log',
    async send(message) {
      opts.onSend?.(message);
      if (!opts.smtpUrl) {
        opts.log.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'e-mail (SMTP_URL is not set, so it is logged instead of sent)');
        return;
      }
      await (await smtp()).sendMail({ from: opts.from, to: message.to, subject: message.subject, text: message.text });
    },
    close() {
      void transport?.then((t) => t.close()).catch(() => undefined);
    },
  };
}
