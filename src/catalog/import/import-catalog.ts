import { withTransaction, type Pool, type PoolClient } from '../../db/pool.ts';
import { parseCatalogLine, type CategoryLine, type LineError, type ListingLine } from '../listings/listing-input.ts';
import { markBulkTransaction } from './bulk-transaction.ts';
import { ensureLabelsAndTags, ensureMakers, findListings, upsertCategories, upsertListings } from './write-listings.ts';

/**
 * Imports a catalog given as NDJSON lines (see listing-input.ts for the line kinds), streamed in
 * one pass inside one transaction: lines are validated as they arrive and written in batches.
 * The first invalid line stops the writing, but every later line is still checked so one run
 * reports every problem; the transaction then rolls back and nothing at all is imported. The
 * pool must be one without deadlines (docs/partitions.md): an import may rightly take minutes.
 */

export interface ImportOptions {
  /** Rows per INSERT statement; 500 by default. */
  batchSize?: number;
  /** The time given to live listings that carry no listed_at; now by default. */
  now?: Date;
  /** Called every few hundred lines and once at the end. */
  onProgress?: (progress: ImportProgress) => void;
}

interface ImportProgress {
  /** Lines read so far, blank ones included. */
  lines: number;
  errors: number;
}

export interface ImportResult {
  /** True when every line was valid and everything was committed. */
  ok: boolean;
  /** Every problem, in line order; empty when ok. */
  errors: LineError[];
  /** Lines read, blank ones included. */
  lines: number;
  /** Distinct categories in the input (written only when ok). */
  categories: number;
  /** Distinct listings in the input: new ones and ones that already existed (written only when ok). */
  listings: { created: number; updated: number };
}

const PROGRESS_EVERY = 500;

/** Where a listing's id stands while the file is read: known, or to be generated on insert. */
interface ListingIdentity {
  id: string | null;
  line: number;
}

interface PendingListing {
  line: number;
  value: ListingLine;
}

export async function importCatalog(
  pool: Pool,
  lines: AsyncIterable<string> | Iterable<string>,
  opts: ImportOptions = {},
): Promise<ImportResult> {
  const batchSize = opts.batchSize ?? 500;
  const now = (opts.now ?? new Date()).toISOString();
  const errors: LineError[] = [];
  const result: ImportResult = { ok: false, errors, lines: 0, categories: 0, listings: { created: 0, updated: 0 } };

  let inFlight: Promise<void> = Promise.resolve();
  return withTransaction(pool, async (client, tx) => {
    try {
      // An import is bulk: edits committed while it runs are projected without waiting for it.
      await markBulkTransaction(client);
      const state: ImportState = {
        client,
        errors,
        counts: result.listings,
        knownCategories: new Set((await client.query<{ slug: string }>('SELECT slug FROM catalog.categories')).rows.map((r) => r.slug)),
        identities: new Map(),
        slugOfId: new Map(),
      };
      const fileCategories = new Set<string>();
      const knownLabels = new Set<string>();
      const knownTags = new Set<string>();
      const knownMakers = new Set<string>();
      let pendingCategories = new Map<string, CategoryLine>();
      let pendingListings: PendingListing[] = [];
      // Once a line is invalid nothing more is written; the rest is only checked.
      const writing = () => errors.length === 0;

      const writeBatch = async (categories: CategoryLine[], listings: PendingListing[]) => {
        // categories first: the listings of the same batch may reference them
        if (writing()) await upsertCategories(client, categories);
        if (listings.length === 0) return;
        const rows = await checkIdentities(state, listings);
        if (!writing()) return;
        const labels = newOnes(rows.flatMap((r) => r.value.labels), knownLabels);
        const tags = newOnes(rows.flatMap((r) => r.value.tags), knownTags);
        await ensureLabelsAndTags(client, labels, tags);
        await ensureMakers(client, newOnes(rows.flatMap((r) => (r.value.maker_email ? [r.value.maker_email.toLowerCase()] : [])), knownMakers));
        await upsertListings(
          client,
          rows.map(({ value, storedListedAt }) => ({
            ...value,
            // A line without listed_at keeps the stored one, so re-importing a catalog does not
            // move its listings to the top of "newest first"; a new live listing went live now.
            listed_at: value.listed_at ?? storedListedAt ?? (value.status === 'live' ? now : null),
          })),
        );
      };

      // Batches are written one at a time and in file order, while the lines of the next batch
      // are parsed: validation (mostly HTML sanitizing) and the database work side by side.
      const dispatch = async () => {
        const categories = [...pendingCategories.values()];
        const listings = pendingListings;
        pendingCategories = new Map();
        pendingListings = [];
        if (categories.length === 0 && listings.length === 0) return;
        await inFlight;
        inFlight = writeBatch(categories, listings);
        inFlight.catch(() => undefined); // awaited by the next dispatch or at the end
      };

      for await (const rawLine of lines) {
        const line = ++result.lines;
        const raw = line === 1 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
        if (line % PROGRESS_EVERY === 0) opts.onProgress?.({ lines: line, errors: errors.length });
        if (raw.trim() === '') continue;
        const parsed = parseCatalogLine(raw, line);
        if (!parsed.ok) {
          errors.push(...parsed.errors);
          // Report an unknown category on the same line too, so one pass shows every problem.
          const category = rawCategory(raw);
          if (category !== undefined && !state.knownCategories.has(category) && !parsed.errors.some((e) => e.field === 'category')) {
            errors.push({ line, field: 'category', message: unknownCategory(category) });
          }
          continue;
        }
        const value = parsed.value;
        if (value.kind === 'category') {
          state.knownCategories.add(value.slug);
          fileCategories.add(value.slug);
          pendingCategories.delete(value.slug); // the last line for a slug wins
          pendingCategories.set(value.slug, value);
          if (pendingCategories.size >= batchSize) await dispatch();
          continue;
        }
        if (value.category !== null && !state.knownCategories.has(value.category)) {
          errors.push({ line, field: 'category', message: unknownCategory(value.category) });
          continue;
        }
        pendingListings.push({ line, value });
        if (pendingListings.length >= batchSize) await dispatch();
      }
      await dispatch();
      await inFlight;
      opts.onProgress?.({ lines: result.lines, errors: errors.length });

      result.categories = fileCategories.size;
      errors.sort((a, b) => a.line - b.line);
      if (errors.length > 0) {
        tx.rollbackOnReturn();
        result.listings = { created: 0, updated: 0 };
        return result;
      }
      result.ok = true;
      return result;
    } finally {
      // a batch may still be running when reading failed: let it end before rolling back
      await inFlight.catch(() => undefined);
    }
  });
}

interface ImportState {
  client: PoolClient;
  errors: LineError[];
  counts: { created: number; updated: number };
  knownCategories: Set<string>;
  /** Every listing slug seen so far, with the id it has or will get. */
  identities: Map<string, ListingIdentity>;
  /** Every explicit id seen so far, with its slug. */
  slugOfId: Map<string, string>;
}

function newOnes(values: readonly string[], known: Set<string>): string[] {
  const fresh: string[] = [];
  for (const v of values) {
    if (known.has(v)) continue;
    known.add(v);
    fresh.push(v);
  }
  return fresh;
}

/**
 * Upsert is by slug and keeps the stored id. An explicit id is accepted only when it is new or
 * already the id of that very slug (in the database or on an earlier line); anything else would
 * move an id between listings, so it is a line error. Counts each distinct slug once, as new or
 * updated. Returns the rows to write, one per slug (the last line for a slug wins), each with
 * the listed_at stored for it.
 */
async function checkIdentities(
  state: ImportState,
  batch: readonly PendingListing[],
): Promise<Array<{ value: ListingLine; storedListedAt: string | undefined }>> {
  const slugs = [...new Set(batch.map((p) => p.value.slug))];
  const ids = [...new Set(batch.flatMap((p) => (p.value.id ? [p.value.id] : [])))];
  const stored = await findListings(state.client, slugs, ids);
  const storedBySlug = new Map(stored.map((r) => [r.slug, r]));
  const storedById = new Map(stored.map((r) => [r.id, r.slug]));

  const rows = new Map<string, { value: ListingLine; storedListedAt: string | undefined }>();
  for (const { line, value } of batch) {
    const earlier = state.identities.get(value.slug);
    const storedRow = storedBySlug.get(value.slug);
    const currentId = earlier ? earlier.id : storedRow?.id;
    if (value.id) {
      const owner = state.slugOfId.get(value.id) ?? storedById.get(value.id);
      if (owner !== undefined && owner !== value.slug) {
        state.errors.push({ line, field: 'id', message: `already belongs to the listing '${owner}'` });
        continue;
      }
      if (currentId !== undefined && currentId !== value.id) {
        const why = earlier
          ? `line ${earlier.line} gives it ${earlier.id ? `the id ${earlier.id}` : 'no id, so a new one is generated'}`
          : `its id is ${currentId}`;
        state.errors.push({ line, field: 'id', message: `does not match the listing '${value.slug}': ${why}` });
        continue;
      }
      state.slugOfId.set(value.id, value.slug);
    }
    if (!earlier) {
      if (storedRow === undefined) state.counts.created++;
      else state.counts.updated++;
    }
    state.identities.set(value.slug, { id: value.id ?? currentId ?? null, line: earlier?.line ?? line });
    rows.delete(value.slug);
    rows.set(value.slug, { value, storedListedAt: storedRow?.listed_at?.toISOString() });
  }
  return [...rows.values()];
}

function unknownCategory(slug: string): string {
  return `no category '${slug}': define it on an earlier line or import it first`;
}

/** The category a listing line names, when the line is JSON with a string category. */
function rawCategory(raw: string): string | undefined {
  try {
    const doc = JSON.parse(raw) as { kind?: unknown; category?: unknown };
    return doc.kind === 'listing' && typeof doc.category === 'string' && doc.category !== '' ? doc.category : undefined;
  } catch {
    return undefined;
  }
}

/** True when the write model holds no listing and no category: a fresh installation. */
export async function isCatalogEmpty(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ empty: boolean }>(
    'SELECT NOT EXISTS (SELECT 1 FROM catalog.listings) AND NOT EXISTS (SELECT 1 FROM catalog.categories) AS empty',
  );
  return rows[0]!.empty;
}
