import { fileURLToPath } from 'node:url';
import { PROJECTOR_LEADER_LOCK } from '../../src/db/locks.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { spawnNode, type Child } from '../processes.ts';
import type { ClusterDatabase } from './database.ts';
import type { MakerSites } from './maker-sites.ts';
import { freeLoopbackPort, type RedisServer } from './redis-server.ts';

/**
 * The service as docs/operating.md's "One process or a cluster" section runs it: N `catalog api`
 * processes and M `catalog projector` processes (real child processes of bin/catalog.js) on one
 * PostgreSQL and one Redis. Each API process keeps its port across restarts, as behind a proxy;
 * every process logs JSON, which the run reads (sign-in mails, leadership, scheduled jobs).
 */
interface LogLine {
  readonly msg?: string;
  readonly level?: number;
  readonly time?: number;
  readonly [key: string]: unknown;
}

export interface CatalogNode {
  readonly kind: 'api' | 'projector';
  readonly name: string;
  /** The API process's address (fixed across restarts); undefined for a projector. */
  readonly url: string | undefined;
  /** Every JSON log line of every run of this node, oldest first. */
  readonly logs: LogLine[];
  /** The running process, if any. */
  readonly child: Child | undefined;
  /** A projector's own account of whether it leads (its latest leadership log line). */
  readonly leading: boolean;
  /** How many times it was started. */
  readonly starts: number;
}

export interface ClusterOptions {
  database: ClusterDatabase;
  redis: RedisServer;
  sites: MakerSites;
  apis: number;
  projectors: number;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Run once the cluster's public address is known, before any process starts (the catalog it starts from). */
  prepare?: (publicUrl: string) => Promise<void>;
}

export interface Cluster {
  readonly publicUrl: string;
  readonly apis: readonly CatalogNode[];
  readonly projectors: readonly CatalogNode[];
  /** A pool of the run's own on the cluster's database (for checks), reconnecting after restarts. */
  readonly pool: Pool;
  readonly database: ClusterDatabase;
  readonly redis: RedisServer;
  readonly sites: MakerSites;
  /** The environment every catalog process gets (for one-off commands such as `catalog review`). */
  readonly env: Record<string, string>;
  /** Starts (or starts again) a node; resolves once an API answers /readyz 200, or a projector has decided whether it leads. */
  start(node: CatalogNode): Promise<void>;
  /** SIGKILL to the node's process; resolves once it has exited. */
  kill(node: CatalogNode): Promise<void>;
  /** The projector processes that say they lead and are running. */
  leaders(): CatalogNode[];
  /** Sessions holding the projector's leader lock, as pg_locks shows them. */
  leaderLocks(): Promise<number>;
  /** Every log line of every node, with the node's name. */
  allLogs(): { node: string; line: LogLine }[];
  stop(): Promise<void>;
}

const LOOPBACK_NAMES = fileURLToPath(new URL('./loopback-names.js', import.meta.url));
const LISTENING = /catalog API listening on (http:\/\/[^\s"]+)/;

interface MutableNode {
  kind: 'api' | 'projector';
  name: string;
  url: string | undefined;
  port: number | undefined;
  logs: LogLine[];
  child: Child | undefined;
  leading: boolean;
  starts: number;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const apiPorts = await Promise.all(Array.from({ length: opts.apis }, () => freeLoopbackPort()));
  const publicUrl = `http://127.0.0.1:${apiPorts[0]}`;
  const env: Record<string, string> = {
    DATABASE_URL: opts.database.url,
    REDIS_URL: opts.redis.url,
    PUBLIC_URL: publicUrl,
    SITE_URL: publicUrl,
    HOST: '127.0.0.1',
    TRUST_PROXY: 'true',
    FETCH_ALLOW_LOOPBACK: 'true',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    MEILI_URL: '',
    SMTP_URL: '',
    // The maker workload writes far faster than any maker could through one app (a stress, not
    // a use): signed-in makers' budgets are lifted; addresses keep the spec's.
    RATE_LIMIT_SIGNED_IN_SEARCH_PER_MIN: '10000000',
    RATE_LIMIT_SIGNED_IN_OTHER_PER_MIN: '10000000',
    ...opts.env,
  };
  const nodes: MutableNode[] = [
    ...apiPorts.map((port, i) => ({ kind: 'api' as const, name: `api-${i + 1}`, url: `http://127.0.0.1:${port}`, port, logs: [], child: undefined, leading: false, starts: 0 })),
    ...Array.from({ length: opts.projectors }, (_, i) => ({ kind: 'projector' as const, name: `projector-${i + 1}`, url: undefined, port: undefined, logs: [], child: undefined, leading: false, starts: 0 })),
  ];
  await opts.prepare?.(publicUrl);
  const pool = createPool(opts.database.url, { max: 4, applicationName: 'cluster run' });

  function onLine(node: MutableNode, text: string): void {
    if (!text.startsWith('{')) return;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    node.logs.push(line);
    // The projector's own lines (the badge re-checks' carry a component): leading, or standing by.
    if (node.kind === 'projector' && line.component === undefined && typeof line.msg === 'string') {
      if (line.msg === 'projector is leading') node.leading = true;
      else if (/standing by/.test(line.msg)) node.leading = false;
    }
  }

  async function start(n: CatalogNode): Promise<void> {
    const node = n as MutableNode;
    if (node.child) return;
    node.starts++;
    node.leading = false;
    const child = spawnNode(node.name, {
      args: ['bin/catalog.js', node.kind],
      nodeOptions: ['--import', LOOPBACK_NAMES],
      env: { ...env, PORT: String(node.port ?? 0) },
      onLine: (text) => onLine(node, text),
    });
    node.child = child;
    void child.exited.then(() => {
      if (node.child === child) {
        node.child = undefined;
        node.leading = false;
      }
    });
    if (node.kind === 'projector') {
      await child.waitForLine(/projector is leading|another projector is leading/, 90_000);
      return;
    }
    await child.waitForLine(LISTENING, 90_000);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = await fetch(`${node.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return;
      if (!node.child) throw new Error(`${node.name} exited while starting:\n${child.tail()}`);
      if (Date.now() > deadline) throw new Error(`${node.name} did not become ready:\n${child.tail()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function kill(n: CatalogNode): Promise<void> {
    const node = n as MutableNode;
    const child = node.child;
    if (!child) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await child.exited;
  }

  const stopAll = () => Promise.all(nodes.map((node) => node.child?.stop(10_000)));
  try {
    await Promise.all(nodes.map((node) => start(node)));
  } catch (err) {
    await stopAll();
    await pool.end();
    throw err;
  }

  return {
    publicUrl,
    apis: nodes.filter((n) => n.kind === 'api'),
    projectors: nodes.filter((n) => n.kind === 'projector'),
    pool,
    database: opts.database,
    redis: opts.redis,
    sites: opts.sites,
    env,
    start,
    kill,
    leaders: () => nodes.filter((n) => n.kind === 'projector' && n.child && n.leading),
    async leaderLocks() {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid = 0 AND objid = $1
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [PROJECTOR_LEADER_LOCK],
      );
      return rows[0]!.n;
    },
    allLogs: () => nodes.flatMap((node) => node.logs.map((line) => ({ node: node.name, line }))),
    async stop() {
      await stopAll();
      await pool.end();
    },
  };
}

/** The text of the latest e-mail a node logged to `to` after `since` (ms), waiting for it to appear. */
export async function mailTo(node: CatalogNode, to: string, since: number, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = node.logs
      .filter((l) => (l.time ?? 0) >= since)
      .map((l) => l.mail as { to?: string; text?: string } | undefined)
      .filter((m) => m?.to === to)
      .pop();
    if (found?.text) return found.text;
    if (Date.now() > deadline) throw new Error(`${node.name} logged no e-mail to ${to}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
