import type { Config } from '../config/config.ts';
import { startEmbeddedPostgres, type EmbeddedSupervision } from './embedded.ts';

export interface OpenedDatabase {
  readonly connectionString: string;
  readonly embedded: boolean;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when configured, else the embedded PostgreSQL under the data folder; with
 * `supervise`, an embedded server this process started is started again should it die;
 * `onServerRunning` is called once a server this process starts is running, before it is ready.
 */
export async function openDatabase(
  config: Config,
  log: (line: string) => void = () => undefined,
  opts: { supervise?: EmbeddedSupervision; onServerRunning?: () => void } = {},
): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    return { connectionString: config.databaseUrl, embedded: false, close: async () => undefined };
  }
  const db = await startEmbeddedPostgres(config.dataDir, {
    log,
    ...(opts.supervise && { supervise: opts.supervise }),
    ...(opts.onServerRunning && { onServerRunning: opts.onServerRunning }),
  });
  return { connectionString: db.connectionString, embedded: true, close: () => db.stop() };
}

/**
 * What a long-running process does about the embedded PostgreSQL it started: say so while it is
 * started again in place, and hand over when it cannot be (the process should then stop with a
 * failure status).
 */
export function superviseEmbedded(
  log: { error(msg: string): void; info(msg: string): void },
  onGiveUp: (err: Error) => void,
): EmbeddedSupervision {
  return {
    onGiveUp,
    onDown: () => log.error('the embedded PostgreSQL stopped; reads go on from memory while it is started again'),
    onRestarted: () => log.info('the embedded PostgreSQL is running again; the service carries on'),
  };
}
