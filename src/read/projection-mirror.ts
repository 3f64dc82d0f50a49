import { createListener, type Subscriber } from '../db/listen.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { SearchDocument, SearchIndex } from '../search/port.ts';
import { SEARCH_COLUMNS, searchDocumentOf, type SearchRow } from '../search/search-row.ts';
import type { ChangeLogPosition } from './feed-cursor.ts';

/**
 * This process's copy of the projection: every live product's stored JSON, indexed by id and
 * slug, and the category list. Loaded from `projection.*` at start and kept current from
 * `projection_changed` notifications, with a poll as the guarantee (NOTIFY only nudges).
 *
 * When the search index is the embedded engine, the mirror feeds it the same changes, so
 * search and fetch-by-slug move together. With Meilisearch the projector feeds the index.
 */
export interface MirroredProduct {
  readonly id: string;
  readonly slug: string;
  /** The public Product, serialized once by the projector. */
  readonly doc: string;
  /** Whether the listing page links the maker's site as a followed link (premium, or a verified badge). */
  readonly websiteFollowed: boolean;
  /** listed_at in ms since the epoch; -Infinity when never listed (the export's order). */
  readonly listedAt: number;
  /** Strong ETag of doc, computed on first use. */
  etag?: string;
  /** The product's answer, made on first use: one object per version of the product. */
  answer?: { readonly body: string; readonly etag: string };
}

/**
 * The live catalog at one position of the change log: what GET /api/v1/export streams. Whatever
 * the mirror's storage, the snapshot must not move while it is read (a change applied to the
 * mirror meanwhile is not seen), and `docs` must be exactly the products `productBySlug` answers
 * at `head`.
 */
export interface CatalogSnapshot {
  /** The change-log position the snapshot is consistent with: export + changes after it = live. */
  readonly head: ChangeLogPosition;
  /** Products in the snapshot. */
  readonly size: number;
  /**
   * Each live product's stored JSON, byte for byte what GET /products/{slug} answers, newest
   * first: listed_at descending, never-listed last, ties by id ascending (the search order).
   * Strings or UTF-8 bytes, whichever the storage holds.
   */
  readonly docs: Iterable<string | Uint8Array>;
}

export interface ProjectionMirror {
  /** Projection version this process reflects. */
  readonly version: number;
  /**
   * The change-log position this process reflects, read in the same snapshot as the products:
   * the change feed serves nothing after it (a client must never hear of a change that
   * /products/{slug} on this process cannot show yet).
   */
  readonly head: ChangeLogPosition;
  /** When the mirror last confirmed it is current (ms since epoch). */
  readonly checkedAt: number;
  readonly size: number;
  productById(id: string): MirroredProduct | undefined;
  productBySlug(slug: string): MirroredProduct | undefined;
  /** The category list envelope as served: `{"categories":[...]}`. */
  readonly categoriesBody: string;
  /**
   * The catalog as it stands, for the bulk export: the ONLY thing the export reads from the
   * mirror, so another storage of the mirror re-implements this one method. Cheap to call.
   */
  exportSnapshot(): CatalogSnapshot;
  /** Called after each applied change, with the new version. */
  onChange(listener: (version: number) => void): () => void;
  /** Applies any change the projection has that this process lacks. */
  refresh(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface ProductRow extends SearchRow {
  slug: string;
  doc: string;
  website_followed: boolean;
}

const PRODUCT_COLUMNS = `slug, doc, website_followed, ${SEARCH_COLUMNS}`;
const LOAD_BATCH = 5000;

/** Categories are listed by name as a reader expects: case and accents do not reorder them. */
const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** The search order: newest first, never-listed last, ties by id ascending. */
function newestFirst(a: MirroredProduct, b: MirroredProduct): number {
  if (a.listedAt !== b.listedAt) return a.listedAt > b.listedAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function entryOf(row: ProductRow): MirroredProduct {
  return {
    id: row.id,
    slug: row.slug,
    doc: row.doc,
    websiteFollowed: row.website_followed,
    listedAt: row.listed_at === null ? Number.NEGATIVE_INFINITY : row.listed_at.getTime(),
  };
}

interface StateRow {
  version: number;
  oldest_version: number;
  change_position: number;
  change_log: string;
}

export interface ProjectionMirrorOptions {
  pool: Pool;
  connectionString: string;
  /** The embedded engine to keep current; undefined when an external index is used. */
  embeddedIndex?: SearchIndex;
  pollMs?: number;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

export function createProjectionMirror(opts: ProjectionMirrorOptions): ProjectionMirror {
  const { pool, embeddedIndex } = opts;
  const pollMs = opts.pollMs ?? 1000;
  let byId = new Map<string, MirroredProduct>();
  let bySlug = new Map<string, MirroredProduct>();
  let version = -1;
  let head: ChangeLogPosition = { log: '', position: 0 };
  let checkedAt = 0;
  // The export's order, kept across versions: re-sorting the previous order with the products
  // changed since appended is a merge of two runs, not a full sort.
  let exportOrder: MirroredProduct[] | undefined;
  let exportOrderVersion = -1;
  let changedSinceOrder: MirroredProduct[] = [];
  let categoriesBody = '{"categories":[]}';
  const listeners = new Set<(version: number) => void>();
  let subscriber: Subscriber | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function readCategories(client: PoolClient): Promise<string> {
    const { rows } = await client.query<{ slug: string; name: string; doc: string }>('SELECT slug, name, doc FROM projection.category_counts');
    rows.sort((a, b) => byName.compare(a.name, b.name) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    return `{"categories":[${rows.map((r) => r.doc).join(',')}]}`;
  }

  async function* readAll(client: PoolClient): AsyncGenerator<ProductRow[]> {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const { rows } = await client.query<ProductRow>(
        `SELECT ${PRODUCT_COLUMNS} FROM projection.products WHERE id > $1 ORDER BY id LIMIT ${LOAD_BATCH}`,
        [after],
      );
      if (rows.length === 0) return;
      yield rows;
      after = rows[rows.length - 1]!.id;
      if (rows.length < LOAD_BATCH) return;
    }
  }

  /** Reads the whole projection at one snapshot and swaps it in. */
  async function fullLoad(client: PoolClient, target: StateRow): Promise<void> {
    const nextById = new Map<string, MirroredProduct>();
    const nextBySlug = new Map<string, MirroredProduct>();
    const batches: SearchDocument[][] = [];
    for await (const rows of readAll(client)) {
      const docs: SearchDocument[] = [];
      for (const row of rows) {
        const entry = entryOf(row);
        nextById.set(row.id, entry);
        nextBySlug.set(row.slug, entry);
        if (embeddedIndex) docs.push(searchDocumentOf(row));
      }
      if (embeddedIndex) batches.push(docs);
    }
    const categories = await readCategories(client);
    if (embeddedIndex) {
      await embeddedIndex.replaceAll(
        (async function* () {
          yield* batches;
        })(),
      );
    }
    byId = nextById;
    bySlug = nextBySlug;
    categoriesBody = categories;
    exportOrder = undefined;
    changedSinceOrder = [];
    version = target.version;
    head = { log: target.change_log, position: target.change_position };
  }

  async function applyDelta(client: PoolClient, from: number, target: StateRow): Promise<void> {
    const removed = await client.query<{ id: string }>('SELECT id FROM projection.removed WHERE version > $1', [from]);
    const changed = await client.query<ProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM projection.products WHERE version > $1`, [from]);
    const categories = await readCategories(client);
    const removedIds = removed.rows.map((r) => r.id).filter((id) => byId.has(id));
    if (embeddedIndex) {
      if (removedIds.length) await embeddedIndex.remove(removedIds);
      if (changed.rows.length) await embeddedIndex.upsert(changed.rows.map(searchDocumentOf));
    }
    for (const id of removedIds) {
      const old = byId.get(id);
      if (old) {
        byId.delete(id);
        if (bySlug.get(old.slug) === old) bySlug.delete(old.slug);
      }
    }
    for (const row of changed.rows) {
      const old = byId.get(row.id);
      if (old && bySlug.get(old.slug) === old) bySlug.delete(old.slug);
      const entry = entryOf(row);
      byId.set(row.id, entry);
      bySlug.set(row.slug, entry);
      if (exportOrder) changedSinceOrder.push(entry);
    }
    // Rather than hold many superseded products for an export that may never come, sort afresh.
    if (changedSinceOrder.length > 1024 + byId.size / 4) {
      exportOrder = undefined;
      changedSinceOrder = [];
    }
    categoriesBody = categories;
    version = target.version;
    head = { log: target.change_log, position: target.change_position };
  }

  /** The live products newest first, at the current version (see CatalogSnapshot). */
  function currentExportOrder(): MirroredProduct[] {
    if (exportOrder && exportOrderVersion === version) return exportOrder;
    // What /products/{slug} answers is what the export holds.
    const isCurrent = (e: MirroredProduct) => bySlug.get(e.slug) === e;
    let next: MirroredProduct[];
    if (exportOrder) {
      next = exportOrder.filter(isCurrent);
      for (const e of changedSinceOrder) if (isCurrent(e)) next.push(e);
    } else {
      next = [...bySlug.values()];
    }
    next.sort(newestFirst);
    exportOrder = next;
    exportOrderVersion = version;
    changedSinceOrder = [];
    return next;
  }

  async function sync(): Promise<void> {
    const client = await pool.connect();
    let changedTo: number | undefined;
    try {
      // One snapshot for the version and the rows, so they agree.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows } = await client.query<StateRow>('SELECT version, oldest_version, change_position, change_log FROM projection.state');
      const state = rows[0] ?? { version: 0, oldest_version: 0, change_position: 0, change_log: '' };
      if (state.version !== version) {
        if (version < 0 || version < state.oldest_version || state.version < version) {
          await fullLoad(client, state);
        } else {
          await applyDelta(client, version, state);
        }
        changedTo = state.version;
      }
      await client.query('COMMIT');
      checkedAt = Date.now();
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    if (changedTo !== undefined) for (const l of listeners) l(changedTo);
  }

  /** Concurrent triggers (notify + poll) fold into at most one running and one queued sync. */
  const syncer = createCoalescedRunner(sync, () => !stopped);
  const refresh = () => syncer.run();

  function refreshQuietly(): void {
    refresh().catch((err: unknown) => opts.log?.warn({ err }, 'projection mirror refresh failed; retrying on the next poll'));
  }

  return {
    get version() {
      return version;
    },
    get head() {
      return head;
    },
    get checkedAt() {
      return checkedAt;
    },
    get size() {
      return byId.size;
    },
    get categoriesBody() {
      return categoriesBody;
    },
    exportSnapshot() {
      const order = currentExportOrder();
      return {
        head,
        size: order.length,
        docs: {
          *[Symbol.iterator]() {
            for (const e of order) yield e.doc;
          },
        },
      };
    },
    productById: (id) => byId.get(id),
    productBySlug: (slug) => bySlug.get(slug),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh,
    async start() {
      await refresh();
      const listener = createListener(opts.connectionString);
      subscriber = listener;
      listener.events.on('error', (err: unknown) => opts.log?.warn({ err }, 'projection_changed listener failed'));
      listener.events.on('reconnect', () => refreshQuietly());
      listener.notifications.on('projection_changed', () => refreshQuietly());
      try {
        await listener.connect();
        await listener.listenTo('projection_changed');
      } catch (err) {
        // The poll below still keeps the mirror current; the listener keeps retrying.
        opts.log?.warn({ err }, 'could not listen for projection_changed; polling only');
      }
      timer = setInterval(refreshQuietly, pollMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await subscriber?.close().catch(() => undefined);
      await syncer.current?.catch(() => undefined);
    },
  };
}
