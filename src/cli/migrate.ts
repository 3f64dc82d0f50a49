import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';

const HELP = `usage: catalog migrate [--data-dir DIR]

Applies the pending database migrations (migrations/NNN_name.sql, in order, each in its own
transaction) and prints one line per file applied, then a summary. Safe to run while other
catalog processes start: an advisory lock makes every file apply exactly once.
Uses DATABASE_URL, or the embedded PostgreSQL under DIR (default ./.data, or DATA_DIR).`;

export default async function migrateCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' } }, HELP);
  if ('exitCode' in parsed) return parsed.exitCode;
  const config = configFromArgs(parsed.values);
  const database = await openDatabase(config, (line) => process.stderr.write(`${line}\n`));
  try {
    const applied = await migrate(database.connectionString, { log: (line) => process.stdout.write(`${line}\n`) });
    process.stdout.write(
      applied.length === 0
        ? 'database is up to date\n'
        : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}; database is up to date\n`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
