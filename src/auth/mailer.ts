import nodemailer, { type Transporter } from 'nodemailer';
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
  let transport: Transporter | undefined;
  if (opts.smtpUrl) transport = nodemailer.createTransport(opts.smtpUrl);
  return {
    kind: transport ? 'smtp' : 'log',
    async send(message) {
      opts.onSend?.(message);
      if (!transport) {
        opts.log.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'e-mail (SMTP_URL is not set, so it is logged instead of sent)');
        return;
      }
      await transport.sendMail({ from: opts.from, to: message.to, subject: message.subject, text: message.text });
    },
    close() {
      transport?.close();
    },
  };
}
