import { projectionLag } from '../../projector/lag.ts';
import { listMigrations } from '../db/migrate.ts';
import type { Pool } from '../db/pool.ts';
import { PROJECTOR_LEADER_LOCK } from '../db/locks.ts';
import { withDeadline } from '../util/deadline.ts';
import { HEARTBEAT_MS } from './heartbeat.ts';
import { maskUrlCredentials } from '../config/config.ts';

/**
 * The cluster as `catalog status` shows it (docs/operating.md, "Status"): read from PostgreSQL (the
 * leader's lock, migrations, the projection's state, snapshots, the change log, the heartbeats of
 * ops.processes) and Redis, and judged against the thresholds below. Reads only.
 */
interface StatusThresholds {
  /** Oldest change not yet projected, and an API process's mirror not found current, for longer: a problem (READY_MAX_LAG_SECONDS, as /readyz). */
  maxLagSeconds: number;
  /** A snapshot older than this while the projection moved past it: a problem (the projector writes one at least hourly when anything changed). */
  maxSnapshotAgeSeconds: number;
  /** Processes whose heartbeat is at most this old are "seen". */
  seenWithinSeconds: number;
}

const SNAPSHOT_MAX_AGE_SECONDS = 2 * 3600;
const SEEN_WITHIN_SECONDS = 60;

export interface ProcessSeen {
  command: string;
  host: string;
  pid: number;
  serviceVersion: string;
  url: string | null;
  leads: boolean | null;
  /** While it leads, the backend pid of its session holding the leader's lock. */
  leaderSessionPid: number | null;
  projectionVersion: number | null;
  /** Seconds between the mirror's last finding itself current and the process's last beat. */
  mirrorCheckedSecondsBefore: number | null;
  startedAt: string;
  seenSecondsAgo: number;
}

export interface StatusReport {
  healthy: boolean;
  /** One sentence per reason the cluster is not healthy; empty when it is. */
  problems: string[];
  checkedAt: string;
  thresholds: StatusThresholds;
  database: { reachable: true; server: string; versionNum: number; name: string };
  redis: { configured: false } | { configured: true; url: string; reachable: boolean; version?: string; error?: string };
  migrations: { applied: number; latest: string | null; pending: string[]; unknownToThisVersion: number[] };
  projector: {
    leader: { backendPid: number; clientAddress: string | null; since: string; process: ProcessSeen | null } | null;
    standbys: ProcessSeen[];
  };
  projection: { version: number; updatedAt: string; lagSeconds: number; outboxBacklog: number } | null;
  snapshot: { version: number; ageSeconds: number; listings: number; sizeBytes: number; withSearchIndex: boolean; usable: boolean } | null;
  changeFeed: { log: string; head: number; prunedThrough: number; oldestKeptAt: string | null; retentionDays: number } | null;
  apiProcesses: ProcessSeen[];
}

/** The answer Redis is waited for at most: one that hangs is a problem, not a hang. */
const CHECK_MS = 5_000;

/** A URL with its user name and password shown as ***, as configuration errors show them. */
function safeUrl(url: string): string {
  return maskUrlCredentials(url);
}

/** The Redis at `url`: whether it answers PING, and its version (INFO server). */
async function redisStatus(url: string): Promise<{ reachable: boolean; version?: string; error?: string }> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, commandTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => (lastError = err));
  try {
    await withDeadline(redis.connect(), CHECK_MS);
    await redis.ping();
    const info = await redis.info('server');
    const version = /^redis_version:(\S+)/m.exec(info)?.[1];
    return { reachable: true, ...(version && { version }) };
  } catch (err) {
    const e = lastError ?? (err as Error);
    return { reachable: false, error: (e as NodeJS.ErrnoException).code ?? e.message };
  } finally {
    redis.disconnect();
  }
}

function ago(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

export function processName(p: Pick<ProcessSeen, 'command' | 'host' | 'pid'>): string {
  return `${p.command} on ${p.host} (pid ${p.pid})`;
}

/** Whether a query failed because its table is not there yet (its migration pending). */
const missingTable = (err: unknown) => (err as { code?: string }).code === '42P01' || (err as { code?: string }).code === '3F000';

export async function statusReport(
  pool: Pool,
  opts: { redisUrl: string | undefined; changesRetentionHours: number; maxLagSeconds: number },
): Promise<StatusReport> {
  const thresholds: StatusThresholds = { maxLagSeconds: opts.maxLagSeconds, maxSnapshotAgeSeconds: SNAPSHOT_MAX_AGE_SECONDS, seenWithinSeconds: SEEN_WITHIN_SECONDS };
  const problems: string[] = [];
  const redisCheck = opts.redisUrl ? redisStatus(opts.redisUrl) : undefined;

  // The database first: when it cannot be reached, this throws (the command says so in one line;
  // the pool's deadlines make a frozen one fail too).
  const { rows: server } = await pool.query<{ version: string; num: number; name: string }>(
    `SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num, current_database() AS name`,
  );
  const database = { reachable: true as const, server: `PostgreSQL ${server[0]!.version}`, versionNum: server[0]!.num, name: server[0]!.name };

  // Migrations: the files this version carries against those the database recorded.
  const files = await listMigrations();
  const applied = await pool
    .query<{ version: number; name: string }>('SELECT version, name FROM public.schema_migrations ORDER BY version')
    .then((r) => r.rows, (err: unknown) => (missingTable(err) ? [] : Promise.reject(err)));
  const appliedSet = new Set(applied.map((m) => m.version));
  const known = new Set(files.map((f) => f.version));
  const pending = files.filter((f) => !appliedSet.has(f.version)).map((f) => `${String(f.version).padStart(3, '0')}_${f.name}`);
  const last = applied.at(-1);
  const migrations = {
    applied: applied.length,
    latest: last ? `${String(last.version).padStart(3, '0')}_${last.name}` : null,
    pending,
    unknownToThisVersion: applied.map((m) => m.version).filter((v) => !known.has(v)),
  };
  if (pending.length > 0) problems.push(`${pending.length} migration${pending.length === 1 ? '' : 's'} pending (${pending.join(', ')}): run catalog migrate, or start a catalog process of this version`);

  // The leader: whichever session holds the projector's lock now (pg_locks, as leadership.ts asks).
  const { rows: holders } = await pool.query<{ pid: number; client: string | null; since: Date }>(
    `SELECT l.pid, host(a.client_addr) AS client, a.backend_start AS since
       FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [PROJECTOR_LEADER_LOCK],
  );

  // Processes seen: their own heartbeats.
  const seen = await pool
    .query<{
      command: string; host: string; pid: number; service_version: string; url: string | null; leads: boolean | null;
      leader_session_pid: number | null; projection_version: string | null; mirror_lag: number | null; started_at: Date; seen_ago: number;
    }>(
      `SELECT command, host, pid, service_version, url, leads, leader_session_pid, projection_version,
              EXTRACT(epoch FROM seen_at - mirror_checked_at)::float8 AS mirror_lag, started_at,
              EXTRACT(epoch FROM now() - seen_at)::float8 AS seen_ago
         FROM ops.processes WHERE seen_at >= now() - make_interval(secs => $1)
        ORDER BY command, host, pid`,
      [thresholds.seenWithinSeconds],
    )
    .then((r) => r.rows, (err: unknown) => (missingTable(err) ? [] : Promise.reject(err)));
  const processes: ProcessSeen[] = seen.map((r) => ({
    command: r.command,
    host: r.host,
    pid: r.pid,
    serviceVersion: r.service_version,
    url: r.url,
    leads: r.leads,
    leaderSessionPid: r.leader_session_pid,
    projectionVersion: r.projection_version === null ? null : Number(r.projection_version),
    mirrorCheckedSecondsBefore: r.mirror_lag === null ? null : Math.max(0, r.mirror_lag),
    startedAt: r.started_at.toISOString(),
    seenSecondsAgo: Math.max(0, r.seen_ago),
  }));
  const holder = holders[0];
  // The leader's own heartbeat names the session that holds the lock (a row of a leader that
  // died without stopping names a session that holds nothing).
  const leaderProcess = holder ? (processes.find((p) => p.leads === true && p.leaderSessionPid === holder.pid) ?? null) : null;
  const projector: StatusReport['projector'] = {
    leader: holder ? { backendPid: holder.pid, clientAddress: holder.client, since: holder.since.toISOString(), process: leaderProcess } : null,
    standbys: processes.filter((p) => p.leads === false),
  };
  if (!holder) problems.push('no projector leads: changes are not projected; start catalog projector (or catalog serve), or see why the running one stopped leading');

  // The projection, its lag and the outbox backlog.
  let projection: StatusReport['projection'] = null;
  let snapshot: StatusReport['snapshot'] = null;
  let changeFeed: StatusReport['changeFeed'] = null;
  const state = await pool
    .query<{ version: string; oldest_version: string; updated_at: Date; change_log: string; head: string; pruned: string; external_search: boolean }>(
      `SELECT s.version, s.oldest_version, s.updated_at, s.change_log, s.change_position AS head, s.changes_pruned_through AS pruned,
              (SELECT target IS NOT NULL FROM projection.checkpoints WHERE name = 'search') AS external_search
         FROM projection.state s`,
    )
    .then((r) => r.rows[0], (err: unknown) => (missingTable(err) ? undefined : Promise.reject(err)));
  if (state) {
    const lag = await projectionLag(pool);
    const version = Number(state.version);
    projection = { version, updatedAt: state.updated_at.toISOString(), lagSeconds: lag.oldestUnprojectedAgeSeconds, outboxBacklog: lag.unprojectedRows };
    if (lag.oldestUnprojectedAgeSeconds > thresholds.maxLagSeconds) {
      problems.push(`projection lag ${ago(lag.oldestUnprojectedAgeSeconds)}: ${lag.unprojectedRows} change${lag.unprojectedRows === 1 ? '' : 's'} waiting in the outbox, the oldest for longer than ${thresholds.maxLagSeconds} s`);
    }

    // The snapshot API processes start from: the newest complete one of the kind they load
    // (with the embedded index, unless the projector feeds an external one).
    const withSearchIndex = !state.external_search;
    const { rows: snaps } = await pool.query<{ version: string; listings: number; size: string; age: number }>(
      `SELECT version, listings, size, EXTRACT(epoch FROM now() - created_at)::float8 AS age FROM projection.snapshots
        WHERE complete AND search = $1 ORDER BY version DESC LIMIT 1`,
      [withSearchIndex],
    );
    const snap = snaps[0];
    if (snap) {
      const usable = Number(snap.version) >= Number(state.oldest_version);
      snapshot = { version: Number(snap.version), ageSeconds: snap.age, listings: snap.listings, sizeBytes: Number(snap.size), withSearchIndex, usable };
      if (!usable) problems.push(`the newest snapshot (version ${snap.version}) is older than the removals kept: an API process starting now rebuilds the catalog row by row; the leading projector writes a new one`);
      else if (snap.age > thresholds.maxSnapshotAgeSeconds && Number(snap.version) < version) {
        problems.push(`the snapshot is ${ago(snap.age)} old and the projection has changed since (version ${snap.version} of ${version}): API processes start from it and then apply every change; the leading projector should have written a new one within the hour`);
      }
    } else {
      problems.push('no projection snapshot: an API process starting now builds the catalog row by row; the leading projector writes one when it starts');
    }

    // The change feed: its head, what is kept, and the retention this command is configured with.
    const { rows: oldest } = await pool.query<{ at: Date | null }>('SELECT min(changed_at) AS at FROM projection.changes');
    changeFeed = {
      log: state.change_log,
      head: Number(state.head),
      prunedThrough: Number(state.pruned),
      oldestKeptAt: oldest[0]?.at?.toISOString() ?? null,
      retentionDays: opts.changesRetentionHours / 24,
    };
  }

  // API processes: seen in the last minute, each with the version it serves.
  const apiProcesses = processes.filter((p) => p.url !== null);
  if (apiProcesses.length === 0) problems.push(`no API process seen in the last ${thresholds.seenWithinSeconds} s: nothing answers requests (start catalog serve or catalog api)`);
  // A mirror is checked every poll; a heartbeat is at most HEARTBEAT_MS old when written.
  const staleAfter = thresholds.maxLagSeconds + HEARTBEAT_MS / 1000;
  for (const p of apiProcesses) {
    if (p.mirrorCheckedSecondsBefore !== null && p.mirrorCheckedSecondsBefore > staleAfter) {
      problems.push(`${processName(p)} serves projection version ${p.projectionVersion} and has not found it current for ${ago(p.mirrorCheckedSecondsBefore)}: it may not reach the database`);
    }
  }

  let redis: StatusReport['redis'] = { configured: false };
  if (opts.redisUrl && redisCheck) {
    const r = await redisCheck;
    redis = { configured: true, url: safeUrl(opts.redisUrl), ...r };
    if (!r.reachable) problems.push(`Redis at ${safeUrl(opts.redisUrl)} does not answer (${r.error}): request budgets and sign-in limits are counted per process until it does`);
  }

  return {
    healthy: problems.length === 0,
    problems,
    checkedAt: new Date().toISOString(),
    thresholds,
    database,
    redis,
    migrations,
    projector,
    projection,
    snapshot,
    changeFeed,
    apiProcesses,
  };
}

export { ago as describeSeconds };
