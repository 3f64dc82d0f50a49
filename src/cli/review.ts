import { createMailer } from '../auth/mailer.ts';
import { findMakerByEmail, parseEmail } from '../auth/makers.ts';
import { decideListing } from '../catalog/review/review.ts';
import { listReviewQueue } from '../catalog/review/review-queue.ts';
import { ACTION_PAST, type ReviewAction } from '../catalog/review/review-rules.ts';
import { CatalogError } from '../contract/errors.ts';
import { ErrorCode, SLUG_PATTERN } from '../contract/schemas.ts';
import { createLogger } from '../util/logger.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { withWriteModel } from './with-write-model.ts';

const HELP = `usage: catalog review list
       catalog review ACTION SLUG [--feedback TEXT] [--as EMAIL]
       [--data-dir DIR]

list     prints the review queue, oldest request first, one listing a line, tab-separated:
         slug, when it asked for review (ISO 8601), the maker's e-mail (- for none), the
         automatic check's reasons (comma-separated codes, - for none), name.
ACTION   decides about the listing SLUG and prints one line:
           approve          make it live (feedback optional)
           reject           reject it for good (--feedback required)
           request-changes  send it back to the maker (--feedback required)
           hide             hide it until restored (feedback optional)
           restore          bring a hidden listing back where it was
           feature          feature a live listing
           unfeature        stop featuring it
         The maker sees the feedback in my_listings and on the dashboard, and is e-mailed on
         approve, reject and request-changes (through SMTP_URL, or the log without it).
--as EMAIL  records the decision as this admin's; without it, as the directory's own.

Exit status: 0 done; 1 no listing has SLUG, or its state does not allow the action; 2 bad input.`;

const ACTIONS: Readonly<Record<string, ReviewAction>> = {
  approve: 'approve',
  reject: 'reject',
  'request-changes': 'request_changes',
  hide: 'hide',
  restore: 'restore',
  feature: 'feature',
  unfeature: 'unfeature',
};

function usageError(message: string): number {
  console.error(`catalog review: ${message}\n\n${HELP}`);
  return 2;
}

export default async function reviewCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' }, feedback: { type: 'string' }, as: { type: 'string' } }, HELP, { allowPositionals: true });
  if ('exitCode' in parsed) return parsed.exitCode;
  const [verb, slug, ...extra] = parsed.positionals;
  const feedback = parsed.values.feedback;
  const as = parsed.values.as;
  const config = configFromArgs(parsed.values);

  if (verb === 'list') {
    if (slug !== undefined || feedback !== undefined || as !== undefined) return usageError("'list' takes no slug, --feedback or --as");
    const { items } = await withWriteModel(config, 'review', (pool, urls) => listReviewQueue(pool, urls));
    const lines = items.map((i) =>
      [i.slug, (i.requestedAt ?? i.createdAt).toISOString(), i.makerEmail ?? '-', i.reasons.map((r) => r.code).join(',') || '-', oneLine(i.name)].join('\t'),
    );
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }

  const action = verb === undefined ? undefined : ACTIONS[verb];
  if (!action) return usageError(verb === undefined ? 'expected list or an action' : `unknown action '${verb}'`);
  if (slug === undefined || extra.length > 0) return usageError(`expected '${verb} SLUG'`);
  if (!SLUG_PATTERN.test(slug) || slug.length > 200) return usageError(`'${slug.slice(0, 200)}' is not a slug: lowercase letters, digits and single hyphens`);
  let asEmail: string | undefined;
  if (as !== undefined) {
    const address = parseEmail(as);
    if (!address.ok) return usageError(`--as: ${address.message}`);
    asEmail = address.email;
  }

  const logger = createLogger(config, { stderr: true });
  const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, log: logger.child({ component: 'mail' }) });
  try {
    return await withWriteModel(config, 'review', async (pool, urls) => {
      let decidedBy: string | null = null;
      if (asEmail !== undefined) {
        const admin = await findMakerByEmail(pool, asEmail);
        if (!admin?.isAdmin) {
          console.error(`catalog review: ${asEmail} is not an admin (catalog admin grant EMAIL makes one)`);
          return 2;
        }
        decidedBy = admin.id;
      }
      try {
        const decision = await decideListing(
          { pool, urls, mailer, onMailError: (err) => logger.error({ err }, 'the e-mail to the maker could not be sent') },
          slug,
          { action, feedback, decidedBy },
        );
        const mailed = await decision.notified;
        process.stdout.write(`${decision.listing.slug}: ${ACTION_PAST[action]} (${decision.from} -> ${decision.to})${mailed ? '; the maker was e-mailed' : ''}\n`);
        return 0;
      } catch (err) {
        if (!(err instanceof CatalogError)) throw err;
        const detail = err.issues?.map((i) => i.message).join(' ') ?? err.message;
        console.error(`catalog review: ${detail}`);
        return err.code === ErrorCode.BAD_REQUEST || err.code === ErrorCode.FORBIDDEN ? 2 : 1;
      }
    });
  } finally {
    mailer.close();
  }
}

/** A name printed in a tab-separated line keeps to its column. */
function oneLine(text: string): string {
  return text.replace(/[\t\r\n]+/g, ' ');
}
