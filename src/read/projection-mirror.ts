import { etagOf } from './etag.ts';
import { createListener, type Subscriber } from '../db/listen.ts';
import { createCoalescedRunner } from '../util/coalesced-runner.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { EmbeddedSearchIndex } from '../search/embedded/embedded-search-index.ts';
import type { SearchDocument } from '../search/port.ts';
import { searchDocumentOf } from '../search/search-row.ts';
import { Snapshot, SnapshotBuilder, type SnapshotRow } from './snapshot.ts';
import { buildSnapshotFromRows, latestSnapshot, LocalSnapshotCache, readSnapshotBytes, SNAPSHOT_COLUMNS, type SnapshotInfo } from './snapshot-store.ts';

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

export interface ProjectionMirror {
  /** Projection version this process reflects. */
  readonly version: number;
  /** When the mirror last confirmed it is current (ms since epoch). */
  readonly checkedAt: number;
  readonly size: number;
  productById(id: string): MirroredProduct | undefined;
  productBySlug(slug: string): MirroredProduct | undefined;
  /** The category list envelope as served: `{"categories":[...]}`. */
  readonly categoriesBody: string;
  /** Where the mirror's catalog came from at its last full load, for logs and /readyz. */
  readonly loadedFrom: string;
  /** Called after each applied change, with the new version. */
  onChange(listener: (version: number) => void): () => void;
  /** Applies any change the projection has that this process lacks. */
  refresh(): Promise<void>;
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
  pollMs?: number;
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

const EMPTY = new SnapshotBuilder(undefined).finish(0);

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

export function createProjectionMirror(opts: ProjectionMirrorOptions): ProjectionMirror {
  const { pool, embeddedIndex } = opts;
  const pollMs = opts.pollMs ?? 1000;
  const withSearch = embeddedIndex !== undefined;
  const cache = opts.snapshotCacheDir ? new LocalSnapshotCache(opts.snapshotCacheDir) : undefined;
  let snapshot: Snapshot = EMPTY;
  /** Snapshot positions replaced or removed since the snapshot (1 = gone). */
  let gone = new Uint8Array(0);
  let goneCount = 0;
  /** Products changed since the snapshot. */
  let changedById = new Map<string, MirroredProduct>();
  let changedBySlug = new Map<string, MirroredProduct>();
  let version = -1;
  let checkedAt = 0;
  let lastReloadCheck = 0;
  let loadedFrom = 'nothing yet';
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
    let bytes = cache?.read(info);
    const local = bytes !== undefined;
    bytes ??= await readSnapshotBytes(client, info);
    return { snapshot: Snapshot.decode(bytes), info, bytes, local };
  }

  /** Loads the whole projection at the transaction's snapshot: a stored snapshot and the changes since, or every row. */
  async function fullLoad(client: PoolClient, target: number, oldestVersion: number): Promise<void> {
    const started = Date.now();
    const stored = await loadStored(client, oldestVersion, target);
    if (stored) {
      install(stored.snapshot, `snapshot ${stored.info.id} of version ${stored.info.version} (${stored.local ? 'local copy' : 'database'})`);
      await applyDelta(client, stored.snapshot.version, target);
      if (!stored.local && cache) {
        // After the answer: writing a copy is no reason to wait.
        cache.write(stored.info, stored.bytes).catch((err: unknown) => opts.log?.warn({ err }, 'could not keep a local copy of the projection snapshot'));
      }
    } else {
      install(await buildSnapshotFromRows(client, target, withSearch ? opts.searchFields : undefined), `the projection's rows (no usable snapshot)`);
      categoriesBody = await readCategories(client);
    }
    version = target;
    opts.log?.info({ version, listings: size(), from: loadedFrom, ms: Date.now() - started }, 'projection mirror loaded');
  }

  async function applyDelta(client: PoolClient, from: number, target: number): Promise<void> {
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
      const entry: MirroredProduct = { id: row.id, slug: row.slug, bytes, etag: etagOf(row.doc), websiteFollowed: row.website_followed };
      changedById.set(row.id, entry);
      changedBySlug.set(row.slug, entry);
    }
    categoriesBody = categories;
    version = target;
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
    const client = await pool.connect();
    let changedTo: number | undefined;
    try {
      // One snapshot for the version and the rows, so they agree.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows } = await client.query<{ version: number; oldest_version: number }>(
        'SELECT version, oldest_version FROM projection.state',
      );
      const state = rows[0] ?? { version: 0, oldest_version: 0 };
      let reload = version < 0 || version < state.oldest_version || state.version < version;
      if (!reload && wantsNewerSnapshot()) {
        lastReloadCheck = Date.now();
        const latest = await latestSnapshot(client, withSearch);
        reload = latest !== undefined && latest.version > snapshot.version && latest.version <= state.version && latest.version >= state.oldest_version;
      }
      if (reload) {
        await fullLoad(client, state.version, state.oldest_version);
        changedTo = state.version;
      } else if (state.version !== version) {
        await applyDelta(client, version, state.version);
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
