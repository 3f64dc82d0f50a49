import cliProgress from 'cli-progress';
import { reindex } from '../../projector/reindex.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { createPool } from '../db/pool.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { createLogger } from '../util/logger.ts';

const HELP = `usage: catalog reindex [--data-dir DIR]

Rebuilds the projection (products, category counts) from the write model in one transaction,
so reads see the old catalog until the new one is complete, never a partial or empty one; then,
when MEILI_URL is set, replaces the Meilisearch index's content with it (an atomic swap).
Shows a progress bar on a terminal and prints a summary line.
Uses DATABASE_URL, or the embedded PostgreSQL under DIR (default ./.data, or DATA_DIR).`;

export default async function reindexCommand(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' } }, HELP);
  if ('exitCode' in parsed) return parsed.exitCode;
  const config = configFromArgs(parsed.values);
  const logger = createLogger(config, { stderr: true });
  const database = await openDatabase(config, (line) => logger.info(line));
  const pool = createPool(database.connectionString, { max: 2, applicationName: 'catalog reindex' });
  const searchIndex = config.meili ? await (await import('../search/index.ts')).createSearchIndex(config) : undefined;
  const bar = process.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: '{phase} [{bar}] {percentage}% | {value}/{total}', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let phase: string | undefined;
  try {
    await migrate(database.connectionString, { log: (line) => logger.info(line) });
    const summary = await reindex({
      pool,
      siteUrl: config.siteUrl,
      // without SITE_URL/PUBLIC_URL the derived default names this command's unused address
      keepRecordedSiteUrl: !config.siteUrlConfigured,
      ...(searchIndex && { searchIndex }),
      log: logger,
      onProgress: (p, done, total) => {
        if (!bar) return;
        const label = p === 'projection' ? 'projection  ' : 'search index';
        if (phase !== p) {
          if (phase) bar.stop();
          phase = p;
          bar.start(total, done, { phase: label });
        } else {
          bar.setTotal(total);
          bar.update(done, { phase: label });
        }
      },
    });
    bar?.stop();
    const search = summary.searchDocuments === undefined ? '' : `, ${summary.searchDocuments} documents in the search index`;
    process.stdout.write(
      `reindexed: ${summary.products} live products, ${summary.removed} removed, ${summary.categories} categories${search}, ` +
        `${summary.changes} ${summary.changes === 1 ? 'change' : 'changes'} in the change feed; ` +
        `projection version ${summary.version} (${(summary.durationMs / 1000).toFixed(1)} s)\n`,
    );
    return 0;
  } finally {
    bar?.stop();
    await searchIndex?.close();
    await pool.end();
    await database.close();
  }
}
