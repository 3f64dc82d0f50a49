import net from 'node:net';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { logWritten } from '../util/logger.ts';
import { StartupError } from '../util/startup-error.ts';

/**
 * What the `catalog` command says when it cannot start or run: one line per cause on stderr,
 * naming it and the fix, and the exit status. A stack is no help to an operator: the process
 * logs it at debug level (LOG_LEVEL=debug) for the one who reports a bug.
 */
export interface Failure {
  lines: string[];
  exitCode: number;
}

/** Exit status of a command that met an unreachable database: try again later (sysexits' EX_TEMPFAIL). */
export const EXIT_TEMPORARY_FAILURE = 75;

/**
 * The one line about a failure to listen on HOST:PORT (node's listen error), or undefined for
 * another error.
 */
function listenFailure(err: unknown, host?: string, port?: number): string | undefined {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (typeof e !== 'object' || e === null || e.syscall !== 'listen') return undefined;
  const address = e.address ?? host;
  const at = `port ${e.port ?? port} on ${address}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return `${at} is in use by another process: stop it, or set PORT to a free port`;
    case 'EACCES':
      return `${at} may not be listened on by this user (ports below 1024 need privileges): set PORT to 1024 or above, or grant the process CAP_NET_BIND_SERVICE`;
    case 'EADDRNOTAVAIL':
      return `${address} is not an address of this machine: set HOST to one of its addresses, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`;
    default:
      return undefined;
  }
}

/**
 * Fails at once, before the database starts, when the service's port cannot be listened on (taken
 * by another process, say), instead of after the whole start; listening itself says so too should
 * the port be taken in between. PORT=0 (any free port) needs no look.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port }, resolve);
    });
  } catch (err) {
    const line = listenFailure(err, host, port);
    if (line) throw new StartupError(line, { cause: err });
    if ((err as NodeJS.ErrnoException).syscall === 'getaddrinfo') {
      throw new StartupError(`HOST ${host} is not a name this machine can resolve (${(err as NodeJS.ErrnoException).code}): set HOST to an address of this machine, e.g. 127.0.0.1`, { cause: err });
    }
    throw err;
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * The lines and status for an error that ended a command. `longRunning` (serve, api, projector):
 * an unforeseen error is one line too (its stack is in the log at debug level); a one-off
 * command's is printed with its stack, as a bug to report.
 */
export function describeFailure(err: unknown, opts: { longRunning: boolean }): Failure {
  if (err instanceof ConfigError) {
    const lines =
      err.problems.length > 0
        ? err.problems.map((p) => `${p.variable}${p.given === undefined ? ' (unset)' : `=${p.given}`}: ${p.message}`)
        : err.message.split('\n');
    return { lines: lines.map((line) => `catalog: configuration error: ${line}`), exitCode: 1 };
  }
  if (err instanceof StartupError) return { lines: [`catalog: ${err.message}`], exitCode: 1 };
  const listening = listenFailure(err);
  if (listening) return { lines: [`catalog: ${listening}`], exitCode: 1 };
  if (isDatabaseUnavailable(err)) {
    // Not a bug: say what happened in one line, with an exit status scripts can retry on.
    return { lines: [`catalog: the database cannot be reached (${(err as Error).message}); retry once it is back`], exitCode: EXIT_TEMPORARY_FAILURE };
  }
  if (opts.longRunning) {
    const message = err instanceof Error ? err.message : String(err);
    const first = message.split('\n', 1)[0]!.trim() || 'an unexpected error';
    return { lines: [`catalog: could not start: ${first} (LOG_LEVEL=debug writes the details to the log)`], exitCode: 1 };
  }
  return { lines: [`catalog: ${(err as Error)?.stack ?? String(err)}`], exitCode: 1 };
}

/**
 * Logs why a long-running command could not start, stack included, at debug level (the operator
 * reads the line on stderr), and waits until it is written.
 */
export async function logStartFailure(logger: Logger, err: unknown): Promise<void> {
  logger.debug({ err }, 'the start failed');
  await logWritten(logger);
}
