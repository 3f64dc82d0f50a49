import closeWithGrace from 'close-with-grace';
import { openDatabase, superviseEmbedded } from '../db/open.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { createLogger, logIsPretty } from '../util/logger.ts';
import { prefetchSnapshot } from '../read/snapshot-file.ts';

/** Starts the service, prints where it listens, and stops it cleanly on SIGINT/SIGTERM. */
export async function runService(args: string[], help: string, opts: { projector: boolean; demoFlag: boolean }): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    {
      'data-dir': { type: 'string' },
      ...(opts.demoFlag ? { 'no-demo': { type: 'boolean' as const } } : {}),
    },
    help,
  );
  if ('exitCode' in parsed) return parsed.exitCode;
  const config = configFromArgs(parsed.values);
  const logger = createLogger(config);
  // The embedded PostgreSQL died and could not be started again: stop with a failure status, so
  // that whatever runs the service (a terminal, systemd, a container runtime) knows.
  let databaseLost: Error | undefined;
  let stopNow: (() => void) | undefined;
  // The database starts (or is found) while the service's modules load. Loading them keeps
  // this process busy, so an embedded server is first set going: its process then starts on the
  // other core meanwhile, instead of after.
  let serverRunning!: () => void;
  const running = new Promise<void>((resolve) => (serverRunning = resolve));
  const opening = openDatabase(config, (line) => logger.info(line), {
    supervise: superviseEmbedded(logger, (err) => {
      databaseLost = err;
      stopNow?.();
    }),
    onServerRunning: serverRunning,
  });
  opening.catch(() => undefined);
  // This host's copy of the catalog is read on libuv's threads meanwhile too; the database
  // then says whether it is the snapshot to load.
  const snapshotPrefetch = config.snapshotCacheDir ? prefetchSnapshot(config.snapshotCacheDir) : undefined;
  await Promise.race([running, opening.catch(() => undefined)]);
  const { startService } = await import('../service.ts');
  const database = await opening;
  let service;
  try {
    service = await startService(config, {
      projector: opts.projector,
      demo: opts.demoFlag && !(parsed.values as Record<string, unknown>)['no-demo'],
      logger,
      database,
      ...(snapshotPrefetch && { snapshotPrefetch }),
    });
  } catch (err) {
    await database.close();
    throw err;
  }
  // With PORT=0 the configured origin names no real port: show the address actually bound.
  const base = config.port === 0 ? service.url : config.publicUrl;
  const lines = [
    `catalog ${opts.projector ? 'service' : 'API'} listening on ${service.url}`,
    `  REST API      ${base}/api/v1  (e.g. ${base}/api/v1/search?q=design)`,
    `  API reference ${base}/api/v1/docs`,
    `  MCP endpoint  ${base}/api/mcp`,
    `  Makers        ${base}/signin  (without SMTP_URL, sign-in links are written to the log)`,
    `  ${service.mirror.size} live listings; database ${config.databaseUrl ? 'from DATABASE_URL' : `embedded, data in ${config.dataDir}`}`,
  ];
  // With JSON logs on the same output, the banner is one more JSON line (at info, shown whatever
  // LOG_LEVEL says, like the readable banner), so every line of the output parses.
  if (logIsPretty(config)) process.stdout.write(`${lines.join('\n')}\n`);
  else {
    const banner = { level: 30, time: Date.now(), msg: lines[0], rest: `${base}/api/v1`, docs: `${base}/api/v1/docs`, mcp: `${base}/api/mcp`, makers: `${base}/signin`, liveListings: service.mirror.size };
    process.stdout.write(`${JSON.stringify(banner)}\n`);
  }

  stopWithNpm();
  return new Promise<number>((resolve) => {
    const closer = closeWithGrace({ delay: 15_000, logger: false }, async ({ signal, err }) => {
      if (err) logger.error({ err }, 'stopping after an unexpected error');
      else if (databaseLost) logger.fatal({ err: databaseLost }, `stopping: ${databaseLost.message}`);
      else logger.info({ signal }, 'stopping');
      await service.close();
      await database.close();
      // close-with-grace ends the process once this returns, with status 0 unless it was an
      // error it caught itself: a lost database must end it with a failure status.
      if (databaseLost) process.exit(1);
      resolve(err ? 1 : 0);
    });
    stopNow = () => closer.close();
    if (databaseLost) stopNow();
  });
}

/**
 * Under `npm start`, a SIGTERM sent to npm is not passed on: npm exits and the service would go
 * on running with no one to stop it. When the process that started us goes away, stop as if
 * signalled. (Outside npm the parent is left alone: `nohup catalog serve &` must survive its shell.)
 */
function stopWithNpm(): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 1000);
  timer.unref();
}
