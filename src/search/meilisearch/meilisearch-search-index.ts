import { randomBytes } from 'node:crypto';
import { Meilisearch, MeilisearchApiError, type EnqueuedTaskPromise, type Index, type Settings } from 'meilisearch';
import type { SearchDocument, SearchHits, SearchIndex, SearchRequest } from '../port.ts';
import { loadSearchSettings, typoSizesOf, type SearchSettingsFile } from '../search-settings.ts';
import { parseQuery, queryText } from '../words.ts';
import { filterExpressions } from './filter.ts';
import { pageWindow } from './page-window.ts';
import { SearchIndexWriteError } from './search-task-error.ts';

/**
 * Listing time stored for a listing that was never listed: the earliest time a JavaScript Date
 * can hold, so "listed_at:desc" puts such listings after every listed one, ties by id, without
 * depending on how Meilisearch places documents lacking a sort field.
 */
const NEVER_LISTED = -8.64e15;

/** The document as Meilisearch stores it: never listed sorts last as NEVER_LISTED. */
type MeiliDocument = Omit<SearchDocument, 'listed_at'> & { listed_at: number };

export interface MeilisearchIndexOptions {
  url: string;
  key: string | undefined;
  /** The index uid readers search. */
  index: string;
  settings?: SearchSettingsFile;
  /** How long to wait for one write task, in ms. */
  taskTimeoutMs?: number;
  /** Documents per addDocuments call during replaceAll. */
  batchSize?: number;
}

function toMeili(doc: SearchDocument): MeiliDocument {
  return {
    id: doc.id,
    name: doc.name,
    punchline: doc.punchline,
    description_text: doc.description_text,
    category: doc.category,
    labels: [...doc.labels],
    tags: [...doc.tags],
    listed_at: doc.listed_at ?? NEVER_LISTED,
  };
}

/**
 * The search index in Meilisearch (scale-out mode). Settings come from
 * search-config/meilisearch.json and are applied before the first write of the process; every
 * write waits for its task and throws a SearchIndexWriteError when it did not succeed.
 * Searches send the query words parsed by ../words.ts, so Meilisearch reads a query exactly
 * as the embedded engine does.
 */
export class MeilisearchSearchIndex implements SearchIndex {
  readonly kind = 'meilisearch' as const;
  readonly target: string;
  private readonly client: Meilisearch;
  private readonly uid: string;
  private readonly file: SearchSettingsFile;
  private readonly taskTimeoutMs: number;
  private readonly batchSize: number;
  private ready: Promise<void> | undefined;

  constructor(options: MeilisearchIndexOptions) {
    this.client = new Meilisearch({ host: options.url, apiKey: options.key });
    this.uid = options.index;
    this.target = `meilisearch:${options.url.replace(/\/+$/, '')}/indexes/${options.index}`;
    this.file = options.settings ?? loadSearchSettings();
    this.taskTimeoutMs = options.taskTimeoutMs ?? 600_000;
    this.batchSize = options.batchSize ?? 5000;
  }

  private get index(): Index<MeiliDocument> {
    return this.client.index<MeiliDocument>(this.uid);
  }

  async search(request: SearchRequest): Promise<SearchHits> {
    const words = parseQuery(request.q, typoSizesOf(this.file));
    const { page, hitsPerPage, skip } = pageWindow(request.offset, request.limit);
    const filters = filterExpressions(request);
    try {
      const response = await this.index.search(queryText(words), {
        filter: filters.length > 0 ? filters : undefined,
        sort: ['listed_at:desc', 'id:asc'],
        matchingStrategy: 'all',
        attributesToRetrieve: ['id'],
        page,
        hitsPerPage,
      });
      const ids = response.hits.slice(skip, skip + request.limit).map((hit) => hit.id);
      return { ids, total: response.totalHits };
    } catch (err) {
      // Before the first write creates it, the index simply has no listings.
      if (err instanceof MeilisearchApiError && err.cause?.code === 'index_not_found') return { ids: [], total: 0 };
      throw err;
    }
  }

  async upsert(docs: readonly SearchDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.ensureReady();
    await this.confirm('add or replace documents', this.index.addDocuments(docs.map(toMeili), { primaryKey: this.file.primaryKey }));
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.ensureReady();
    await this.confirm('delete documents', this.index.deleteDocuments([...ids]));
  }

  /**
   * Builds `<index>_tmp_<random>` with the settings and every document, swaps it with the live
   * index in one task (readers see the old content or the new, never a partial one), then
   * deletes the old content. On failure the temporary index is removed and the live one is
   * untouched.
   */
  async replaceAll(batches: AsyncIterable<readonly SearchDocument[]>): Promise<void> {
    await this.ensureReady();
    const tmpUid = `${this.uid}_tmp_${randomBytes(6).toString('hex')}`;
    const tmp = this.client.index<MeiliDocument>(tmpUid);
    try {
      await this.confirm(`create index ${tmpUid}`, this.client.createIndex(tmpUid, { primaryKey: this.file.primaryKey }));
      await this.confirm(`apply settings to ${tmpUid}`, tmp.updateSettings(this.settings()));
      let pending: MeiliDocument[] = [];
      for await (const batch of batches) {
        for (const doc of batch) pending.push(toMeili(doc));
        if (pending.length >= this.batchSize) {
          await this.confirm(`add documents to ${tmpUid}`, tmp.addDocuments(pending, { primaryKey: this.file.primaryKey }));
          pending = [];
        }
      }
      if (pending.length > 0) await this.confirm(`add documents to ${tmpUid}`, tmp.addDocuments(pending, { primaryKey: this.file.primaryKey }));
      await this.confirm(`swap ${this.uid} with ${tmpUid}`, this.client.swapIndexes([{ indexes: [this.uid, tmpUid], rename: false }]));
    } catch (err) {
      await this.client.deleteIndexIfExists(tmpUid).catch(() => undefined);
      throw err;
    }
    // After the swap the temporary uid holds the old content.
    await this.confirm(`delete the replaced index ${tmpUid}`, this.client.deleteIndex(tmpUid));
  }

  async close(): Promise<void> {
    // The client holds no connection of its own (fetch keeps none open between requests).
  }

  private settings(): Settings {
    return this.file.settings as Settings;
  }

  /** Creates the index when missing and applies the settings, once per process. */
  private ensureReady(): Promise<void> {
    this.ready ??= (async () => {
      await this.confirm(`create index ${this.uid}`, this.client.createIndex(this.uid, { primaryKey: this.file.primaryKey }), 'index_already_exists');
      await this.confirm(`apply settings to ${this.uid}`, this.index.updateSettings(this.settings()));
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Waits for the task and throws unless it succeeded (or failed with the `tolerated` error code). */
  private async confirm(what: string, enqueued: EnqueuedTaskPromise, tolerated?: string): Promise<void> {
    let task;
    try {
      task = await enqueued.waitTask({ timeout: this.taskTimeoutMs });
    } catch (err) {
      throw new SearchIndexWriteError(`Meilisearch could not ${what}: ${(err as Error).message}`, { cause: err });
    }
    if (task.status === 'succeeded') return;
    if (tolerated !== undefined && task.error?.code === tolerated) return;
    throw SearchIndexWriteError.fromTask(what, task);
  }
}
