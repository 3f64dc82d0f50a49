import { LRUCache } from 'lru-cache';
import { notFound } from '../contract/errors.ts';
import type { SearchQuery } from '../contract/schemas.ts';
import type { SearchHits, SearchIndex } from '../search/port.ts';
import { parseQuery } from '../search/words.ts';
import { etagOf } from './etag.ts';
import type { ListingStamp, MirroredProduct, ProjectionMirror } from './projection-mirror.ts';

/**
 * The read side used by REST and MCP alike: search, product by slug, categories. It reads only
 * the projection (through this process's mirror) and the search index. Answers are JSON text
 * assembled from the stored product documents, never re-serialized per request.
 */
export interface ReadBody {
  /** The JSON body as served. */
  readonly body: string;
  /** Strong ETag of body (quoted). */
  readonly etag: string;
  /**
   * The body in UTF-8, on answers served again and again (cached searches, the category list),
   * so they are encoded once rather than on every request.
   */
  readonly bytes?: Buffer;
}

/**
 * Answers carry strong ETags: two answers with one ETag have the same bytes, so what is derived
 * from an answer can be kept under its ETag.
 */
export interface ReadService {
  search(query: SearchQuery): Promise<ReadBody>;
  /** Throws a NOT_FOUND CatalogError when no live listing has the slug. */
  product(slug: string): ReadBody;
  /** The live listing's document and ETag, or undefined (no error built) when no live listing has the slug. */
  productBytes(slug: string): { readonly bytes: Buffer; readonly etag: string } | undefined;
  /** The search's answer when the response cache holds it (counted as a hit), else undefined. */
  cachedSearch(query: SearchQuery): ReadBody | undefined;
  /** Whether the listing page links the maker's site as a followed link (false for an unknown slug). */
  websiteFollowed(slug: string): boolean;
  categories(): ReadBody;
  /**
   * Every live listing's slug and listing time, newest first (the sitemap's rows), as the mirror
   * holds them at this version: no document is decoded.
   */
  listings(): Iterable<ListingStamp>;
  /**
   * Live slugs that start with `prefix`, in code-point order: the first `max` of them and how
   * many there are (MCP completions). The sorted slugs are built once per projection version.
   */
  slugsStartingWith(prefix: string, max: number): { values: string[]; total: number };
  /** Projection version the answers reflect. */
  readonly version: number;
  /** Response cache counters since start. */
  readonly cacheStats: { hits: number; misses: number };
}

export { etagOf };
;

/**
 * An answer kept as the bytes it is sent as; its text is decoded only when asked for (an MCP
 * result, a page), once.
 */
class BytesAnswer implements ReadBody {
  private text: string | undefined;

  constructor(
    readonly bytes: Buffer,
    readonly etag: string,
  ) {}

  get body(): string {
    return (this.text ??= this.bytes.toString('utf8'));
  }
}

function productAnswer(p: MirroredProduct): ReadBody {
  return new BytesAnswer(p.bytes, p.etag);
}

const SEARCH_HEAD = Buffer.from('{"products":[');
const COMMA = Buffer.from(',');

/** One cache key per distinct answer: parameters in a fixed order, q normalized as search does. */
function searchCacheKey(query: SearchQuery): string {
  const q = query.q === undefined ? '' : query.q.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  return `${q}\u0000${query.category ?? ''}\u0000${query.label ?? ''}\u0000${query.tag ?? ''}\u0000${query.page}\u0000${query.limit}`;
}

export interface ReadServiceOptions {
  mirror: ProjectionMirror;
  index: SearchIndex;
  cacheMaxEntries?: number;
  /** Upper bound on the bytes of cached bodies. */
  cacheMaxBytes?: number;
}

export function createReadService(opts: ReadServiceOptions): ReadService {
  const { mirror, index } = opts;
  const stats = { hits: 0, misses: 0 };
  const maxEntries = opts.cacheMaxEntries ?? 5000;
  const cache =
    maxEntries > 0
      ? new LRUCache<string, ReadBody>({
          max: maxEntries,
          maxSize: opts.cacheMaxBytes ?? 64 * 1024 * 1024,
          sizeCalculation: (v) => (v.bytes?.length ?? v.body.length) * 2 + 64,
        })
      : undefined;
  // Searches in flight, so a burst of identical misses computes once.
  const pending = new Map<string, Promise<ReadBody>>();
  let categories: ReadBody | undefined;
  let sortedSlugs: string[] | undefined;
  let slugsVersion = -1;
  let cachedAt = mirror.version;

  // A projection change makes every cached answer possibly stale: drop them all.
  mirror.onChange((version) => {
    cache?.clear();
    pending.clear();
    categories = undefined;
    sortedSlugs = undefined;
    cachedAt = version;
  });

  /** The first index of `sorted` whose value is not below `value`. */
  function lowerBound(sorted: readonly string[], value: string): number {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * A q with no letter or digit names no word (the engines would match it like no q at all,
   * the whole catalog): it matches nothing.
   */
  function searchIndex(query: SearchQuery): Promise<SearchHits> {
    if (query.q !== undefined && parseQuery(query.q).length === 0) return Promise.resolve({ ids: [], total: 0 });
    return index.search({
      ...(query.q !== undefined && { q: query.q }),
      ...(query.category !== undefined && { category: query.category }),
      ...(query.label !== undefined && { label: query.label }),
      ...(query.tag !== undefined && { tag: query.tag }),
      offset: (query.page - 1) * query.limit,
      limit: query.limit,
    });
  }

  async function computeSearch(query: SearchQuery): Promise<ReadBody> {
    const hits = await searchIndex(query);
    const parts: Buffer[] = [SEARCH_HEAD];
    // The page's tag derives from its products' tags and the envelope's numbers, which fix its
    // bytes: as strong as hashing the ~30 kB body, at a fraction of the cost per cache miss.
    let identity = `${hits.total}:${query.page}:${query.limit}`;
    let first = true;
    for (const id of hits.ids) {
      // An external index may briefly hold an id this process has already dropped.
      const p = mirror.productById(id);
      if (!p) continue;
      if (!first) parts.push(COMMA);
      first = false;
      parts.push(p.bytes);
      identity += p.etag;
    }
    parts.push(Buffer.from(`],"total":${hits.total},"page":${query.page},"limit":${query.limit}}`));
    return new BytesAnswer(Buffer.concat(parts), etagOf(identity));
  }

  return {
    // The version the caches were last reset to, not the mirror's: the mirror moves to a new
    // version before it tells its listeners, and an answer computed in between (from caches
    // still holding the old one) must not be kept under the new version by anyone.
    get version() {
      return cachedAt;
    },
    get cacheStats() {
      return { ...stats };
    },
    async search(query) {
      const key = searchCacheKey(query);
      const hit = cache?.get(key);
      if (hit) {
        stats.hits++;
        return hit;
      }
      stats.misses++;
      const inFlight = pending.get(key);
      if (inFlight) return inFlight;
      const version = cachedAt;
      const promise = computeSearch(query)
        .then((result) => {
          // Only cache an answer computed against the version still current.
          if (version !== cachedAt || !cache) return result;
          cache.set(key, result);
          return result;
        })
        .finally(() => pending.delete(key));
      pending.set(key, promise);
      return promise;
    },
    cachedSearch(query) {
      const hit = cache?.get(searchCacheKey(query));
      if (hit) stats.hits++;
      return hit;
    },
    productBytes(slug) {
      return mirror.productBySlug(slug);
    },
    product(slug) {
      const p = mirror.productBySlug(slug);
      if (!p) throw notFound(slug);
      return productAnswer(p);
    },
    websiteFollowed(slug) {
      return mirror.productBySlug(slug)?.websiteFollowed ?? false;
    },
    listings() {
      return mirror.listings();
    },
    slugsStartingWith(prefix, max) {
      if (!sortedSlugs || slugsVersion !== mirror.version) {
        slugsVersion = mirror.version;
        const slugs: string[] = [];
        for (const { slug } of mirror.listings()) slugs.push(slug);
        sortedSlugs = slugs.sort();
      }
      const from = lowerBound(sortedSlugs, prefix);
      // Every string that starts with the prefix sorts before the prefix followed by the highest code unit.
      const to = prefix === '' ? sortedSlugs.length : lowerBound(sortedSlugs, `${prefix}\uffff`);
      return { values: sortedSlugs.slice(from, Math.min(to, from + max)), total: to - from };
    },
    categories() {
      if (!categories) {
        const body = mirror.categoriesBody;
        categories = { body, etag: etagOf(body), bytes: Buffer.from(body) };
      }
      return categories;
    },
  };
}
