import { findMakerByEmail, findOrCreateMaker, setAdmin, parseEmail } from '../auth/makers.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { withWriteModel } from './with-write-model.ts';

const HELP = `usage: catalog admin grant EMAIL | revoke EMAIL | list  [--data-dir DIR]

grant   makes EMAIL an admin (the account is made if it does not exist yet): admins see the
        review queue at /admin/review and may decide listings.
revoke  takes the admin role away (the account stays).
list    prints the admins' addresses, one per line.`;

export default async function adminCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' } }, HELP, { allowPositionals: true });
  if ('exitCode' in parsed) return parsed.exitCode;
  const [action, email, ...extra] = parsed.positionals;
  const config = configFromArgs(parsed.values);
  if (action === 'list' && email === undefined) {
    const admins = await withWriteModel(config, 'admin', async (pool) =>
      (await pool.query<{ email: string }>('SELECT email FROM catalog.makers WHERE is_admin ORDER BY lower(email)')).rows.map((r) => r.email),
    );
    if (admins.length) process.stdout.write(`${admins.join('\n')}\n`);
    return 0;
  }
  if ((action !== 'grant' && action !== 'revoke') || email === undefined || extra.length > 0) {
    console.error(`catalog admin: expected 'grant EMAIL', 'revoke EMAIL' or 'list'\n\n${HELP}`);
    return 2;
  }
  const address = parseEmail(email);
  if (!address.ok) {
    console.error(`catalog admin: ${address.message}`);
    return 2;
  }
  return withWriteModel(config, 'admin', async (pool) => {
    if (action === 'grant') {
      const maker = await findOrCreateMaker(pool, address.email);
      await setAdmin(pool, maker.id, true);
      process.stdout.write(`${maker.email} is an admin\n`);
      return 0;
    }
    const maker = await findMakerByEmail(pool, address.email);
    if (!maker) {
      console.error(`catalog admin: no account has the address ${address.email}`);
      return 1;
    }
    await setAdmin(pool, maker.id, false);
    process.stdout.write(`${maker.email} is no longer an admin\n`);
    return 0;
  });
}
