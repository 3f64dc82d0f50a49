import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { startCatalog, type CatalogProcess } from './catalog-process.ts';
import { distribution, embeddedConnectionString, punchlineWriter, type Distribution } from './freshness.ts';
import { everyProcessTicks, machineBusyTicks, processTicks, TICKS, ticksSpent, topSpenders, treeTicks } from './proc-stat.ts';
import { spawnNode } from './processes.ts';

/**
 * Freshness during a bulk import, and the projection's throughput: a scratch catalog of its own
 * (an embedded PostgreSQL in a temporary folder, `catalog serve` with the 2,000-listing demo
 * catalog and a `catalog api` beside it: two API processes), then `catalog import` of `size`
 * further listings (`catalog demo-data --seed 2`) while a maker's edits arrive at `editsPerSecond`
 * (a punchline changed by a plain SQL UPDATE, autocommitted).
 *
 * - Each edit is timed from its commit to the new punchline on /products/{slug} of both API
 *   processes, from the import's start until its listings are all shown.
 * - The projection's throughput is the import's listings over the time from its commit (the
 *   import's summary line, printed after COMMIT) to its last live listing shown by both.
 * - Category counts are sampled every second meanwhile (each sample counts every product: more
 *   often would load the machine it measures): projection.category_counts against a GROUP BY
 *   of projection.products in one snapshot (exact at every committed step), and at the end
 *   /categories of both processes against a GROUP BY of the write model's live listings.
 * - A change-feed consumer follows from the cursor before the import: its copy, keyed by slug,
 *   must equal the export at the end.
 */
export interface BulkImportResult {
  listings: number;
  liveListings: number;
  importSeconds: number;
  /** Import commit → its last live listing on each API process. */
  visibleAfterCommitMs: { serve: number; api: number };
  /** Listings projected and shown everywhere per second, from the import's commit. */
  listingsPerSecond: number;
  edits: Distribution & { perSecond: number };
  /**
   * CPU seconds spent from the import's commit to its last listing shown: serve (the projector
   * and its own copy of the catalog), the api process, PostgreSQL (every process of the server
   * serve started: backends, autovacuum, checkpointer, WAL writer), this bench's own process
   * (its polling), and the busiest other processes by name,
   * and the whole machine; `cores` is what the machine has. (Linux; null elsewhere.)
   */
  cpuSecondsDuringBacklog: { serve: number; api: number; postgres: number; bench: number; machine: number; cores: number; seconds: number; busiestOther: string[] } | null;
  countSamples: number;
  countMismatches: number;
  categoriesExact: boolean;
  feedMirrorEqual: boolean;
  feedChanges: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function shows(url: string, slug: string, check: (body: { punchline?: string }) => boolean): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/v1/products/${encodeURIComponent(slug)}`);
    const body = (await res.json()) as { punchline?: string };
    return res.status === 200 && check(body);
  } catch {
    return false;
  }
}

/** Polls until every url shows it; ms since `since`, or undefined after giveUpMs. */
async function untilShownEverywhere(urls: string[], slug: string, check: (body: { punchline?: string }) => boolean, since: number, giveUpMs: number, pollMs: number): Promise<number[] | undefined> {
  const seen: number[] = [];
  for (const url of urls) {
    for (;;) {
      if (await shows(url, slug, check)) break;
      if (performance.now() - since > giveUpMs) return undefined;
      await sleep(pollMs);
    }
    seen.push(performance.now() - since);
  }
  return seen;
}

interface FeedAnswer {
  changes: { op: 'upsert' | 'delete'; slug: string; product: unknown }[];
  cursor: string;
}

async function followFeed(url: string, cursor: string, copy: Map<string, string>): Promise<{ cursor: string; changes: number }> {
  let changes = 0;
  for (;;) {
    const res = await fetch(`${url}/api/v1/changes?since=${encodeURIComponent(cursor)}&limit=1000`);
    if (res.status !== 200) throw new Error(`GET /api/v1/changes answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as FeedAnswer;
    for (const c of body.changes) {
      if (c.op === 'delete') copy.delete(c.slug);
      else copy.set(c.slug, JSON.stringify(c.product));
    }
    changes += body.changes.length;
    cursor = body.cursor;
    if (body.changes.length === 0) return { cursor, changes };
  }
}

async function exportedCopy(url: string): Promise<{ copy: Map<string, string>; cursor: string }> {
  const res = await fetch(`${url}/api/v1/export`);
  const cursor = res.headers.get('catalog-cursor') ?? '';
  const copy = new Map<string, string>();
  for (const line of (await res.text()).split('\n')) {
    if (!line) continue;
    const product = JSON.parse(line) as { slug: string };
    copy.set(product.slug, JSON.stringify(product));
  }
  return { copy, cursor };
}

export async function measureBulkImport(opts: {
  size: number;
  editsPerSecond: number;
  log: (line: string) => void;
  /** Options for node in the two API processes (a CPU profile). */
  nodeOptions?: (name: 'serve' | 'api') => string[] | undefined;
}): Promise<BulkImportResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-bench-bulk-'));
  const file = path.join(dataDir, 'import.ndjson');
  let serve: CatalogProcess | undefined;
  let api: CatalogProcess | undefined;
  try {
    const demo = spawnNode('catalog demo-data', { args: ['bin/catalog.js', 'demo-data', '--count', String(opts.size), '--seed', '2'], captureStdout: true });
    serve = await startCatalog({ command: 'serve', dataDir, demo: true, nodeOptions: opts.nodeOptions?.('serve') });
    api = await startCatalog({ command: 'api', dataDir, nodeOptions: opts.nodeOptions?.('api') });
    const urls = [serve.url, api.url];
    if ((await demo.exited) !== 0) throw new Error(`catalog demo-data failed\n${demo.tail()}`);
    const lines = demo.stdout().split('\n').filter(Boolean);
    await writeFile(file, `${lines.join('\n')}\n`);
    const imported = lines.map((l) => JSON.parse(l) as { kind: string; slug: string; status?: string }).filter((l) => l.kind === 'listing');
    const importedLive = imported.filter((l) => (l.status ?? 'live') === 'live');
    const lastLive = importedLive[importedLive.length - 1]!.slug;

    const connectionString = await embeddedConnectionString(dataDir);
    const client = new pg.Client({ connectionString, application_name: 'catalog bench bulk' });
    await client.connect();
    const { rows: editable } = await client.query<{ slug: string }>(
      `SELECT slug FROM catalog.listings WHERE status = 'live' AND NOT (slug = ANY($1::text[])) ORDER BY slug LIMIT 400`,
      [imported.map((l) => l.slug)],
    );
    const writer = await punchlineWriter(dataDir, editable.map((r) => r.slug), 'catalog bench bulk edits');

    // The feed consumer's copy starts from an export before the import.
    const { copy, cursor: startCursor } = await exportedCopy(serve.url);

    opts.log(`  importing ${imported.length} listings (${importedLive.length} live) while a maker edits ${opts.editsPerSecond} times a second…`);
    const editMs: number[] = [];
    let missed = 0;
    let editing = true;
    const watchers: Promise<void>[] = [];
    const edits = (async () => {
      const start = performance.now();
      for (let i = 0; editing; i++) {
        const wait = start + (i * 1000) / opts.editsPerSecond - performance.now();
        if (wait > 0) await sleep(wait);
        const slug = editable[i % editable.length]!.slug;
        if (i >= editable.length) await watchers[i - editable.length];
        const { punchline } = await writer.update(slug);
        const committed = performance.now();
        watchers.push(
          untilShownEverywhere(urls, slug, (b) => b.punchline === punchline, committed, 60_000, 10).then((seen) => {
            if (seen === undefined) missed++;
            else editMs.push(Math.max(...seen));
          }),
        );
      }
      return (performance.now() - start) / 1000;
    })();

    // Counts sampled in one snapshot of the projection while it moves.
    let countSamples = 0;
    let countMismatches = 0;
    let sampling = true;
    const sampler = (async () => {
      const c = new pg.Client({ connectionString, application_name: 'catalog bench bulk counts' });
      await c.connect();
      try {
        while (sampling) {
          await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
          const { rows } = await c.query<{ wrong: number }>(
            `SELECT count(*)::int AS wrong FROM projection.category_counts cc
              WHERE cc.count <> (SELECT count(*) FROM projection.products p WHERE p.category = cc.slug)`,
          );
          await c.query('COMMIT');
          countSamples++;
          countMismatches += rows[0]!.wrong;
          await sleep(1000);
        }
      } finally {
        await c.end();
      }
    })();

    const importStart = performance.now();
    const importer = spawnNode('catalog import', { args: ['bin/catalog.js', 'import', file], env: { DATABASE_URL: connectionString, LOG_LEVEL: 'warn' } });
    await importer.waitForLine(/^imported \d/, 30 * 60_000);
    const committed = performance.now();
    const ticks = () => ({ serve: processTicks(serve!.pid), api: processTicks(api!.pid), machine: machineBusyTicks() });
    const treeAtCommit = treeTicks(serve.pid);
    const ticksAtCommit = ticks();
    const everyAtCommit = everyProcessTicks();
    const benchAtCommit = process.cpuUsage();
    const importSeconds = (committed - importStart) / 1000;
    if ((await importer.exited) !== 0) throw new Error(`catalog import failed\n${importer.tail()}`);
    opts.log(`  imported in ${importSeconds.toFixed(1)} s; waiting for its last live listing on both processes…`);
    const visible = await untilShownEverywhere(urls, lastLive, () => true, committed, 30 * 60_000, 20);
    if (!visible) throw new Error(`${lastLive} was not shown within 30 minutes of the import`);
    const ticksAtVisible = ticks();
    const treeAtVisible = treeTicks(serve.pid);
    const busiestOther = topSpenders(everyAtCommit, everyProcessTicks(), 4, new Set([serve.pid, api.pid, process.pid, ...(treeAtVisible?.keys() ?? [])]));
    const benchUsage = process.cpuUsage(benchAtCommit);
    const spent = (k: keyof ReturnType<typeof ticks>) => {
      const a = ticksAtCommit[k];
      const b = ticksAtVisible[k];
      return a === undefined || b === undefined ? undefined : (b - a) / TICKS;
    };
    const [serveCpu, apiCpu, machineCpu] = [spent('serve'), spent('api'), spent('machine')];
    const groupCpu = treeAtCommit && treeAtVisible ? ticksSpent(treeAtCommit, treeAtVisible) / TICKS : undefined;
    const cpuSecondsDuringBacklog =
      serveCpu === undefined || apiCpu === undefined || groupCpu === undefined || machineCpu === undefined
        ? null
        : {
            serve: serveCpu,
            api: apiCpu,
            postgres: Math.max(0, groupCpu - serveCpu),
            bench: (benchUsage.user + benchUsage.system) / 1e6,
            machine: machineCpu,
            cores: os.cpus().length,
            seconds: Math.max(...visible) / 1000,
            busiestOther,
          };
    // A little more of edits after the backlog, then stop.
    await sleep(2000);
    editing = false;
    const editSeconds = await edits;
    await Promise.all(watchers);
    sampling = false;
    await sampler;
    await writer.close();

    // Counts and the feed, once everything is projected.
    await sleep(1500);
    const { rows: groupBy } = await client.query<{ slug: string; n: number }>(
      `SELECT c.slug, count(l.id)::int AS n FROM catalog.categories c LEFT JOIN catalog.listings l ON l.category = c.slug AND l.status = 'live' GROUP BY c.slug`,
    );
    const want = new Map(groupBy.map((r) => [r.slug, r.n]));
    let categoriesExact = true;
    for (const url of urls) {
      const body = (await (await fetch(`${url}/api/v1/categories`)).json()) as { categories: { slug: string; count: number }[] };
      for (const c of body.categories) if (want.get(c.slug) !== c.count) categoriesExact = false;
      if (body.categories.length !== want.size) categoriesExact = false;
    }
    const followed = await followFeed(api.url, startCursor, copy);
    const final = await exportedCopy(api.url);
    const feedMirrorEqual = final.copy.size === copy.size && [...final.copy].every(([slug, doc]) => copy.get(slug) === doc);
    await client.end();

    const everywhere = Math.max(...visible);
    return {
      listings: imported.length,
      liveListings: importedLive.length,
      importSeconds,
      visibleAfterCommitMs: { serve: visible[0]!, api: visible[1]! },
      listingsPerSecond: imported.length / (everywhere / 1000),
      edits: { ...distribution(editMs, missed), perSecond: editMs.length / Math.max(editSeconds, 1e-9) },
      cpuSecondsDuringBacklog,
      countSamples,
      countMismatches,
      categoriesExact,
      feedMirrorEqual,
      feedChanges: followed.changes,
    };
  } finally {
    await api?.stop();
    await serve?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
