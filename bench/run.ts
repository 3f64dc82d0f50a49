/**
 * `npm run bench`: the real service under load next to two bare Fastify baselines on the same
 * machine, then freshness under a stream of writes, the bulk export and the change feed, and
 * the service's footprint. See docs/performance.md for what each figure means.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareCatalogData, defaultDataDir } from './catalog-data.ts';
import type { CatalogProcess } from './catalog-process.ts';
import { sampleCatalog } from './catalog-sample.ts';
import { measureContextSize, type ContextSizeResult } from './context-size.ts';
import { measureExport, measureFeed, type ExportResult, type FeedResult } from './export-feed.ts';
import { measureHeldConnections, type HeldResult } from './held-connections.ts';
import { footprintOf, type Footprint } from './footprint.ts';
import { measureBulkImport, type BulkImportResult } from './bulk-import.ts';
import { measureFreshness, type FreshnessResult } from './freshness.ts';
import { measureSnapshotMove, type SnapshotMoveResult } from './snapshot-move.ts';
import { runLoad } from './load.ts';
import { preflight } from './preflight.ts';
import { familyCosts, formatFamilyCosts, formatProfileSummary, readProfile, summarizeProfile } from './profile-summary.ts';
import { spawnNode, stopAll, stopChildrenOnSignals } from './processes.ts';
import { attachRatios, checkTargets, formatReport, type RunReport, type ScenarioRow } from './report.ts';
import { buildScenarios, productSlugs, selectScenarios, VARIANTS, withKey, type Target } from './scenarios.ts';
import { hasRedisServer, startRedisServer } from './cluster/redis-server.ts';
import { ensureCompiledBuild, startMeasured, type StartMeasure } from './startup.ts';
import { startOtlpSink } from './otlp-sink.ts';

const HELP = `usage: npm run bench -- [options]

  --size N          listings in the demo catalog (default 10000; e.g. 100000)
  --duration S      measured seconds per scenario (default 8)
  --warmup S        warm-up seconds per scenario, not measured (default 2)
  --connections N   concurrent connections of the load generator (default 10)
  --only IDS        run only these scenarios (comma-separated ids or id prefixes, e.g.
                    search-word,mcp; an id selects that scenario alone, so mcp-product
                    leaves out mcp-product-2026; the baselines run with any load scenario) and
                    only the phases named among context, freshness, bulk, export, feed,
                    held and move
  --no-context      skip the context-size measurement (the MCP answers' bytes and tokens
                    per era beside the REST bodies: tools/list, search_products,
                    get_product, a product's resource)
  --no-freshness    skip the freshness measurement
  --no-bulk         skip the bulk import (a scratch catalog of its own: edits at 5 a second
                    while --bulk-size listings are imported; the projection's throughput)
  --bulk-size N     listings the bulk import brings (default 100000)
  --no-export       skip the export measurement
  --no-feed         skip the change-feed measurement
  --no-held         skip the 10,000 held connections (idle, half-sent, long polls)
  --no-move         skip the move to a newer snapshot (changes enough listings for one)
  --cpu-prof        CPU-profile the serve and api processes and the bare Node baseline
                    (node --cpu-prof) and print
                    where their time went
  --no-sources      skip the start-up measures from the TypeScript sources (tsx)
  --fresh           rebuild the benchmark database even when a current one exists
  --data-dir DIR    the benchmark database folder (default: per size under the temp folder)
  --json            print the report as JSON instead of tables
  --traces          run every catalog process with traces on (OTEL_EXPORTER_OTLP_ENDPOINT
                    set to an OTLP receiver of the bench's own on loopback); without it the
                    variable is unset for them, whatever the environment says
`;

function parse() {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '10000' },
      duration: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      only: { type: 'string' },
      'no-context': { type: 'boolean', default: false },
      'no-freshness': { type: 'boolean', default: false },
      'no-bulk': { type: 'boolean', default: false },
      'bulk-size': { type: 'string', default: '100000' },
      'no-export': { type: 'boolean', default: false },
      'no-feed': { type: 'boolean', default: false },
      'no-held': { type: 'boolean', default: false },
      'no-move': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      'no-sources': { type: 'boolean', default: false },
      fresh: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
      traces: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  const num = (name: string, v: string, min: number, max: number) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name}: must be a number from ${min} to ${max}`);
    return n;
  };
  const size = Math.round(num('size', values.size, 100, 1_000_000));
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
  const phase = (name: string, off: boolean) => !off && (!only || only.includes(name));
  return {
    help: values.help,
    size,
    durationSeconds: num('duration', values.duration, 1, 600),
    warmupSeconds: num('warmup', values.warmup, 0, 120),
    connections: Math.round(num('connections', values.connections, 1, 1000)),
    only,
    context: phase('context', values['no-context']),
    freshness: phase('freshness', values['no-freshness']),
    bulk: phase('bulk', values['no-bulk']),
    bulkSize: Math.round(num('bulk-size', values['bulk-size'], 1000, 1_000_000)),
    exportPhase: phase('export', values['no-export']),
    feed: phase('feed', values['no-feed']),
    held: phase('held', values['no-held']),
    move: phase('move', values['no-move']),
    cpuProf: values['cpu-prof'],
    sources: !values['no-sources'],
    fresh: values.fresh,
    dataDir: path.resolve(values['data-dir'] ?? defaultDataDir(size)),
    json: values.json,
    traces: values.traces,
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const EXPORT_RUNS = 5;
const EXPORT_COMPRESSED_RUNS = 3;

async function startBaseline(mode: 'hello' | 'body' | 'answer', bodyFile?: string, nodeOptions: string[] = []): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawnNode(`baseline ${mode}`, { args: ['bin/run-ts.js', 'bench/baseline-server.ts', mode, ...(bodyFile ? [bodyFile] : [])], nodeOptions });
  try {
    const m = await child.waitForLine(/baseline listening on (http:\/\/\S+)/, 30_000);
    return { url: m[1]!, pid: child.pid, stop: () => child.stop() };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/** A product's answer as the service sends it: header names (lower case), values and order, and the body. */
function productAnswer(origin: string, slug: string): Promise<{ headers: [string, string][]; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${origin}/api/v1/products/${encodeURIComponent(slug)}`, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`GET /api/v1/products/${slug} answered ${res.statusCode}`));
          const headers: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
          resolve({ headers, body: Buffer.concat(chunks).toString('base64') });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * A consumer key whose budgets are as lifted as the addresses' (BENCH_ENV), made with the
 * `catalog keys` command on the run's database.
 */
async function makeBenchKey(dataDir: string): Promise<string> {
  const child = spawnNode('catalog keys create', {
    args: ['bin/catalog.js', 'keys', 'create', `bench-${Date.now()}`, '--json', '--data-dir', dataDir, ...['searches', 'other', 'export', 'changes'].flatMap((f) => [`--${f}-per-min`, '10000000'])],
    captureStdout: true,
  });
  const status = await child.exited;
  if (status !== 0) throw new Error(`catalog keys create failed (${status}):\n${child.tail()}`);
  return (JSON.parse(child.stdout()) as { key: string }).key;
}

async function main(): Promise<number> {
  let opts;
  try {
    opts = parse();
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (opts.help) {
    console.log(HELP);
    return 0;
  }
  stopChildrenOnSignals();
  // The processes started below inherit this process's environment (processes.ts).
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const traceSink = opts.traces ? await startOtlpSink() : undefined;
  if (traceSink) {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = traceSink.url;
    log(`traces on: every catalog process sends its spans to ${traceSink.url}`);
  }
  const loadBefore = os.loadavg()[0]!;
  if (loadBefore > 0.5) log(`note: the 1-min load average is ${loadBefore.toFixed(2)}; other work competes with the benchmark for the cores`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'catalog-bench-run-'));
  let profileDir: string | undefined;
  if (opts.cpuProf) {
    profileDir = path.join(os.tmpdir(), 'catalog-bench', `profiles-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    await mkdir(profileDir, { recursive: true });
  }
  // One folder per process: node writes a profile per thread (the module loader runs in one).
  const profileFlags = (name: string) => (profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, name)] : []);

  try {
    const data = await prepareCatalogData({ size: opts.size, dataDir: opts.dataDir, fresh: opts.fresh, log });
    // Production runs the compiled build: measure that (and, once each, the sources).
    ensureCompiledBuild(log);
    const starts: StartMeasure[] = [];
    const noteStart = (m: StartMeasure) => {
      starts.push(m);
      log(`  ${m.command} (${m.runtime}${m.loadedFrom ? `, catalog from ${m.loadedFrom}` : ''}) ready in ${(m.readyMs / 1000).toFixed(2)} s, RSS ${Math.round(m.atReady.rssMB)} MB${m.wrongAtReady.length ? `; WRONG at ready: ${m.wrongAtReady.join('; ')}` : '; first answers right'}`);
      if (m.phases) log(`    ms by step: ${Object.entries(m.phases).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    };
    if (opts.sources) {
      log('starting catalog serve from the TypeScript sources (tsx) on the existing database, once…');
      const once = await startMeasured({ command: 'serve', runtime: 'sources', dataDir: data.dataDir });
      noteStart(once.measure);
      await once.process.stop();
    }

    log('starting catalog serve on the existing database…');
    const serveStart = await startMeasured({ command: 'serve', runtime: 'compiled', dataDir: data.dataDir, nodeOptions: profileFlags('serve') });
    const serve: CatalogProcess = serveStart.process;
    noteStart(serveStart.measure);
    const atReady = serveStart.measure.atReady;

    const total = (await (await fetch(`${serve.url}/api/v1/search?limit=1`)).json()) as { total: number };
    const sample = await sampleCatalog(serve.url, 2000);
    log(`  ${total.total} live listings; sampled ${sample.products.length} for slugs and words`);

    let context: ContextSizeResult | undefined;
    if (opts.context) {
      log('context size: tools/list, search_products, get_product and a product\'s resource in each MCP era, beside the REST bodies…');
      context = await measureContextSize({ baseUrl: serve.url, slugs: productSlugs(sample) });
      for (const e of context.eras) {
        log(
          `  ${e.era}: tools/list ${e.toolsList.bytes} B (${e.toolsList.tokens} tokens); search ${e.search.ratio.toFixed(3)} × REST bytes, text ${Math.round(e.search.textShare * 100)} % of REST tokens; ` +
            `get_product worst ${e.product.ratio.worst.toFixed(3)} ×, median text ${Math.round(e.product.textShare.median * 100)} %`,
        );
      }
      log(
        `  eras: ${context.agreement.compared - context.agreement.differing.length} of ${context.agreement.compared} results equal; ` +
          `REST bodies: ${context.rest.compared - context.rest.differing.length} of ${context.rest.compared} carried`,
      );
    }

    if (opts.sources) {
      log('starting catalog api from the TypeScript sources (tsx) beside it, once…');
      const once = await startMeasured({ command: 'api', runtime: 'sources', dataDir: data.dataDir });
      noteStart(once.measure);
      await once.process.stop();
    }
    log('starting catalog api beside it with no local copy of the snapshot (SNAPSHOT_CACHE_DIR=off: a fresh host), once…');
    const fresh = await startMeasured({ command: 'api', runtime: 'compiled', dataDir: data.dataDir, env: { SNAPSHOT_CACHE_DIR: 'off' } });
    noteStart(fresh.measure);
    await fresh.process.stop();

    // Every scenario, whatever --only keeps: the move phase takes its requests from them too.
    const allScenarios = buildScenarios(sample);
    let scenarios = allScenarios;
    if (opts.only) scenarios = selectScenarios(scenarios, opts.only);
    const rows: ScenarioRow[] = [];
    let apiAfterLoad: Footprint | undefined;
    if (scenarios.length > 0) {
      log('starting catalog api on the same database with its response cache off (CACHE_MAX_ENTRIES=0)…');
      const apiStart = await startMeasured({ command: 'api', runtime: 'compiled', dataDir: data.dataDir, env: { CACHE_MAX_ENTRIES: '0' }, nodeOptions: profileFlags('api') });
      const api = apiStart.process;
      noteStart(apiStart.measure);

      const bodyFile = path.join(work, 'search-page.json');
      await writeFile(bodyFile, sample.searchPage);
      const hello = await startBaseline('hello');
      const body = await startBaseline('body', bodyFile);
      const answerFile = path.join(work, 'product-answer.json');
      await writeFile(answerFile, JSON.stringify(await productAnswer(serve.url, sample.products[0]!.slug)));
      const answer = await startBaseline('answer', answerFile, profileFlags('answer'));
      log(`baselines: hello-world at ${hello.url}, precomputed ${sample.searchPage.length}-byte search page at ${body.url}, bare Node product answer at ${answer.url}`);

      // Budgets in Redis: a redis-server of the run's own, a `catalog api` using it, and a key.
      let redisApi: { url: string; pid: number; stop: () => Promise<void> } | undefined;
      if (scenarios.some((s) => s.target === 'redis')) {
        if (!hasRedisServer()) {
          log('redis-server is not installed (apt-get install redis-server): the rows with budgets in Redis are left out');
          scenarios = scenarios.filter((s) => s.target !== 'redis');
        } else {
          const redis = await startRedisServer();
          log(`starting catalog api with its budgets in Redis (its own redis-server at ${redis.url}) and making a consumer key…`);
          const redisStart = await startMeasured({ command: 'api', runtime: 'compiled', dataDir: data.dataDir, env: { REDIS_URL: redis.url }, nodeOptions: profileFlags('redis') });
          noteStart(redisStart.measure);
          const key = await makeBenchKey(data.dataDir);
          scenarios = withKey(scenarios, key);
          redisApi = {
            url: redisStart.process.url,
            pid: redisStart.process.pid,
            stop: async () => {
              await redisStart.process.stop();
              await redis.stop();
            },
          };
        }
      }

      const origins: Record<Target, string> = { serve: serve.url, api: api.url, redis: redisApi?.url ?? '', hello: hello.url, body: body.url, answer: answer.url };
      const pids: Record<Target, number> = { serve: serve.pid, api: api.pid, redis: redisApi?.pid ?? 0, hello: hello.pid, body: body.pid, answer: answer.pid };
      log(`preflight: every request of ${scenarios.length} scenarios once…`);
      const checked = await preflight(scenarios, origins);
      for (const [id, n] of Object.entries(checked.dropped)) log(`  ${id}: dropped ${n} variants that match nothing`);

      for (const s of scenarios) {
        log(`load: ${s.title} (${s.requests.length} distinct request${s.requests.length > 1 ? 's' : ''})…`);
        const result = await runLoad({
          url: origins[s.target],
          requests: s.requests,
          connections: opts.connections,
          durationSeconds: opts.durationSeconds,
          warmupSeconds: opts.warmupSeconds,
          serverPid: pids[s.target],
        });
        log(
          `  ${Math.round(result.okPerSecond)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, non-2xx ${result.non2xx}, errors ${result.errors}; ` +
            `cores: server ${result.cpu.server?.toFixed(2)}, load generator ${result.cpu.loadGenerator.toFixed(2)}, other ${result.cpu.other?.toFixed(2)}`,
        );
        rows.push({
          id: s.id,
          title: s.title,
          kind: s.kind,
          server: s.target,
          variants: s.requests.length,
          bodyBytes: checked.bodyBytes[s.id] ?? 0,
          ...(s.era && { era: s.era }),
          ...(s.baseline && { baseline: s.baseline }),
          ...result,
        });
      }
      apiAfterLoad = await footprintOf(api.pid);
      await redisApi?.stop();
      await answer.stop();
      await body.stop();
      await hello.stop();
      await api.stop();
    }
    const afterLoad = await footprintOf(serve.pid);
    const loadAfter = os.loadavg()[0]!;

    let freshness: FreshnessResult | undefined;
    if (opts.freshness) {
      log('freshness: 50 listing updates a second for 15 s through the write model…');
      const slugs = [...sample.products.map((p) => p.slug)].reverse();
      freshness = await measureFreshness({ baseUrl: serve.url, dataDir: data.dataDir, slugs, updatesPerSecond: 50, seconds: 15, pollMs: 10, giveUpMs: 10_000 });
      log(`  /products p99 ${freshness.product.p99.toFixed(0)} ms, /search p99 ${freshness.search.p99.toFixed(0)} ms`);
    }
    let exported: ExportResult | undefined;
    if (opts.exportPhase) {
      log(`export: the whole catalog ${EXPORT_RUNS} times uncompressed, ${EXPORT_COMPRESSED_RUNS} times each with br and gzip…`);
      exported = await measureExport({ baseUrl: serve.url, serverPid: serve.pid, runs: EXPORT_RUNS, compressedRuns: EXPORT_COMPRESSED_RUNS });
      for (const r of exported.runs) {
        log(`  ${r.coding}: ${(r.bytes / 1e6).toFixed(1)} MB, last byte at ${r.lastByteMs.toFixed(0)} ms, server CPU ${r.serverCpuMs.toFixed(0)} ms, other cores ${r.otherCores.toFixed(2)}`);
      }
      const lines = exported.runs.find((r) => r.lines !== undefined)?.lines;
      if (lines !== total.total) throw new Error(`the export held ${lines} products; /search counts ${total.total}`);
    }
    let feed: FeedResult | undefined;
    if (opts.feed) {
      log('feed: 50 listing updates a second for 15 s, delivered to a long-polling consumer…');
      const slugs = [...sample.products.map((p) => p.slug)];
      feed = await measureFeed({ baseUrl: serve.url, serverPid: serve.pid, dataDir: data.dataDir, slugs, updatesPerSecond: 50, seconds: 15, giveUpMs: 10_000 });
      log(`  p50 ${feed.delivery.p50.toFixed(0)} ms, p99 ${feed.delivery.p99.toFixed(0)} ms over ${feed.answers} answers`);
    }
    let held: HeldResult | undefined;
    if (opts.held) {
      log('held: 10,000 connections held open on serve (idle keep-alive, half-sent headers, long polls from 150 addresses) while ordinary requests are timed…');
      const paths = [
        ...sample.products.slice(0, 50).map((p) => `/api/v1/products/${encodeURIComponent(p.slug)}`),
        '/api/v1/categories',
        ...sample.words.slice(0, 20).map((w) => `/api/v1/search?q=${encodeURIComponent(w.word)}`),
      ];
      held = await measureHeldConnections({ baseUrl: serve.url, serverPid: serve.pid, paths });
      log(
        `  ordinary requests p99 ${held.held.p99.toFixed(1)} ms held (${held.quiet.p99.toFixed(1)} ms before), ${held.failed} failed; ` +
          `RSS ${Math.round(held.rssMB.before)} → ${Math.round(held.rssMB.held)} MB held, ${Math.round(held.rssMB.after)} MB after`,
      );
    }
    let move: SnapshotMoveResult | undefined;
    if (opts.move) {
      log('move: enough listings changed for a newer snapshot; product load until serve has moved to it…');
      move = await measureSnapshotMove({
        baseUrl: serve.url,
        serverPid: serve.pid,
        dataDir: data.dataDir,
        tail: () => serve.child.tail(),
        productRequests: allScenarios.find((s) => s.kind === 'product')!.requests,
        settleRequests: allScenarios.filter((s) => s.kind === 'search-uncached').flatMap((s) => s.requests),
        connections: opts.connections,
        giveUpMs: 30 * 60_000,
      });
      log(`  written after ${move.writtenSeconds.toFixed(1)} s, serve moved after ${move.movedSeconds.toFixed(1)} s; serve RSS ${move.before.rssMB.toFixed(0)} → ${move.after.rssMB.toFixed(0)} MB`);
    }
    await serve.stop();

    let bulk: BulkImportResult | undefined;
    if (opts.bulk) {
      log(`bulk: a scratch catalog (serve with the demo catalog, an api beside it); ${opts.bulkSize.toLocaleString('en-US')} listings imported while a maker edits 5 times a second…`);
      bulk = await measureBulkImport({ size: opts.bulkSize, editsPerSecond: 5, log });
      log(
        `  edits p99 ${bulk.edits.p99.toFixed(0)} ms (max ${bulk.edits.max.toFixed(0)} ms); ` +
          `${Math.round(bulk.listingsPerSecond)} listings/s from the import's commit to its last listing on both processes`,
      );
    }

    attachRatios(rows);
    const cpus = os.cpus();
    const partial: Omit<RunReport, 'targets'> = {
      machine: { cores: cpus.length, cpuModel: cpus[0]?.model.trim() ?? 'unknown', node: process.version, platform: `${os.platform()} ${os.release()}`, memoryMB: Math.round(os.totalmem() / 2 ** 20), loadAverage: { before: loadBefore, afterLoad: loadAfter } },
      settings: {
        size: opts.size,
        connections: opts.connections,
        durationSeconds: opts.durationSeconds,
        warmupSeconds: opts.warmupSeconds,
        cacheMisses: `a second process, catalog api on the same database with CACHE_MAX_ENTRIES=0; each uncached scenario walks through up to ${VARIANTS} requests of its shape, every connection from its own starting point`,
        loadGenerator: 'autocannon 9 in a separate process',
        ...(profileDir && { cpuProfileDir: profileDir }),
      },
      catalog: { liveListings: total.total, dataDir: data.dataDir, importedThisRun: data.imported, ...(data.importMs !== undefined && { importSeconds: data.importMs / 1000 }) },
      scenarios: rows,
      ...(freshness && { freshness }),
      ...(bulk && { bulk }),
      ...(exported && { export: exported }),
      ...(feed && { feed }),
      ...(held && { held }),
      ...(move && { move }),
      ...(context && { context }),
      footprint: { afterLoad, readyMs: serve.readyMs, atReady, ...(apiAfterLoad && { apiAfterLoad }), starts },
    };
    const report: RunReport = { ...partial, targets: checkTargets(partial) };
    console.log(opts.json ? JSON.stringify(report, null, 2) : formatReport(report));

    if (profileDir) {
      for (const name of await readdir(profileDir)) {
        for (const file of (await readdir(path.join(profileDir, name))).filter((f) => f.endsWith('.cpuprofile'))) {
          const full = path.join(profileDir, name, file);
          const profile = await readProfile(full);
          const summary = summarizeProfile(profile);
          // The loader thread's profile is all startup; the main thread's is the one that served.
          if (summary.totalMs - summary.idleMs < 1000) continue;
          log(`\n${formatProfileSummary(`${name === 'answer' ? 'bare Node baseline' : `catalog ${name}`}: ${full}`, summary)}`);
          // Time per request by family of work, when this process served one kind of request.
          const served = rows.filter((r) => r.server === name);
          if (served.length === 1) {
            const row = served[0]!;
            const requests = row.requestsPerSecond * (opts.durationSeconds + opts.warmupSeconds) + row.variants;
            log(formatFamilyCosts(familyCosts(profile, requests)));
          }
        }
      }
    }
    return 0;
  } finally {
    await stopAll();
    if (traceSink) {
      const { posts, bytes } = traceSink.received();
      log(`traces: ${posts} exports (${Math.round(bytes / 1024)} KiB) received`);
      await traceSink.close();
    }
    await rm(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    console.error(`bench: ${(err as Error)?.message ?? String(err)}`);
    await stopAll();
    process.exitCode = 1;
  },
);
