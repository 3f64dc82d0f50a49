import { etagOf } from './etag.ts';
import { createListener, type Subscriber } from '../db/listen.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { EmbeddedSearchIndex } from '../search/embedded/embedded-search-index.ts';
import type { SearchDocument } from '../search/port.ts';
import { searchDocumentOf } from '../search/search-row.ts';
import { compareListing } from '../search/embedded/listing-positions.ts';
import type { ChangeLogPosition } from './feed-cursor.ts';
import { Snapshot, SnapshotBuilder, type SnapshotRow } from './snapshot.ts';
import { buildSnapshotFromRows, latestSnapshot, LocalSnapshotCache, readSnapshotBytes, SNAPSHOT_COLUMNS, type SnapshotInfo } from './snapshot-store.ts';
import type { SnapshotPrefetch } from './snapshot-file.ts';
import { tracing } from '../util/tracing.ts';

/**
 * This process's copy of the projection: every live product's stored JSON, found by id and by
 * slug, and the category list. Kept current from `projection_changed` notifications, with a
 * poll as the guarantee (NOTIFY only nudges).
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
export interface MirroredProduct {
  readonly id: string;
  readonly slug: string;
  /** The public Product as UTF-8 bytes, serialized once by the projector. */
  readonly bytes: Buffer;
  /** Strong ETag of the document. */
  readonly etag: string;
  /** Whether the listing page links the maker's site as a followed link (premium, or a verified badge). */
  readonly websiteFollowed: boolean;
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
   */
  readonly docs: Iterable<Uint8Array>;
}

/** A live listing as the sitemap needs it: read from the mirror without decoding its document. */
export interface ListingStamp {
  readonly slug: string;
  /** When it went live, in ms since the epoch; -Infinity when never listed. */
  readonly listedAt: number;
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


/** Move to a newer snapshot once this many products changed since ours (and at least a fiftieth of the catalog). */
const RELOAD_MIN_CHANGES = 1000;
const RELOAD_SHARE = 50;
/** How often a mirror with many changes looks for a newer snapshot. */
const RELOAD_CHECK_MS = 10_000;

/** Categories are listed by name as a reader expects: case and accents do not reorder them. */
const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

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

const EMPTY = new SnapshotBuilder(undefined).finish(0);

/** A product changed since the snapshot, kept as an object. */
interface ChangedProduct extends MirroredProduct {
  /** listed_at in ms since the epoch; -Infinity when never listed (listing order). */
  readonly listedAt: number;
}

interface StateRow {
  version: number;
  oldest_version: number;
  change_position: number;
  change_log: string;
  committed_at: Date | null;
  oldest_change_at: Date | null;
  /** The W3C traceparent of the projector's batch that wrote this version, when it traced it. */
  traceparent: string | null;
}

/**
 * The way of the latest version this process applied, in seconds: from the oldest write-model
 * change it carries being committed to the projector committing it (`projected`), and from then
 * to this process applying it (`applied`). Clocks: PostgreSQL's for the first, this host's for
 * the second's end (the same clock on one host; across hosts their offset adds in).
 */
export interface ChangeDelivery {
  projected: number;
  applied: number;
}

/** A product of the snapshot, read from it field by field as asked (most reads need only the document and its ETag). */
class SnapshotProduct implements MirroredProduct {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly p: number,
  ) {}

  get id(): string {
    return this.snapshot.positions.idAt(this.p);
  }

  get slug(): string {
    return this.snapshot.slugAt(this.p);
  }

  get bytes(): Buffer {
    return this.snapshot.docBytes(this.p);
  }

  get etag(): string {
    return this.snapshot.etagAt(this.p);
  }

  get websiteFollowed(): boolean {
    return this.snapshot.websiteFollowed(this.p);
  }
}

/** The snapshot's positions not gone, merged with the products changed since it, in listing order. */
function* inListingOrder<T>(
  base: Snapshot,
  goneNow: Uint8Array,
  changed: readonly ChangedProduct[],
  fromBase: (p: number) => T,
  fromChanged: (c: ChangedProduct) => T,
): Generator<T> {
  let c = 0;
  for (let p = 0; p < base.count; p++) {
    if (goneNow[p] !== 0) continue;
    while (c < changed.length && base.positions.compareWith(p, changed[c]!.listedAt, changed[c]!.id) > 0) yield fromChanged(changed[c++]!);
    yield fromBase(p);
  }
  while (c < changed.length) yield fromChanged(changed[c++]!);
}

export function createProjectionMirror(opts: ProjectionMirrorOptions): ProjectionMirror {
  const { pool, embeddedIndex } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const withSearch = embeddedIndex !== undefined;
  const cache = opts.snapshotCacheDir ? new LocalSnapshotCache(opts.snapshotCacheDir, opts.snapshotPrefetch) : undefined;
  let snapshot: Snapshot = EMPTY;
  /** Snapshot positions replaced or removed since the snapshot (1 = gone). */
  let gone = new Uint8Array(0);
  let goneCount = 0;
  /** Products changed since the snapshot. */
  let changedById = new Map<string, ChangedProduct>();
  let changedBySlug = new Map<string, ChangedProduct>();
  /** The changed products in listing order, made for an export and kept until the next change. */
  let changedInOrder: ChangedProduct[] | undefined;
  let version = -1;
  let head: ChangeLogPosition = { log: '', position: 0 };
  let checkedAt = 0;
  let lastReloadCheck = 0;
  let loadedFrom = 'nothing yet';
  let categoriesBody = '{"categories":[]}';
  const listeners = new Set<(version: number, delivery?: ChangeDelivery) => void>();
  let subscriber: Subscriber | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function readCategories(client: PoolClient): Promise<string> {
    const { rows } = await client.query<{ slug: string; name: string; doc: string }>('SELECT slug, name, doc FROM projection.category_counts');
    rows.sort((a, b) => byName.compare(a.name, b.name) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    return `{"categories":[${rows.map((r) => r.doc).join(',')}]}`;
  }

  function snapshotProduct(p: number): MirroredProduct {
    return new SnapshotProduct(snapshot, p);
  }

  function markGone(id: string): void {
    const p = snapshot.positions.positionOf(id);
    if (p >= 0 && gone[p] === 0) {
      gone[p] = 1;
      goneCount++;
    }
  }

  /** Takes a snapshot as the whole catalog (nothing changed since). */
  function install(next: Snapshot, from: string): void {
    snapshot = next;
    gone = new Uint8Array(next.count);
    goneCount = 0;
    changedById = new Map();
    changedBySlug = new Map();
    changedInOrder = undefined;
    loadedFrom = from;
    if (embeddedIndex) {
      if (!next.search) throw new Error('the snapshot holds no search index');
      embeddedIndex.useBase({ positions: next.positions, index: next.search });
    }
  }

  /** The projector's latest snapshot, from this host's copy or the database; undefined when none is usable. */
  async function loadStored(client: PoolClient, oldestVersion: number, current: number): Promise<{ snapshot: Snapshot; info: SnapshotInfo; bytes: Buffer; local: boolean } | undefined> {
    const info = await latestSnapshot(client, withSearch);
    // Changes since it must still be readable (removals are pruned up to oldest_version).
    if (!info || info.version < oldestVersion || info.version > current) return undefined;
    let bytes = await cache?.read(info);
    const local = bytes !== undefined;
    bytes ??= await readSnapshotBytes(client, info, pool);
    return { snapshot: Snapshot.decode(bytes), info, bytes, local };
  }

  /** Loads the whole projection at the transaction's snapshot: a stored snapshot and the changes since, or every row. */
  async function fullLoad(client: PoolClient, state: StateRow): Promise<void> {
    const target = state.version;
    const oldestVersion = state.oldest_version;
    const started = Date.now();
    const stored = await loadStored(client, oldestVersion, target);
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
    opts.log?.info({ version, listings: size(), from: loadedFrom, ms: Date.now() - started }, 'projection mirror loaded');
  }

  async function applyDelta(client: PoolClient, from: number, state: StateRow): Promise<void> {
    const removed = await client.query<{ id: string }>('SELECT id FROM projection.removed WHERE version > $1', [from]);
    const changed = await client.query<SnapshotRow>(`SELECT ${SNAPSHOT_COLUMNS} FROM projection.products WHERE version > $1`, [from]);
    const categories = await readCategories(client);
    const removedIds = removed.rows.map((r) => r.id);
    if (embeddedIndex) {
      if (removedIds.length) await embeddedIndex.remove(removedIds);
      if (changed.rows.length) await embeddedIndex.upsert(changed.rows.map(searchDocumentOf));
    }
    const drop = (id: string) => {
      const old = changedById.get(id);
      if (old) {
        changedById.delete(id);
        if (changedBySlug.get(old.slug) === old) changedBySlug.delete(old.slug);
      }
      markGone(id);
    };
    for (const id of removedIds) drop(id);
    for (const row of changed.rows) {
      drop(row.id);
      const bytes = Buffer.from(row.doc, 'utf8');
      const listedAt = row.listed_at === null ? Number.NEGATIVE_INFINITY : row.listed_at.getTime();
      const entry: ChangedProduct = { id: row.id, slug: row.slug, bytes, etag: etagOf(row.doc), websiteFollowed: row.website_followed, listedAt };
      changedById.set(row.id, entry);
      changedBySlug.set(row.slug, entry);
    }
    if (removedIds.length || changed.rows.length) changedInOrder = undefined;
    categoriesBody = categories;
    version = state.version;
    head = { log: state.change_log, position: state.change_position };
  }

  /**
   * What a reader of the whole catalog holds on to: the snapshot's arrays never change, but which
   * of its positions are gone does, so that is copied; the changed products in listing order are
   * kept until the next change.
   */
  function frozenCatalog(): { goneNow: Uint8Array; changed: readonly ChangedProduct[] } {
    changedInOrder ??= [...changedById.values()].sort((a, b) => compareListing(a.listedAt, a.id, b.listedAt, b.id));
    return { goneNow: gone.slice(), changed: changedInOrder };
  }

  function size(): number {
    return snapshot.count - goneCount + changedById.size;
  }

  /** Whether enough changed since the snapshot to look for a newer one. */
  function wantsNewerSnapshot(): boolean {
    const changes = goneCount + changedById.size;
    return changes >= RELOAD_MIN_CHANGES && changes * RELOAD_SHARE >= snapshot.count && Date.now() - lastReloadCheck >= RELOAD_CHECK_MS;
  }

  async function sync(): Promise<void> {
    const began = tracing() === undefined ? 0 : Date.now();
    const from = version;
    let changedTo: number | undefined;
    let delivery: ChangeDelivery | undefined;
    let traceparent: string | null = null;
    let full = false;
    // One snapshot for the version and the rows, so they agree.
    await withTransaction(pool, { isolation: 'repeatable read', readOnly: true }, async (client) => {
      const { rows } = await client.query<StateRow>('SELECT version, oldest_version, change_position, change_log, committed_at, oldest_change_at, traceparent FROM projection.state');
      const state = rows[0] ?? { version: 0, oldest_version: 0, change_position: 0, change_log: '', committed_at: null, oldest_change_at: null, traceparent: null };
      traceparent = state.traceparent;
      let reload = version < 0 || version < state.oldest_version || state.version < version;
      if (!reload && wantsNewerSnapshot()) {
        lastReloadCheck = Date.now();
        const latest = await latestSnapshot(client, withSearch);
        reload = latest !== undefined && latest.version > snapshot.version && latest.version <= state.version && latest.version >= state.oldest_version;
      }
      if (reload) {
        await fullLoad(client, state);
        changedTo = state.version;
        full = true;
      } else if (state.version !== version) {
        await applyDelta(client, version, state);
        changedTo = state.version;
        if (state.committed_at && state.oldest_change_at) {
          const committed = state.committed_at.getTime();
          delivery = { projected: Math.max(0, committed - state.oldest_change_at.getTime()) / 1000, applied: Math.max(0, Date.now() - committed) / 1000 };
        }
      }
    });
    checkedAt = Date.now();
    if (changedTo !== undefined && began !== 0) traceApply(began, from, changedTo, full, traceparent, delivery);
    if (changedTo !== undefined) for (const l of listeners) l(changedTo, delivery);
  }

  /**
   * With traces on, a span for this process applying a version, in the trace of the projector's
   * batch that wrote it (and linked to it): one change's way, from its batch to every process,
   * is one trace. A process that applies several versions at once joins the last one's.
   */
  function traceApply(began: number, from: number, to: number, full: boolean, traceparent: string | null, delivery: ChangeDelivery | undefined): void {
    const t = tracing();
    if (t === undefined) return;
    const batch = t.spanContextOf(traceparent ?? undefined);
    const span = t.tracer.startSpan(
      'projection apply',
      {
        kind: t.kind.consumer,
        startTime: began,
        attributes: {
          'catalog.projection.version': to,
          'catalog.projection.version_from': from,
          'catalog.projection.full_load': full,
          ...(delivery && { 'catalog.change.projected_seconds': delivery.projected, 'catalog.change.delivery_seconds': delivery.applied }),
        },
        ...(batch && { links: [t.link(batch)] }),
      },
      t.contextWith(batch),
    );
    span.end();
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
      return size();
    },
    get categoriesBody() {
      return categoriesBody;
    },
    get loadedFrom() {
      return loadedFrom;
    },
    exportSnapshot() {
      const base = snapshot;
      const { goneNow, changed } = frozenCatalog();
      return {
        head,
        size: size(),
        docs: {
          [Symbol.iterator]: () =>
            inListingOrder(
              base,
              goneNow,
              changed,
              (p) => base.docBytes(p),
              (c) => c.bytes,
            ),
        },
      };
    },
    listings() {
      const base = snapshot;
      const { goneNow, changed } = frozenCatalog();
      return {
        [Symbol.iterator]: () =>
          inListingOrder<ListingStamp>(
            base,
            goneNow,
            changed,
            (p) => ({ slug: base.slugAt(p), listedAt: base.positions.arrays.listedAt[p]! }),
            (c) => c,
          ),
      };
    },
    productById(id) {
      const changed = changedById.get(id);
      if (changed) return changed;
      const p = snapshot.positions.positionOf(id);
      return p >= 0 && gone[p] === 0 ? snapshotProduct(p) : undefined;
    },
    productBySlug(slug) {
      const changed = changedBySlug.get(slug);
      if (changed) return changed;
      const p = snapshot.positionOfSlug(slug);
      return p >= 0 && gone[p] === 0 ? snapshotProduct(p) : undefined;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
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
