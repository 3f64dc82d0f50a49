import { createProjector } from '../../projector/projector.ts';
import { createMailer } from '../auth/mailer.ts';
import { createBadgeRecheckJob, type BadgeRecheckJob } from '../catalog/badges/badge-recheck-job.ts';
import type { Config } from '../config/config.ts';
import { migrate } from '../db/migrate.ts';
import { openDatabase } from '../db/open.ts';
import { createPool, type Pool } from '../db/pool.ts';
import { createSiteFetcher } from '../sites/safe-fetch.ts';
import { startHeartbeat } from '../ops/heartbeat.ts';
import type { Logger } from 'pino';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { logStartFailure } from './start-failure.ts';
import { createLogger, logWritten } from '../util/logger.ts';
import { isStopping, onStop, requestStop, setStopLog } from '../util/process-stop.ts';
import { startTracing, stopTracing } from '../util/tracing.ts';

const HELP = `usage: catalog projector [--data-dir DIR]

Runs the projector alone: streams committed changes of the write model into the projection
(products, category counts) and, when MEILI_URL is set, into Meilisearch. One projector is
active per database; another one started on the same database waits as standby and takes over
when the first one stops. SIGTERM, SIGINT or SIGHUP finishes the current batch and exits
(within 8 s; a second signal exits at once).
Also runs the daily badge re-checks (one process per database does; see README).
Uses DATABASE_URL, or the embedded PostgreSQL under DIR (default ./.data, or DATA_DIR).`;

export default async function projector(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { 'data-dir': { type: 'string' } }, HELP);
  if ('exitCode' in parsed) return parsed.exitCode;
  const config = configFromArgs(parsed.values);
  const logger = createLogger(config, { onOutputClosed: (err) => requestStop({ kind: 'output-closed', err }) });
  setStopLog(logger, () => logWritten(logger));
  return run(config, logger).catch(async (err: unknown) => {
    await logStartFailure(logger, err);
    throw err;
  });
}

async function run(config: Config, logger: Logger): Promise<number> {
  // Traces when OTEL_EXPORTER_OTLP_ENDPOINT asks for them (docs/operating.md#traces); sent last at a stop.
  if (await startTracing('projector')) onStop(() => stopTracing());
  const database = await openDatabase(config, (line) => logger.info(line));
  // Cleanups run newest first: the database closes last.
  onStop(() => database.close());
  if (isStopping()) return new Promise<number>(() => undefined);
  try {
    await migrate(database.connectionString, { log: (line) => logger.info(line) });
    // Without Meilisearch each API process feeds its embedded engine from the projection.
    const searchIndex = config.meili ? await (await import('../search/index.ts')).createSearchIndex(config) : undefined;
    const running = createProjector({
      connectionString: database.connectionString,
      siteUrl: config.siteUrl,
      // without SITE_URL/PUBLIC_URL the derived default names this command's unused address
      keepRecordedSiteUrl: !config.siteUrlConfigured,
      ...(searchIndex && { searchIndex }),
      batchSize: config.projector.batchSize,
      pollMs: config.projector.pollMs,
      changesRetentionHours: config.changesRetentionHours,
      log: logger,
      snapshotCacheDir: config.snapshotCacheDir,
    });
    onStop(() => searchIndex?.close());
    onStop(() => running.stop());
    await running.start();
    const pool = createPool(database.connectionString, { max: 2, applicationName: 'catalog projector' });
    onStop(() => pool.end());
    // Leading or standing by, for `catalog status` (src/ops/heartbeat.ts).
    const heartbeat = startHeartbeat({ db: pool, command: 'projector', state: () => ({ leads: running.isLeader, leaderSessionPid: running.leaderSessionPid }), log: logger.child({ component: 'heartbeat' }) });
    onStop(() => heartbeat.stop());
    const rechecks = await startBadgeRechecks(config, database.connectionString, pool, logger);
    // A stop finishes the current batch; one that cannot complete (say the database went away)
    // is cut short after the grace period, and a second signal ends the process at once.
    onStop(async () => {
      logger.info('projector stopping after the current batch');
      await rechecks?.job.stop();
      await rechecks?.close();
    });
  } catch (err) {
    if (isStopping()) return new Promise<number>(() => undefined);
    await database.close();
    throw err;
  }
  // The process ends when it stops (src/util/process-stop.ts exits with the status).
  return new Promise<number>(() => undefined);
}

/**
 * The badge re-checks look on makers' sites for links to the listing pages, so they need the
 * directory's real address: SITE_URL/PUBLIC_URL, or the one the projection was built with.
 * Without either they do not run here (a `catalog serve` process runs them too).
 */
async function startBadgeRechecks(config: Config, connectionString: string, pool: Pool, logger: Logger): Promise<{ job: BadgeRecheckJob; close(): Promise<void> } | undefined> {
  let urls = { siteUrl: config.siteUrl, publicUrl: config.publicUrl };
  if (!config.siteUrlConfigured) {
    const { rows } = await pool.query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
    const recorded = rows[0]?.site_url;
    if (!recorded) {
      logger.info('badge re-checks do not run in this process: set SITE_URL (or PUBLIC_URL) to the directory\'s address');
      return undefined;
    }
    urls = { siteUrl: recorded, publicUrl: recorded };
  }
  const fetcher = createSiteFetcher({ allowLoopback: config.fetchAllowLoopback });
  const mailer = createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, log: logger.child({ component: 'mail' }) });
  const job = createBadgeRecheckJob({ connectionString, pool, fetcher, urls, mailer, log: logger.child({ component: 'badge-rechecks' }) });
  await job.start();
  return {
    job,
    async close() {
      mailer.close();
      await fetcher.close();
    },
  };
}
