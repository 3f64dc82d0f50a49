import type { Config } from '../config/config.ts';
import { EmbeddedSearchIndex } from './embedded/embedded-search-index.ts';
import type { SearchIndex } from './port.ts';

/**
 * Meilisearch when MEILI_URL is set (scale-out), else a new embedded engine for this process.
 * The Meilisearch client is loaded only when used.
 */
export async function createSearchIndex(config: Pick<Config, 'meili'>): Promise<SearchIndex> {
  if (!config.meili) return new EmbeddedSearchIndex();
  const { MeilisearchSearchIndex } = await import('./meilisearch/meilisearch-search-index.ts');
  return new MeilisearchSearchIndex({ url: config.meili.url, key: config.meili.key, index: config.meili.index });
}

export type { SearchDocument, SearchHits, SearchIndex, SearchRequest } from './port.ts';
