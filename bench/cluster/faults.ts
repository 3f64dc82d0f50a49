import type { CatalogNode, Cluster } from './cluster.ts';
import { randomAddress } from './clients.ts';
import { freezeTree } from './freeze.ts';

/**
 * The faults a cluster run injects, each on something the run owns (its own processes, its
 * own redis-server, its own PostgreSQL), and what it measures about each: how long until the
 * cluster is whole again.
 */

/** Samples pg_locks for the projector's leader lock until stopped: the most sessions ever seen holding it. */
export function watchLeaderLocks(cluster: Cluster, everyMs = 100): { readonly max: number; readonly samples: number; stop(): Promise<void> } {
  let max = 0;
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      // While the database is away there is nothing to sample.
      const held = await cluster.leaderLocks().catch(() => undefined);
      if (held !== undefined) {
        samples++;
        max = Math.max(max, held);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    get max() {
      return max;
    },
    get samples() {
      return samples;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Takeover {
  readonly killed: string;
  /** From the SIGKILL to the first "projector is leading" of another process. */
  readonly takeoverMs: number;
  readonly next: string;
  /** The killed projector, started again (as a standby). */
  readonly restarted: Promise<void>;
}

/** SIGKILLs the leading projector and waits for another to lead; starts the killed one again. */
export async function killLeadingProjector(cluster: Cluster, timeoutMs = 30_000): Promise<Takeover> {
  const leader = await until('a leading projector', timeoutMs, () => cluster.leaders()[0]);
  const killedAt = Date.now();
  await cluster.kill(leader);
  const { node, time } = await until('another projector leading', timeoutMs, () => {
    for (const candidate of cluster.projectors) {
      const line = candidate.logs.find((l) => l.msg === 'projector is leading' && (l.time ?? 0) >= killedAt);
      if (line && candidate !== leader) return { node: candidate, time: line.time! };
    }
    return undefined;
  });
  return { killed: leader.name, takeoverMs: time - killedAt, next: node.name, restarted: cluster.start(leader) };
}

/** SIGKILLs an API process and starts it again on its port; resolves once it answers /readyz 200, with the time that took. */
export async function killAndRestartApi(cluster: Cluster, node: CatalogNode): Promise<{ recoveryMs: number }> {
  await cluster.kill(node);
  const started = Date.now();
  await cluster.start(node);
  return { recoveryMs: Date.now() - started };
}

/**
 * Whether the API processes count one budget again: one fresh address searching once on each
 * process in turn sees the remaining budget go down by one each time (with a budget per
 * process, each would say 29).
 */
export async function budgetsShared(cluster: Cluster): Promise<boolean> {
  const ip = randomAddress();
  const remaining: number[] = [];
  for (const api of cluster.apis) {
    const res = await fetch(`${api.url}/api/v1/search?limit=1`, { headers: { 'x-forwarded-for': ip } });
    await res.arrayBuffer();
    remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
  }
  return remaining.every((r, i) => i === 0 || r === remaining[i - 1]! - 1);
}

/** Stops a server, runs `during` while it is away (at least `downMs`), and starts it again. */
async function outage(server: { stop(): Promise<void>; start(): Promise<void> }, downMs: number, during?: () => Promise<void>): Promise<void> {
  await server.stop();
  const back = Date.now() + downMs;
  await during?.();
  await new Promise((r) => setTimeout(r, Math.max(0, back - Date.now())));
  await server.start();
}

/** Stops the run's redis-server for `downMs`, starts it again; resolves with the time from its start until budgets are shared again. */
export async function redisOutage(cluster: Cluster, downMs: number, during?: () => Promise<void>): Promise<{ recoveryMs: number }> {
  await outage(cluster.redis, downMs, during);
  const started = Date.now();
  await until('shared budgets', 30_000, async () => ((await budgetsShared(cluster).catch(() => false)) ? true : undefined));
  return { recoveryMs: Date.now() - started };
}

/** Every API process answering /readyz with `status`. */
export async function allReady(cluster: Cluster, status: 200 | 503): Promise<boolean> {
  const answers = await Promise.all(
    cluster.apis.map((api) =>
      fetch(`${api.url}/readyz`, { signal: AbortSignal.timeout(10_000) }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 0,
      ),
    ),
  );
  return answers.every((s) => s === status);
}

/**
 * Stops the cluster's PostgreSQL (a fast shutdown: every session ends), runs `during` while it
 * is away (at least `downMs`), starts it again; resolves with the time from its start until every
 * API process is ready again and one projector leads.
 */
export async function databaseRestart(cluster: Cluster, downMs: number, during?: () => Promise<void>): Promise<{ recoveryMs: number }> {
  await outage(cluster.database, downMs, during);
  const started = Date.now();
  await until('every API process ready again', 60_000, async () => ((await allReady(cluster, 200)) ? true : undefined));
  await until('one projector leading again', 60_000, async () => ((await cluster.leaderLocks().catch(() => 0)) === 1 ? true : undefined));
  return { recoveryMs: Date.now() - started };
}

export interface FreezeOutcome {
  /** From the thaw until the cluster is whole again (see each fault). */
  recoveryMs: number;
  /** From the freeze until every API process answered /readyz 503 (PostgreSQL only). */
  readyz503Ms?: number;
  /** The longest /readyz answer seen while frozen. */
  readyzMaxMs: number;
}

/**
 * Polls /readyz on every API process, each on its own, `everyMs` after each answer, until
 * stopped: the longest answer, and when the last of them first answered `status` (each process's
 * first such answer; undefined when one never did).
 */
function watchReadiness(cluster: Cluster, status: 200 | 503, everyMs = 100) {
  let polling = true;
  let maxMs = 0;
  const firstAt = new Map<string, number>();
  const loops = cluster.apis.map(async (api) => {
    while (polling) {
      const started = Date.now();
      const answer = await fetch(`${api.url}/readyz`, { signal: AbortSignal.timeout(30_000) }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 0,
      );
      maxMs = Math.max(maxMs, Date.now() - started);
      if (answer === status && !firstAt.has(api.name)) firstAt.set(api.name, Date.now());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  });
  return {
    async stop() {
      polling = false;
      await Promise.all(loops);
      const allAt = firstAt.size === cluster.apis.length ? Math.max(...firstAt.values()) : undefined;
      return { maxMs, allAt };
    },
  };
}

/**
 * Freezes every process of the cluster's PostgreSQL (SIGSTOP: sockets stay open, nothing
 * answers, as with a stalled disk or a partition) for `frozenMs`, running `during` meanwhile,
 * and thaws it (always, in a finally); resolves with the time from the thaw until every API
 * process is ready again and one projector leads, and how soon /readyz said 503.
 */
export async function databaseFreeze(cluster: Cluster, frozenMs: number, during?: () => Promise<void>): Promise<FreezeOutcome> {
  const pid = cluster.database.serverPid();
  if (pid === undefined) throw new Error('the cluster\'s PostgreSQL is not running');
  const { frozenAt, thawed, seen } = await freezeWatchingReadiness(cluster, pid, 503, frozenMs, during);
  await until('every API process ready again', 60_000, async () => ((await allReady(cluster, 200)) ? true : undefined));
  await until('one projector leading again', 60_000, async () => ((await cluster.leaderLocks().catch(() => 0)) === 1 ? true : undefined));
  return { recoveryMs: Date.now() - thawed, ...(seen.allAt !== undefined && { readyz503Ms: seen.allAt - frozenAt }), readyzMaxMs: seen.maxMs };
}

/**
 * Freezes the cluster's redis-server (SIGSTOP) for `frozenMs`, running `during` meanwhile, and
 * thaws it (always); resolves with the time from the thaw until budgets are shared again.
 */
export async function redisFreeze(cluster: Cluster, frozenMs: number, during?: () => Promise<void>): Promise<FreezeOutcome> {
  const pid = cluster.redis.pid;
  if (pid === undefined) throw new Error('the cluster\'s redis-server is not running');
  const { thawed, seen } = await freezeWatchingReadiness(cluster, pid, 200, frozenMs, during);
  await until('shared budgets', 30_000, async () => ((await budgetsShared(cluster).catch(() => false)) ? true : undefined));
  return { recoveryMs: Date.now() - thawed, readyzMaxMs: seen.maxMs };
}

/** Freezes a process tree for `frozenMs` while every API process's /readyz is watched for `status`; thaws it whatever happens. */
async function freezeWatchingReadiness(cluster: Cluster, pid: number, status: 200 | 503, frozenMs: number, during?: () => Promise<void>) {
  const readiness = watchReadiness(cluster, status);
  const frozenAt = Date.now();
  const frozen = freezeTree(pid);
  let thawed = frozenAt;
  let seen: { maxMs: number; allAt: number | undefined };
  try {
    try {
      await during?.();
      await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + frozenMs - Date.now())));
    } finally {
      frozen.thaw();
      thawed = Date.now();
    }
  } finally {
    seen = await readiness.stop();
  }
  return { frozenAt, thawed, seen };
}

export { until };
