import { createListener, type Subscriber } from '../db/listen.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { EmbeddedSearchIndex } from '../search/embedded/embedded-search-index.ts';
import type { SearchDocument } from '../search/port.ts';
import { searchDocumentOf } from '../search/search-row.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';
import { tracing } from '../util/tracing.ts';
import type { ChangeLogPosition } from './feed-cursor.ts';
import { AppliedVersions, type AppliedVersion } from './mirror-applied.ts';
import { MirroredCatalog, type ListingStamp, type MirroredProduct } from './mirror-catalog.ts';
import { loadStoredSnapshot, readCategories, readChanges, readState } from './mirror-reads.ts';
import { deliveryOf, mustLoadWhole, newerSnapshotCheckDue, newerSnapshotUsable, type ChangeDelivery, type StateRow } from './mirror-versions.ts';
import type { Snapshot } from './snapshot.ts';
import type { SnapshotPrefetch } from './snapshot-file.ts';
import { buildSnapshotFromRows, latestSnapshot, LocalSnapshotCache } from './snapshot-store.ts';

export type {  ListingStamp, MirroredProduct };

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
   */
  readonly docs: Iterable<Uint8Array>;
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
  /** Where the mirror's catalog came from at its last full load, for logs and /readyz. */
  readonly loadedFrom: string;
  /**
   * The catalog as it stands, for the bulk export: the only thing the export reads from the
   * mirror. Cheap to call: it holds the current snapshot, a copy of which of its positions are
   * gone, and the products changed since it in listing order, and merges them as it is read.
   */
  exportSnapshot(): CatalogSnapshot;
  /** Every live listing's slug and listing time, in the export's order (the sitemap's rows). */
  listings(): Iterable<ListingStamp>;
  /**
   * Called after each applied change, with the new version and, when the change came as a
   * delta of a version carrying write-model changes, how long its way took (see ChangeDelivery).
   */
  onChange(listener: (version: number, delivery?: ChangeDelivery) => void): () => void;
  /** Applies any change the projection has that this process lacks. */
  refresh(): Promise<void>;
  /** Whether the projector has written a snapshot this mirror can load (without one it builds its own from the rows). */
  hasSnapshot(): Promise<boolean>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ProjectionMirrorOptions {
  pool: Pool;
  connectionString: string;
  /** The embedded engine to keep current; undefined when an external index is used. */
  embeddedIndex?: EmbeddedSearchIndex;
  /** The embedded engine's searchable fields (a snapshot built here indexes them). */
  searchFields?: readonly (keyof SearchDocument)[];
  /** Folder for the local copy of the snapshot; undefined keeps none. */
  snapshotCacheDir?: string;
  /** A read of that folder's newest copy begun as the process started; used if it is the snapshot to load. */
  snapshotPrefetch?: Promise<SnapshotPrefetch | undefined>;
  pollMs?: number;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

/**
 * This process's copy of the projection: every live product's stored JSON, found by id and by
 * slug, and the category list. Kept current from `projection_changed` notifications, with a
 * poll as the guarantee (NOTIFY only nudges).
 *
 * Its parts: the products it holds (mirror-catalog.ts), the rules deciding what a sync applies
 * (mirror-versions.ts), what it reads of the projection (mirror-reads.ts), and what follows a
 * version applied (mirror-applied.ts: listeners, a trace span). This file puts them together.
 *
 * Storage: a snapshot (snapshot.ts: one buffer of typed arrays, off the JavaScript heap) of
 * some projection version, loaded whole from the projector's latest one (a local copy, else
 * PostgreSQL) or, when there is none, built here from the rows; and the products changed since
 * it (a few, as objects) with the snapshot positions they replace marked gone. When the changes
 * pile up and the projector has written a newer snapshot, the mirror moves to it.
 *
 * When the search index is the embedded engine, the mirror feeds it the same snapshot and the
 * same changes, so search and fetch-by-slug move together. With Meilisearch the projector
 * feeds the index.
 */
export function createProjectionMirror(opts: ProjectionMirrorOptions): ProjectionMirror {
  const { pool, embeddedIndex } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const withSearch = embeddedIndex !== undefined;
  const cache = opts.snapshotCacheDir ? new LocalSnapshotCache(opts.snapshotCacheDir, opts.snapshotPrefetch) : undefined;
  const catalog = new MirroredCatalog();
  const applied = new AppliedVersions();
  let version = -1;
  let head: ChangeLogPosition = { log: '', position: 0 };
  let checkedAt = 0;
  let lastReloadCheck = 0;
  let loadedFrom = 'nothing yet';
  let categoriesBody = '{"categories":[]}';
  let subscriber: Subscriber | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  /** Takes a snapshot as the whole catalog, and feeds it to the embedded engine. */
  function install(next: Snapshot, from: string): void {
    catalog.install(next);
    loadedFrom = from;
    if (embeddedIndex) {
      if (!next.search) throw new Error('the snapshot holds no search index');
      embeddedIndex.useBase({ positions: next.positions, index: next.search });
    }
  }

  /** Loads the whole projection at the transaction's snapshot: a stored snapshot and the changes since, or every row. */
  async function fullLoad(client: PoolClient, state: StateRow): Promise<void> {
    const target = state.version;
    const started = Date.now();
    const stored = await loadStoredSnapshot(client, pool, cache, withSearch, state);
    cache?.forgetPrefetch();
    if (stored) {
      install(stored.snapshot, `snapshot ${stored.info.id} of version ${stored.info.version} (${stored.local ? 'local copy' : 'database'})`);
      await applyDelta(client, stored.snapshot.version, state);
      if (!stored.local && cache) {
        // After the answer: writing a copy is no reason to wait.
        cache.write(stored.info, stored.bytes).catch((err: unknown) => opts.log?.warn({ err }, 'could not keep a local copy of the projection snapshot'));
      }
    } else {
      install(await buildSnapshotFromRows(client, target, withSearch ? opts.searchFields : undefined), `the projection's rows (no usable snapshot)`);
      categoriesBody = await readCategories(client);
    }
    version = target;
    head = { log: state.change_log, position: state.change_position };
    opts.log?.info({ version, listings: catalog.size, from: loadedFrom, ms: Date.now() - started }, 'projection mirror loaded');
  }

  /** Applies what changed after version `from`, to the embedded engine first, then to the catalog. */
  async function applyDelta(client: PoolClient, from: number, state: StateRow): Promise<void> {
    const changes = await readChanges(client, from);
    if (embeddedIndex) {
      if (changes.removedIds.length) await embeddedIndex.remove(changes.removedIds);
      if (changes.rows.length) await embeddedIndex.upsert(changes.rows.map(searchDocumentOf));
    }
    catalog.apply(changes.removedIds, changes.rows);
    categoriesBody = changes.categoriesBody;
    version = state.version;
    head = { log: state.change_log, position: state.change_position };
  }

  /** Inside the sync's transaction: the whole projection or the changes since this process's version, whichever the rules ask for. */
  async function applyLatest(client: PoolClient, began: number): Promise<AppliedVersion | undefined> {
    const from = version;
    const state = await readState(client);
    let reload = mustLoadWhole(version, state);
    if (!reload && newerSnapshotCheckDue(catalog.changesSinceSnapshot, catalog.base.count, Date.now() - lastReloadCheck)) {
      lastReloadCheck = Date.now();
      reload = newerSnapshotUsable(await latestSnapshot(client, withSearch), catalog.base.version, state);
    }
    const { traceparent } = state;
    if (reload) {
      await fullLoad(client, state);
      return { from, to: state.version, full: true, delivery: undefined, traceparent, began };
    }
    if (state.version === version) return undefined;
    await applyDelta(client, version, state);
    return { from, to: state.version, full: false, delivery: deliveryOf(state, Date.now()), traceparent, began };
  }

  async function sync(): Promise<void> {
    const began = tracing() === undefined ? 0 : Date.now();
    // One snapshot for the version and the rows, so they agree; read only, so it takes no
    // transaction id and never holds the projector's outbox horizon back.
    const moved = await withTransaction(pool, { isolation: 'repeatable read', readOnly: true }, (client) => applyLatest(client, began));
    checkedAt = Date.now();
    if (moved) applied.announce(moved);
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
      return catalog.size;
    },
    get categoriesBody() {
      return categoriesBody;
    },
    get loadedFrom() {
      return loadedFrom;
    },
    exportSnapshot() {
      return { head, size: catalog.size, docs: catalog.docs() };
    },
    listings() {
      return catalog.listings();
    },
    productById(id) {
      return catalog.productById(id);
    },
    productBySlug(slug) {
      return catalog.productBySlug(slug);
    },
    onChange(listener) {
      return applied.subscribe(listener);
    },
    refresh,
    async hasSnapshot() {
      const [info, { rows }] = await Promise.all([
        latestSnapshot(pool, withSearch),
        pool.query<{ oldest_version: number }>('SELECT oldest_version FROM projection.state'),
      ]);
      return info !== undefined && info.version >= Number(rows[0]?.oldest_version ?? 0);
    },
    async start() {
      const listener = createListener(opts.connectionString);
      subscriber = listener;
      listener.events.on('error', (err: unknown) => opts.log?.warn({ err }, 'projection_changed listener failed'));
      listener.events.on('reconnect', () => refreshQuietly());
      listener.notifications.on('projection_changed', () => refreshQuietly());
      // The listener connects while the catalog loads (one connection's set-up less to wait for);
      // a change heard meanwhile queues one more sync after the load.
      const listening = (async () => {
        await listener.connect();
        await listener.listenTo('projection_changed');
      })().catch((err: unknown) => {
        // The poll below still keeps the mirror current; the listener keeps retrying.
        opts.log?.warn({ err }, 'could not listen for projection_changed; polling only');
      });
      try {
        await refresh();
      } catch (err) {
        await listening;
        subscriber = undefined;
        await listener.close().catch(() => undefined);
        throw err;
      }
      await listening;
      if (stopped) return;
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
