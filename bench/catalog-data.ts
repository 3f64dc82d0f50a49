import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCatalog } from './catalog-process.ts';
import { REPO_ROOT } from './processes.ts';

/**
 * The benchmark's database: an embedded PostgreSQL data folder per catalog size under the
 * system's temporary folder, kept between runs so a 100,000-listing import happens once. It is
 * rebuilt when the code that shapes its content changed (migrations, the write model and demo
 * catalog, the projector), or on --fresh.
 */
export interface CatalogData {
  readonly dataDir: string;
  /** True when this run imported the demo catalog. */
  readonly imported: boolean;
  /** Milliseconds from spawning `catalog serve` on an empty folder to ready, when imported. */
  readonly importMs: number | undefined;
}

const MARKER = 'bench-catalog.json';
/**
 * What shapes the database's content: the write model, the demo catalog, the projected documents.
 * Only their contents count, not where they lie, so moving a file keeps the folder.
 */
const SHAPING_SOURCES = ['migrations', 'src/catalog', 'src/demo', 'src/money', 'projector/product-document.ts', 'projector/project-listings.ts', 'projector/category-counts.ts'];

async function sourceFiles(dir: string): Promise<string[]> {
  if (/\.(tsx?|sql)$/.test(dir)) return [dir];
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(full)));
    else if (/\.(tsx?|sql)$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

async function sourceHash(): Promise<string> {
  const digests: string[] = [];
  for (const dir of SHAPING_SOURCES) {
    for (const file of await sourceFiles(path.join(REPO_ROOT, dir))) {
      digests.push(createHash('sha256').update(await readFile(file)).digest('hex'));
    }
  }
  const hash = createHash('sha256');
  for (const digest of digests.sort()) hash.update(digest).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export function defaultDataDir(size: number): string {
  return path.join(os.tmpdir(), 'catalog-bench', `listings-${size}`);
}

export async function prepareCatalogData(opts: {
  size: number;
  dataDir: string;
  fresh: boolean;
  log: (line: string) => void;
}): Promise<CatalogData> {
  const markerFile = path.join(opts.dataDir, MARKER);
  const wanted = { size: opts.size, sources: await sourceHash() };
  if (!opts.fresh && existsSync(markerFile)) {
    const marker = JSON.parse(await readFile(markerFile, 'utf8')) as typeof wanted;
    if (marker.size === wanted.size && marker.sources === wanted.sources) {
      opts.log(`reusing the ${opts.size}-listing database in ${opts.dataDir}`);
      return { dataDir: opts.dataDir, imported: false, importMs: undefined };
    }
    opts.log(`the database in ${opts.dataDir} was made by other code; rebuilding it`);
  }
  await rm(opts.dataDir, { recursive: true, force: true });
  opts.log(`importing a ${opts.size}-listing demo catalog into ${opts.dataDir} (once per size and code version)…`);
  const started = performance.now();
  const service = await startCatalog({
    command: 'serve',
    dataDir: opts.dataDir,
    demo: true,
    demoCount: opts.size,
    // About 2 ms a listing on a loaded 2-core machine; a million takes most of an hour.
    timeoutMs: Math.max(30 * 60_000, opts.size * 6),
  });
  const importMs = performance.now() - started;
  await service.stop();
  await writeFile(markerFile, `${JSON.stringify(wanted)}\n`);
  opts.log(`imported in ${(importMs / 1000).toFixed(1)} s`);
  return { dataDir: opts.dataDir, imported: true, importMs };
}
