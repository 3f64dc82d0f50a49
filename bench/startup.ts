import { spawnSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { buildState } from '../bin/build-state.js';
import { startCatalog, type CatalogProcess } from './catalog-process.ts';
import { footprintOf, type Footprint } from './footprint.ts';
import { embeddedConnectionString } from './freshness.ts';
import { REPO_ROOT } from './processes.ts';

/**
 * Start-up: the time from spawning `catalog serve` or `catalog api` on the existing database
 * to its first 200 on /readyz, run as in production (the compiled build in dist/) and from the
 * TypeScript sources (tsx, what a checkout runs before a build), and what a process answers at
 * that moment: its first search must already count every live listing of the projection and
 * list its newest document, and that product's own answer must be the projection's document,
 * byte for byte.
 */
export type Runtime = 'compiled' | 'sources';

export interface StartMeasure {
  command: 'serve' | 'api';
  runtime: Runtime;
  /** Where its catalog came from (its log's "projection mirror loaded" line), when it says. */
  loadedFrom?: string;
  /** Milliseconds of each start-up step, from its log's "started" line. */
  phases?: Record<string, number>;
  readyMs: number;
  atReady: Footprint;
  /** What the first requests after ready found wrong; empty when every answer was right. */
  wrongAtReady: string[];
}

/** Makes sure dist/ is a build of the sources as they are, building it when not. */
export function ensureCompiledBuild(log: (line: string) => void): void {
  if (buildState() === 'current') return;
  log('building dist/ (npm run build): the sources changed since the last build…');
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin/build.js')], { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0 || buildState() !== 'current') throw new Error('npm run build failed');
}

interface FirstAnswers {
  search: { status: number; body: string };
  product: { slug: string; status: number; body: string } | undefined;
}

/** The first search (the newest listing) and that listing's product, asked the moment the process is ready. */
async function firstAnswers(url: string): Promise<FirstAnswers> {
  const search = await fetch(`${url}/api/v1/search?limit=1`);
  const searchBody = await search.text();
  const slug = search.status === 200 ? (JSON.parse(searchBody) as { products: { slug: string }[] }).products[0]?.slug : undefined;
  let product: FirstAnswers['product'];
  if (slug) {
    const res = await fetch(`${url}/api/v1/products/${slug}`);
    product = { slug, status: res.status, body: await res.text() };
  }
  return { search: { status: search.status, body: searchBody }, product };
}

/** What the first answers got wrong, against the projection in the database (unchanged since). */
async function wrongAnswers(dataDir: string, answers: FirstAnswers): Promise<string[]> {
  const client = new pg.Client({ connectionString: await embeddedConnectionString(dataDir), application_name: 'catalog bench startup' });
  await client.connect();
  try {
    const wrong: string[] = [];
    const { rows } = await client.query<{ live: number }>('SELECT count(*)::int AS live FROM projection.products');
    const live = rows[0]!.live;
    if (answers.search.status !== 200) return [`/search answered ${answers.search.status}`];
    const total = (JSON.parse(answers.search.body) as { total: number }).total;
    if (total !== live) wrong.push(`/search counted ${total} of ${live} live listings`);
    if (!answers.product) return [...wrong, '/search listed no product'];
    const { rows: docs } = await client.query<{ doc: string }>('SELECT doc FROM projection.products WHERE slug = $1', [answers.product.slug]);
    const doc = docs[0]?.doc;
    if (doc === undefined || !answers.search.body.includes(doc)) wrong.push('/search did not list the projection\'s newest document as stored');
    if (answers.product.status !== 200) wrong.push(`/products/${answers.product.slug} answered ${answers.product.status}`);
    else if (answers.product.body !== doc) wrong.push(`/products/${answers.product.slug} differs from the projection's document`);
    return wrong;
  } finally {
    await client.end();
  }
}

/** Starts a process, measures its start, checks its first answers; the caller stops it. */
export async function startMeasured(opts: {
  command: 'serve' | 'api';
  runtime: Runtime;
  dataDir: string;
  env?: Record<string, string>;
  nodeOptions?: string[];
}): Promise<{ process: CatalogProcess; measure: StartMeasure }> {
  const process = await startCatalog({
    command: opts.command,
    dataDir: opts.dataDir,
    // Info level for the one line that says where the catalog came from.
    env: { LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...opts.env, ...(opts.runtime === 'sources' && { CATALOG_RUNTIME: 'sources' }) },
    ...(opts.nodeOptions && { nodeOptions: opts.nodeOptions }),
    timeoutMs: 20 * 60_000,
  });
  try {
    const answers = await firstAnswers(process.url);
    const atReady = await footprintOf(process.pid);
    const wrongAtReady = await wrongAnswers(opts.dataDir, answers);
    const tail = process.child.tail();
    const loadedFrom = /"from":"([^"]*)"[^\n]*projection mirror loaded/.exec(tail)?.[1];
    const phases = /"ms":(\{[^}]*\})[^\n]*"msg":"started"/.exec(tail)?.[1];
    return {
      process,
      measure: {
        command: opts.command,
        runtime: opts.runtime,
        readyMs: process.readyMs,
        atReady,
        wrongAtReady,
        ...(loadedFrom && { loadedFrom }),
        ...(phases && { phases: JSON.parse(phases) as Record<string, number> }),
      },
    };
  } catch (err) {
    await process.stop();
    throw err;
  }
}
