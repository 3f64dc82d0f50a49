import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createProjector } from '../projector/projector.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { insertCategory, insertListings, type ListingInput } from '../test/helpers/write-model.ts';
import { scratchDatabase } from './scratch-database.ts';

/**
 * Projection lag: a steady stream of listing updates through the write model (plain SQL
 * UPDATEs of catalog.listings, autocommitted), and for each one the time from its commit being
 * acknowledged to its row showing the change in projection.products, as a reader following
 * projection_changed sees it. The projector runs in this process with its defaults (as in
 * `catalog serve`). Not a test: prints figures.
 *
 *   node bin/run-ts.js bench/projection-lag.ts [--listings 2000] [--rate 50] [--seconds 20]
 *
 * Uses a scratch database on DATABASE_URL's server when set (dropped afterwards), else an
 * embedded PostgreSQL in a temporary folder.
 */
function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const LISTINGS = option('listings', 2000);
const RATE = option('rate', 50);
const SECONDS = option('seconds', 20);
const SITE = 'https://directory.example';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const db = await scratchDatabase();
  const pool = createPool(db.url, { max: 4, applicationName: 'bench writer' });
  const projector = createProjector({ connectionString: db.url, siteUrl: SITE });
  const watcher = new pg.Client({ connectionString: db.url });
  try {
    await migrate(db.url);
    for (const slug of ['apps', 'games', 'tools', 'books']) await insertCategory(pool, { slug });
    const inputs: ListingInput[] = [];
    for (let i = 0; i < LISTINGS; i++) inputs.push({ category: ['apps', 'games', 'tools', 'books'][i % 4]!, plan: i % 5 ? 'free' : 'premium' });
    const ids: string[] = [];
    for (let i = 0; i < inputs.length; i += 1000) ids.push(...(await insertListings(pool, inputs.slice(i, i + 1000))));
    await projector.start();
    await projector.catchUp();

    // The reader: on each projection_changed, the rows of the versions it has not seen.
    const acked = new Map<string, number>();
    const lags: number[] = [];
    let seenVersion = (await pool.query<{ version: number }>('SELECT version FROM projection.state')).rows[0]!.version;
    let reading: Promise<void> = Promise.resolve();
    const read = async () => {
      const { rows } = await watcher.query<{ name: string; version: number }>(
        `SELECT name, version FROM projection.products WHERE version > $1 AND name LIKE 'bench %'`,
        [seenVersion],
      );
      const now = performance.now();
      for (const r of rows) {
        seenVersion = Math.max(seenVersion, r.version);
        const at = acked.get(r.name);
        if (at !== undefined) {
          // A notification can overtake the writer's own acknowledgement: count that as 0.
          lags.push(Math.max(0, now - at));
          acked.delete(r.name);
        }
      }
    };
    await watcher.connect();
    watcher.on('notification', () => {
      reading = reading.then(read, read);
    });
    await watcher.query('LISTEN projection_changed');

    const total = RATE * SECONDS;
    const interval = 1000 / RATE;
    const started = performance.now();
    const writes: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      const due = started + n * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const name = `bench ${n}`;
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      writes.push(
        pool.query('UPDATE catalog.listings SET name = $1 WHERE id = $2', [name, id]).then(() => {
          acked.set(name, performance.now());
        }),
      );
    }
    await Promise.all(writes);
    const deadline = performance.now() + 10_000;
    while (acked.size > 0 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      reading = reading.then(read, read);
      await reading;
    }
    // A listing updated twice before one batch shows only its last name: the earlier update
    // is superseded, not late. Those are not counted.
    const superseded = acked.size;
    lags.sort((a, b) => a - b);
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(`projection lag: ${LISTINGS} listings, ${total} updates at ${RATE}/s over ${SECONDS} s, projector defaults (poll 1000 ms, batch 500)`);
    console.log(`  commit -> visible in projection.products: p50 ${f(percentile(lags, 50))}  p99 ${f(percentile(lags, 99))}  max ${f(lags[lags.length - 1] ?? Number.NaN)}  (measured ${lags.length}, superseded ${superseded})`);
  } finally {
    await watcher.end().catch(() => undefined);
    await projector.stop();
    await pool.end();
    await db.drop();
  }
}

await main();
