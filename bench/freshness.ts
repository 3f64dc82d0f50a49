import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

/**
 * Freshness under a steady stream of listing updates written through the write model: each
 * update puts a unique word into one live listing's punchline (a plain SQL UPDATE of
 * catalog.listings, autocommitted), and from the moment the commit is acknowledged the bench
 * polls GET /products/{slug} until the new punchline shows and GET /search?q=WORD until the
 * listing is found. The punchlines are put back afterwards.
 */
export interface FreshnessOptions {
  baseUrl: string;
  dataDir: string;
  slugs: readonly string[];
  updatesPerSecond: number;
  seconds: number;
  pollMs: number;
  /** An update not visible after this long counts as this long. */
  giveUpMs: number;
}

export interface Distribution {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** Updates not visible within giveUpMs. */
  missed: number;
}

export interface FreshnessResult {
  updates: number;
  updatesPerSecond: number;
  pollMs: number;
  product: Distribution;
  search: Distribution;
}

/** The embedded PostgreSQL of a data folder: password file, and the port from postmaster.pid. */
export async function embeddedConnectionString(dataDir: string): Promise<string> {
  const password = (await readFile(path.join(dataDir, 'pg-password'), 'utf8')).trim();
  const pid = (await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
  const port = Number(pid[3]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${path.join(dataDir, 'pg', 'postmaster.pid')}`);
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/** Ten letters: a word no listing has, found by search (two typos apart from any other). */
function uniqueWord(): string {
  const bytes = randomBytes(10);
  return Array.from(bytes, (b) => String.fromCharCode(97 + (b % 26))).join('');
}

export function distribution(values: number[], missed: number): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN);
  return { count: sorted.length, p50: at(50), p99: at(99), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN, missed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until seen() holds; returns ms since `since`, or undefined after giveUpMs. */
async function pollUntil(since: number, giveUpMs: number, pollMs: number, seen: () => Promise<boolean>): Promise<number | undefined> {
  for (;;) {
    try {
      if (await seen()) return performance.now() - since;
    } catch {
      // a failed poll is retried like an unchanged answer
    }
    if (performance.now() - since > giveUpMs) return undefined;
    await sleep(pollMs);
  }
}

/**
 * Listing updates as the freshness and change-feed measurements make them: each puts a unique
 * word at the end of one listing's punchline, a plain SQL UPDATE of catalog.listings on the
 * embedded database, autocommitted. close() puts every punchline back, in one transaction, so
 * the cached catalog stays as imported.
 */
export interface PunchlineWriter {
  /** Resolves once the update is committed, with the punchline and the word it now carries. */
  update(slug: string): Promise<{ punchline: string; word: string }>;
  close(): Promise<void>;
}

export async function punchlineWriter(dataDir: string, slugs: readonly string[], applicationName: string): Promise<PunchlineWriter> {
  const client = new pg.Client({ connectionString: await embeddedConnectionString(dataDir), application_name: applicationName });
  await client.connect();
  const original = new Map<string, string>();
  const { rows } = await client.query<{ slug: string; punchline: string }>('SELECT slug, punchline FROM catalog.listings WHERE slug = ANY($1)', [slugs]);
  for (const r of rows) original.set(r.slug, r.punchline);
  return {
    async update(slug) {
      const word = uniqueWord();
      const punchline = `${original.get(slug) ?? ''} ${word}`.trim();
      await client.query('UPDATE catalog.listings SET punchline = $1 WHERE slug = $2', [punchline, slug]);
      return { punchline, word };
    },
    async close() {
      await client
        .query('UPDATE catalog.listings l SET punchline = o.punchline FROM unnest($1::text[], $2::text[]) AS o(slug, punchline) WHERE l.slug = o.slug', [
          [...original.keys()],
          [...original.values()],
        ])
        .catch(() => undefined);
      await client.end();
    },
  };
}

export async function measureFreshness(opts: FreshnessOptions): Promise<FreshnessResult> {
  const total = Math.round(opts.updatesPerSecond * opts.seconds);
  const slugs = opts.slugs.slice(0, total);
  const writer = await punchlineWriter(opts.dataDir, slugs, 'catalog bench freshness');

  const productMs: number[] = [];
  const searchMs: number[] = [];
  let productMissed = 0;
  let searchMissed = 0;
  const watchers: Promise<void>[] = [];
  const api = `${opts.baseUrl}/api/v1`;
  try {
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      // A steady rate: each update at its slot, later ones not bunched up after a slow one.
      const wait = start + (i * 1000) / opts.updatesPerSecond - performance.now();
      if (wait > 0) await sleep(wait);
      // A listing changes again only after its last change was seen (or given up on).
      const slug = slugs[i % slugs.length]!;
      if (i >= slugs.length) await watchers[i - slugs.length];
      const { punchline, word } = await writer.update(slug);
      const committed = performance.now();
      const product = pollUntil(committed, opts.giveUpMs, opts.pollMs, async () => {
        const res = await fetch(`${api}/products/${encodeURIComponent(slug)}`);
        const body = (await res.json()) as { punchline?: string };
        return res.status === 200 && body.punchline === punchline;
      });
      const search = pollUntil(committed, opts.giveUpMs, opts.pollMs, async () => {
        const res = await fetch(`${api}/search?q=${word}&limit=50`);
        const body = (await res.json()) as { products?: Array<{ slug: string }> };
        return res.status === 200 && (body.products ?? []).some((p) => p.slug === slug);
      });
      watchers.push(
        Promise.all([product, search]).then(([p, s]) => {
          if (p === undefined) productMissed++;
          else productMs.push(p);
          if (s === undefined) searchMissed++;
          else searchMs.push(s);
        }),
      );
    }
    const elapsed = (performance.now() - start) / 1000;
    await Promise.all(watchers);
    return {
      updates: total,
      // from the first commit to the last one
      updatesPerSecond: total > 1 ? (total - 1) / Math.max(elapsed, 1e-9) : total,
      pollMs: opts.pollMs,
      product: distribution(productMs, productMissed),
      search: distribution(searchMs, searchMissed),
    };
  } finally {
    await Promise.allSettled(watchers);
    await writer.close();
  }
}
