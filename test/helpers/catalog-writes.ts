import type { Mailer } from '../../src/auth/mailer.ts';
import { CatalogError } from '../../src/contract/errors.ts';
import type { Pool } from '../../src/db/pool.ts';
import { importCatalog } from '../../src/catalog/import/import-catalog.ts';
import { editListing, type EditDeps } from '../../src/catalog/listings/maker-listings.ts';
import type { ListingUrls } from '../../src/catalog/listings/listing-urls.ts';
import { decideListing } from '../../src/catalog/review/review.ts';
import type { ReviewAction } from '../../src/catalog/review/review-rules.ts';
import { SeededRandom } from '../../src/demo/seeded-random.ts';

/**
 * Random writes to the catalog, through the catalog's own commands where it has them: new
 * listings (the import), makers' edits (what update_listing and the edit page call), admins'
 * decisions (approve, reject, request changes, hide, restore, feature, unfeature: what the review
 * queue and `catalog review` call), and, where the catalog has no command, plain SQL as an
 * operator would write it: slug changes and deletions. Each writer picks a listing, tries the
 * write the catalog may refuse (another writer got there first, the state does not allow it),
 * and counts only the writes that were made.
 */
export interface CatalogWriteOptions {
  pool: Pool;
  urls: ListingUrls;
  mailer: Mailer;
  /** Writes to make (refused attempts do not count). */
  writes: number;
  /** Writers running at once. */
  concurrency: number;
  seed: number;
  /** Categories that exist. */
  categories: readonly string[];
  /** Makers' e-mail addresses new listings are given to. */
  makers: readonly string[];
  /** Called after each write made. */
  onWrite?: (made: number, kind: string) => void;
}

/**
 * What editListing needs to change a website: these writes edit names and punchlines only, so
 * a website change reaching it is a mistake of the writer, refused loudly.
 */
function editDepsOf(opts: CatalogWriteOptions): EditDeps {
  const never = (): never => {
    throw new Error('the random writes never change a website');
  };
  return { pool: opts.pool, urls: opts.urls, fetcher: { fetch: async () => never(), close: async () => undefined }, hostRefusal: async () => never(), blocklist: [] };
}

type Kind = 'new' | 'edit' | 'slug' | 'delete' | ReviewAction;

const KINDS: ReadonlyArray<[Kind, number]> = [
  ['new', 16],
  ['edit', 24],
  ['approve', 10],
  ['reject', 4],
  ['request_changes', 5],
  ['hide', 9],
  ['restore', 6],
  ['feature', 5],
  ['unfeature', 4],
  ['slug', 12],
  ['delete', 5],
];

/** Listing statuses each write applies to. */
const FROM: Record<Kind, string[]> = {
  new: [],
  edit: ['live', 'hidden', 'pending', 'changes_requested'],
  approve: ['pending', 'changes_requested', 'hidden'],
  reject: ['pending', 'changes_requested', 'live'],
  request_changes: ['pending', 'live'],
  hide: ['live', 'pending'],
  restore: ['hidden'],
  feature: ['live'],
  unfeature: ['live'],
  slug: ['live', 'hidden', 'pending'],
  delete: ['live', 'hidden', 'rejected', 'pending'],
};

export interface CatalogWriteSummary {
  made: number;
  refused: number;
  byKind: Record<string, number>;
}

export async function randomCatalogWrites(opts: CatalogWriteOptions): Promise<CatalogWriteSummary> {
  const random = new SeededRandom(opts.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random.next() * items.length)]!;
  const total = KINDS.reduce((s, [, w]) => s + w, 0);
  const kind = (): Kind => {
    let r = random.next() * total;
    for (const [k, w] of KINDS) if ((r -= w) < 0) return k;
    return 'edit';
  };
  const reviewDeps = { pool: opts.pool, urls: opts.urls, mailer: opts.mailer };
  const editDeps = editDepsOf(opts);
  const summary: CatalogWriteSummary = { made: 0, refused: 0, byKind: {} };
  let counter = 0;

  /** A random listing the write applies to (its state may still change before the write). */
  async function target(k: Kind): Promise<{ slug: string; maker_id: string | null } | undefined> {
    const extra = k === 'edit' ? 'AND maker_id IS NOT NULL' : k === 'feature' ? 'AND NOT featured' : k === 'unfeature' ? 'AND featured' : '';
    const { rows } = await opts.pool.query<{ slug: string; maker_id: string | null }>(
      `SELECT slug, maker_id FROM catalog.listings WHERE status::text = ANY($1) ${extra} ORDER BY md5(slug || $2) LIMIT 1`,
      [FROM[k], String(random.next())],
    );
    return rows[0];
  }

  /** One attempt; true when the write was made. */
  async function attempt(k: Kind, n: number): Promise<boolean> {
    if (k === 'new') {
      const line = {
        kind: 'listing',
        slug: `written-${opts.seed}-${n}`,
        name: `Written listing ${n}`,
        punchline: `Made by write ${n}`,
        description: `<p>Listing made while the feed is followed, number ${n}.</p>`,
        website: `https://written-${n}.example.com`,
        category: pick([...opts.categories, null]),
        tags: random.chance(0.5) ? ['written'] : [],
        status: random.chance(0.7) ? 'live' : 'pending',
        listed_at: new Date(Date.now() - random.int(0, 90 * 86_400) * 1000).toISOString(),
        maker_email: pick(opts.makers),
      };
      const result = await importCatalog(opts.pool, [JSON.stringify(line)]);
      if (result.errors.length > 0) throw new Error(`import refused a generated line: ${JSON.stringify(result.errors)}`);
      return true;
    }
    const listing = await target(k);
    if (!listing) return false;
    if (k === 'edit') {
      const changes = random.chance(0.5) ? { name: `Edited ${n}` } : { punchline: `Edited by write ${n}` };
      await editListing(editDeps, listing.maker_id!, listing.slug, changes, new Date());
      return true;
    }
    if (k === 'slug') {
      const { rowCount } = await opts.pool.query('UPDATE catalog.listings SET slug = $2 WHERE slug = $1', [listing.slug, `${listing.slug.replace(/-r\d+$/, '')}-r${n}`]);
      return rowCount === 1;
    }
    if (k === 'delete') {
      const { rowCount } = await opts.pool.query('DELETE FROM catalog.listings WHERE slug = $1', [listing.slug]);
      return rowCount === 1;
    }
    const feedback = k === 'reject' || k === 'request_changes' ? `Decision ${n}: please look again.` : undefined;
    await decideListing(reviewDeps, listing.slug, { action: k, feedback, decidedBy: null });
    return true;
  }

  let inFlight = 0;
  async function writer(): Promise<void> {
    while (summary.made + inFlight < opts.writes) {
      const k = kind();
      const n = ++counter;
      let made: boolean;
      inFlight++;
      try {
        made = await attempt(k, n);
      } catch (err) {
        // Refused by the catalog's rules (state changed under us, a listing gone): not a write.
        if (!(err instanceof CatalogError)) throw err;
        made = false;
      } finally {
        inFlight--;
      }
      if (!made) {
        summary.refused++;
        continue;
      }
      summary.made++;
      summary.byKind[k] = (summary.byKind[k] ?? 0) + 1;
      opts.onWrite?.(summary.made, k);
    }
  }

  await Promise.all(Array.from({ length: opts.concurrency }, () => writer()));
  return summary;
}
