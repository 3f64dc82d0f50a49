import { parseEmail } from '../auth/makers.ts';
import { createSignInLink, safeReturnTo } from '../auth/sign-in-links.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { withWriteModel } from './with-write-model.ts';

const HELP = `usage: catalog maker link EMAIL [--return-to PATH] [--data-dir DIR]

Prints a fresh sign-in link for EMAIL (single use, valid 15 minutes), for operators and scripts
when no mail server is configured. The account is made when the link is first used.
--return-to PATH  where the browser goes after signing in (a path on this site; default /dashboard).
Links name PUBLIC_URL; without it, the address the service last ran under (as recorded by its
projector), else http://HOST:PORT.`;

export default async function makerCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' }, 'return-to': { type: 'string' } }, HELP, { allowPositionals: true });
  if ('exitCode' in parsed) return parsed.exitCode;
  const [action, email, ...extra] = parsed.positionals;
  if (action !== 'link' || email === undefined || extra.length > 0) {
    console.error(`catalog maker: expected 'link EMAIL'\n\n${HELP}`);
    return 2;
  }
  const address = parseEmail(email);
  if (!address.ok) {
    console.error(`catalog maker: ${address.message}`);
    return 2;
  }
  const returnTo = parsed.values['return-to'];
  if (typeof returnTo === 'string' && safeReturnTo(returnTo) === undefined) {
    console.error('catalog maker: --return-to must be a path on this site, such as /settings/apps');
    return 2;
  }
  const config = configFromArgs(parsed.values);
  const link = await withWriteModel(config, 'maker', (pool, urls) =>
    createSignInLink(pool, urls.publicUrl, address.email, typeof returnTo === 'string' ? returnTo : undefined),
  );
  process.stdout.write(`${link}\n`);
  return 0;
}
