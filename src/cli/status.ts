import { openDatabase } from '../db/open.ts';
import { createPool } from '../db/pool.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { describeSeconds as ago, processName, statusReport, type ProcessSeen, type StatusReport } from '../ops/status-report.ts';
import { configFromArgs, parseCommandArgs } from './common.ts';
import { EXIT_TEMPORARY_FAILURE } from './start-failure.ts';

const HELP = `usage: catalog status [--json] [--data-dir DIR]

One screen for an operator: the database and its version, Redis (when REDIS_URL is set), the
migrations applied and pending, the leading projector and the standbys, projection lag and the
outbox backlog, the snapshot API processes start from, the change feed's head and what it keeps,
and the API processes seen in the last minute with the projection version each serves.
Exit status 0 when healthy; 1 when not, with one line per reason; 75 when the database cannot be
reached. --json prints the same as one JSON object (its "problems" array holds the reasons).
Thresholds: docs/operating.md, "Status". Uses DATABASE_URL, or the embedded PostgreSQL under DIR.`;

const STATUS_DEADLINES = { connectMs: 5_000, queryMs: 5_000, transactionMs: 10_000 };

export default async function status(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { json: { type: 'boolean' }, 'data-dir': { type: 'string' } }, HELP);
  if ('exitCode' in parsed) return parsed.exitCode;
  const json = parsed.values.json === true;
  const config = configFromArgs(parsed.values);
  let report: StatusReport;
  try {
    const database = await openDatabase(config, (line) => process.stderr.write(`${line}\n`));
    // Deadlines: a database that froze is said (status 75) within seconds, not waited for.
    const pool = createPool(database.connectionString, { max: 2, applicationName: 'catalog status', deadlines: STATUS_DEADLINES });
    try {
      report = await statusReport(pool, { redisUrl: config.redisUrl, changesRetentionHours: config.changesRetentionHours, maxLagSeconds: config.readyMaxLagSeconds });
    } finally {
      await pool.end();
      await database.close();
    }
  } catch (err) {
    // Said in one line by the command's failure (src/cli/start-failure.ts), status 75; as JSON too when asked.
    if (json && isDatabaseUnavailable(err)) {
      const problem = `the database cannot be reached (${(err as Error).message})`;
      process.stdout.write(`${JSON.stringify({ healthy: false, problems: [problem], checkedAt: new Date().toISOString(), database: { reachable: false, error: (err as Error).message } }, null, 2)}\n`);
      process.stderr.write(`catalog: ${problem}; retry once it is back\n`);
      return EXIT_TEMPORARY_FAILURE;
    }
    throw err;
  }
  process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
  return report.healthy ? 0 : 1;
}

const n = (x: number) => x.toLocaleString('en-US');
/** A moment, and how long before the report. */
const since = (iso: string, now: string) => `${iso} (${ago(Math.max(0, (Date.parse(now) - Date.parse(iso)) / 1000))} ago)`;

function processLine(p: ProcessSeen, current: number | undefined): string {
  const parts = [processName(p)];
  if (p.url) parts.push(p.url);
  if (p.projectionVersion !== null) {
    parts.push(`projection version ${p.projectionVersion}${current !== undefined ? (p.projectionVersion === current ? ' (current)' : ` (${current - p.projectionVersion} behind)`) : ''}`);
  }
  parts.push(`catalog ${p.serviceVersion}`, `seen ${ago(p.seenSecondsAgo)} ago`);
  return parts.join(', ');
}

/** The screen: one labelled line per part, the processes indented, then the problems. */
export function render(r: StatusReport): string {
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(`${label.padEnd(14)}${text}`);
  out.push(r.healthy ? 'catalog status: healthy' : `catalog status: ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`);
  out.push('');
  row('database', `${r.database.server}, database ${r.database.name}`);
  row(
    'redis',
    !r.redis.configured
      ? 'not configured (REDIS_URL unset): each API process counts budgets on its own'
      : r.redis.reachable
        ? `Redis ${r.redis.version ?? '(version unknown)'} at ${r.redis.url}, answering`
        : `UNREACHABLE at ${r.redis.url} (${r.redis.error})`,
  );
  const m = r.migrations;
  row(
    'migrations',
    `${m.applied} applied${m.latest ? ` (latest ${m.latest})` : ''}; ${m.pending.length === 0 ? 'none pending' : `PENDING: ${m.pending.join(', ')}`}` +
      (m.unknownToThisVersion.length > 0 ? `; ${m.unknownToThisVersion.length} applied by a newer version (${m.unknownToThisVersion.join(', ')})` : ''),
  );
  const leader = r.projector.leader;
  row(
    'projector',
    leader
      ? `leader: ${leader.process ? processName(leader.process) : `a session from ${leader.clientAddress ?? 'a local socket'} (backend ${leader.backendPid}; its process has not said who it is yet)`}, its session connected ${since(leader.since, r.checkedAt)}`
      : 'NO LEADER',
  );
  row('standbys', r.projector.standbys.length === 0 ? 'none seen' : r.projector.standbys.map((p) => processName(p)).join('; '));
  if (r.projection) {
    const p = r.projection;
    row('projection', `version ${p.version}, last changed ${since(p.updatedAt, r.checkedAt)}`);
    row('lag', `${p.lagSeconds.toFixed(1)} s; outbox backlog ${n(p.outboxBacklog)} change${p.outboxBacklog === 1 ? '' : 's'}`);
  } else row('projection', 'none (migrations pending)');
  const s = r.snapshot;
  row(
    'snapshot',
    s
      ? `version ${s.version}, ${ago(s.ageSeconds)} old, ${n(s.listings)} listings, ${(s.sizeBytes / 2 ** 20).toFixed(1)} MB${s.withSearchIndex ? ' with the search index' : ''}${s.usable ? '' : ' (NOT USABLE: older than the removals kept)'}`
      : 'NONE',
  );
  const f = r.changeFeed;
  if (f) {
    const oldest = f.oldestKeptAt ? `the oldest from ${since(f.oldestKeptAt, r.checkedAt)}` : 'none yet';
    row('change feed', `head ${f.head} (log ${f.log}); keeps the positions after ${f.prunedThrough}, ${oldest}; retention ${f.retentionDays} days (CHANGES_RETENTION_DAYS here)`);
  }
  const current = r.projection?.version;
  row('API processes', r.apiProcesses.length === 0 ? `NONE seen in the last ${r.thresholds.seenWithinSeconds} s` : `${r.apiProcesses.length} seen in the last ${r.thresholds.seenWithinSeconds} s`);
  for (const p of r.apiProcesses) out.push(`  ${processLine(p, current)}`);
  if (r.problems.length > 0) {
    out.push('', 'problems:');
    for (const problem of r.problems) out.push(`  - ${problem}`);
  }
  return `${out.join('\n')}\n`;
}
