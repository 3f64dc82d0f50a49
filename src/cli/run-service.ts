import { openDatabase, superviseEmbedded } from '../db/open.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { checkPortFree, logStartFailure } from './start-failure.ts';
import { createLogger, logIsPretty, logWritten, writeToLogOutput } from '../util/logger.ts';
import { isStopping, onStop, requestStop, setStopLog } from '../util/process-stop.ts';
import { prefetchSnapshot } from '../read/snapshot-file.ts';
import { startTracing, stopTracing } from '../util/tracing.ts';

/**
 * Starts the service, prints where it listens, and stops it cleanly on SIGTERM, SIGINT or SIGHUP,
 * a lost standard output, or a lost embedded database (src/util/process-stop.ts, installed by
 * src/cli.ts before this runs; docs/signals.md).
 */
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
  const logger = createLogger(config, { onOutputClosed: (err) => requestStop({ kind: 'output-closed', err }) });
  setStopLog(logger, () => logWritten(logger));
  const demo = opts.demoFlag && !(parsed.values as Record<string, unknown>)['no-demo'];
  return start(config, logger, { projector: opts.projector, demo }).catch(async (err: unknown) => {
    await logStartFailure(logger, err);
    throw err;
  });
}

async function start(config: Config, logger: Logger, opts: { projector: boolean; demo: boolean }): Promise<number> {
  // A port another process holds is said at once, not after the database and the catalog load.
  await checkPortFree(config.host, config.port);
  // Traces when OTEL_EXPORTER_OTLP_ENDPOINT asks for them (docs/operating.md#traces); sent last at a stop.
  if (await startTracing(opts.projector ? 'serve' : 'api')) onStop(() => stopTracing());
  // The database starts (or is found) while the service's modules load. Loading them keeps
  // this process busy, so an embedded server is first set going: its process then starts on the
  // other core meanwhile, instead of after.
  let serverRunning!: () => void;
  const running = new Promise<void>((resolve) => (serverRunning = resolve));
  const opening = openDatabase(config, (line) => logger.info(line), {
    // The embedded PostgreSQL died and could not be started again: stop with a failure status,
    // so that whatever runs the service (a terminal, systemd, a container runtime) knows.
    supervise: superviseEmbedded(logger, (err) => requestStop({ kind: 'fatal', err })),
    onServerRunning: serverRunning,
  });
  opening.catch(() => undefined);
  // This host's copy of the catalog is read on libuv's threads meanwhile too; the database
  // then says whether it is the snapshot to load.
  const snapshotPrefetch = config.snapshotCacheDir ? prefetchSnapshot(config.snapshotCacheDir) : undefined;
  await Promise.race([running, opening.catch(() => undefined)]);
  const { startService } = await import('../service.ts');
  const database = await opening;
  // Cleanups run newest first: the database closes after the service.
  onStop(() => database.close());
  if (isStopping()) return new Promise<number>(() => undefined);
  let service;
  try {
    service = await startService(config, {
      projector: opts.projector,
      demo: opts.demo,
      logger,
      database,
      ...(snapshotPrefetch && { snapshotPrefetch }),
    });
  } catch (err) {
    if (isStopping()) return new Promise<number>(() => undefined);
    await database.close();
    throw err;
  }
  onStop(async () => {
    // Requests still running (an export, a slow client) are cut after 5 s, within the grace.
    const cut = setTimeout(() => service.app.server.closeAllConnections(), 5_000);
    cut.unref();
    await service.close();
    clearTimeout(cut);
  });
  if (isStopping()) return new Promise<number>(() => undefined);
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
  if (logIsPretty(config)) writeToLogOutput(logger, `${lines.join('\n')}\n`);
  else {
    const banner = { level: 30, time: Date.now(), msg: lines[0], rest: `${base}/api/v1`, docs: `${base}/api/v1/docs`, mcp: `${base}/api/mcp`, makers: `${base}/signin`, liveListings: service.mirror.size };
    writeToLogOutput(logger, `${JSON.stringify(banner)}\n`);
  }

  stopWithNpm();
  // The process ends when it stops (process-stop.ts exits with the status).
  return new Promise<number>(() => undefined);
}

/**
 * Under `npm start`, a SIGTERM sent to npm is not passed on: npm exits and the service would go
 * on running with no one to stop it. When the process that started us goes away, stop as if
 * signalled (a stop already under way, say on the SIGHUP of a closed terminal, goes on as it is).
 * Outside npm the parent is left alone: `setsid catalog serve` outlives its shell (docs/signals.md).
 */
function stopWithNpm(): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      requestStop({ kind: 'parent-gone' });
    }
  }, 1000);
  timer.unref();
}
