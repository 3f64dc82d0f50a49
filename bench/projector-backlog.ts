import { performance } from 'node:perf_hooks';
import { createProjector } from '../projector/projector.ts';
import { importCatalog } from '../src/catalog/import/import-catalog.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { demoCatalogLines } from '../src/demo/demo-data.ts';
import { scratchDatabase } from './scratch-database.ts';

/**
 * The projector's own rate on a backlog, with nothing else running: N demo listings imported
 * through `catalog import`'s code into a scratch database, then one projector (as in
 * `catalog projector`) catching up with them; no API process reads meanwhile. What
 * `npm run bench -- --only bulk` measures is the whole way, two API processes included; this is
 * its first stage alone. Not a test: prints figures.
 *
 *   node bin/run-ts.js bench/projector-backlog.ts [--listings 100000] [--runs 1]
 *
 * Uses a scratch database on DATABASE_URL's server when set (dropped afterwards), else an
 * embedded PostgreSQL in a temporary folder.
 */
function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const LISTINGS = option('listings', 100_000);
const RUNS = option('runs', 1);

for (let run = 1; run <= RUNS; run++) {
  const db = await scratchDatabase();
  const pool = createPool(db.url, { max: 2, applicationName: 'bench import' });
  try {
    await migrate(db.url);
    const imported = await importCatalog(pool, demoCatalogLines({ count: LISTINGS, seed: 2 }));
    if (!imported.ok) throw new Error(`import failed: ${JSON.stringify(imported.errors.slice(0, 3))}`);
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox');
    const projector = createProjector({ connectionString: db.url, siteUrl: 'https://directory.example' });
    const started = performance.now();
    await projector.start();
    await projector.catchUp();
    const ms = performance.now() - started;
    await projector.stop();
    const { rows: live } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM projection.products');
    console.log(
      `run ${run}: ${rows[0]!.n} outbox rows (${live[0]!.n} live listings) projected in ${(ms / 1000).toFixed(2)} s: ` +
        `${Math.round((rows[0]!.n / ms) * 1000)} rows a second`,
    );
  } finally {
    await pool.end();
    await db.drop();
  }
}
