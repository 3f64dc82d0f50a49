import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';

/**
 * How many connections one process holds at once (docs/connections.md). Each takes a file
 * descriptor; a process out of descriptors fails at whatever needs one next: a database
 * connection, a snapshot file, the connection itself (which the kernel completed and the
 * process then drops without a word). So the server stops taking connections a reserve short
 * of the limit: MAX_CONNECTIONS, or by default DEFAULT_MAX_CONNECTIONS or the process's
 * file-descriptor limit (which Node raises to the hard limit at start) less DESCRIPTOR_RESERVE,
 * whichever is lower; each connection holds about 10 kB as well. Past the cap a new connection
 * is closed at once, the open ones are served, and the log says so once a minute at most.
 */

/** How often Node looks for requests whose headers or body are late (its default is 30 s). */
const CONNECTIONS_CHECK_MS = 1000;

/**
 * The server's deadlines, as Fastify's options: a connection silent for 30 s is closed, an idle
 * keep-alive one after 72 s (longer than the 60 s proxies and load balancers commonly keep one);
 * headers must all arrive within HEADERS_TIMEOUT_SECONDS and the whole request, body included,
 * within REQUEST_TIMEOUT_SECONDS of its first byte (of the connection, for its first request),
 * else 408 and the connection closes. Node looks for late requests every CONNECTIONS_CHECK_MS,
 * so one is cut at most that much after its deadline. Long polls lift the idle deadline for
 * their wait (feed/feed-routes.ts); a request whose headers and body have arrived has no deadline but
 * the idle one.
 */
export function serverTimeouts(config: Pick<Config, 'connections'>) {
  const { headersTimeoutSeconds, requestTimeoutSeconds } = config.connections;
  return {
    connectionTimeout: 30_000,
    keepAliveTimeout: 72_000,
    requestTimeout: requestTimeoutSeconds * 1000,
    http: { headersTimeout: headersTimeoutSeconds * 1000, requestTimeout: requestTimeoutSeconds * 1000, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
  };
}

/** Descriptors kept for everything but client connections: the database pool, Redis, files. */
export const DESCRIPTOR_RESERVE = 128;

/** The cap when MAX_CONNECTIONS is not set and the descriptors allow more (about 160 MB of connections). */
export const DEFAULT_MAX_CONNECTIONS = 16_384;

/** The process's open-file limit (the soft one, now), or undefined where /proc does not tell. */
export function fileDescriptorLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** The cap: the setting, else DEFAULT_MAX_CONNECTIONS or the descriptor limit less the reserve (at least 16), the lower. */
export function connectionCap(setting: number | undefined, descriptors: number | undefined): number {
  if (setting !== undefined) return setting;
  if (descriptors === undefined) return DEFAULT_MAX_CONNECTIONS;
  return Math.min(DEFAULT_MAX_CONNECTIONS, Math.max(16, descriptors - DESCRIPTOR_RESERVE));
}

const WARN_EVERY_MS = 60_000;

/** Applies the cap to the server and reports refusals (and any later failure of the listening socket). */
export function limitConnections(server: Server, setting: number | undefined, logger: Logger | undefined): number {
  const descriptors = fileDescriptorLimit();
  const cap = connectionCap(setting, descriptors);
  server.maxConnections = cap;
  if (descriptors !== undefined && cap > descriptors - DESCRIPTOR_RESERVE) {
    logger?.warn(
      { maxConnections: cap, fileDescriptorLimit: descriptors },
      `MAX_CONNECTIONS (${cap}) is more than the file-descriptor limit (${descriptors}) allows with ${DESCRIPTOR_RESERVE} kept for the database and files: raise the limit (ulimit -n, LimitNOFILE)`,
    );
  }
  let lastWarning = 0;
  const warnOnce = (fields: object, message: string) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    logger?.error(fields, message);
  };
  server.on('drop', () =>
    warnOnce(
      { maxConnections: cap, fileDescriptorLimit: descriptors },
      `holding ${cap} connections, as many as allowed: new connections are being closed at once while open ones are served; ` +
        'raise MAX_CONNECTIONS and the file-descriptor limit (ulimit -n, LimitNOFILE), or run more processes (docs/connections.md)',
    ),
  );
  // Once listening (a failure to listen is listen()'s own error). Without a listener an error
  // of the listening socket would end the process.
  server.once('listening', () =>
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EMFILE' || err.code === 'ENFILE') {
        warnOnce(
          { err: { code: err.code, message: err.message } },
          'out of file descriptors: new connections are being dropped while open ones are served; raise the limit (ulimit -n, LimitNOFILE) or lower MAX_CONNECTIONS (docs/connections.md)',
        );
      } else logger?.error({ err }, 'the listening socket failed');
    }),
  );
  return cap;
}
