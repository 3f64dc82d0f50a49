import type { Config } from '../config/config.ts';
import { EmbeddedSearchIndex } from './embedded/embedded-search-index.ts';
import { MeilisearchSearchIndex } from './meilisearch/meilisearch-search-index.ts';
import type { SearchIndex } from './port.ts';

/** Meilisearch when MEILI_URL is set (scale-out), else a new embedded engine for this process. */
export function createSearchIndex(config: Pick<Config, 'meili'>): SearchIndex {
  if (config.meili) return new MeilisearchSearchIndex({ url: config.meili.url, key: config.meili.key, index: config.meili.index });
  return new EmbeddedSearchIndex();
}

export type { SearchDocument, SearchHits, SearchIndex, SearchRequest } from './port.ts';
