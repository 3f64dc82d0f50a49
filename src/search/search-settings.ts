import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { projectPath } from '../util/project-file.ts';
import type { TypoSizes } from './words.ts';

/**
 * The search configuration in search-config/meilisearch.json: the Meilisearch index settings,
 * sent as they are, from which the embedded engine takes what applies to it (the searchable
 * fields and the typo word sizes), so one file configures both adapters.
 */
const searchableField = z.enum(['name', 'punchline', 'description_text']);

const settingsSchema = z.looseObject({
  searchableAttributes: z.array(searchableField).min(1),
  filterableAttributes: z.array(z.string()),
  sortableAttributes: z.array(z.string()),
  rankingRules: z.array(z.string()).refine((rules) => rules[0] === 'sort', {
    error: 'must start with "sort": results are ordered by listing time, never by relevance',
  }),
  typoTolerance: z
    .looseObject({
      enabled: z.boolean().default(true),
      minWordSizeForTypos: z
        .object({ oneTypo: z.number().int().min(1).default(5), twoTypos: z.number().int().min(1).default(9) })
        .default({ oneTypo: 5, twoTypos: 9 }),
    })
    .default({ enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 } }),
  pagination: z.object({ maxTotalHits: z.number().int().min(25_000) }),
});

const fileSchema = z.strictObject({
  primaryKey: z.literal('id'),
  settings: settingsSchema,
});

export type SearchSettingsFile = z.infer<typeof fileSchema>;
type SearchableField = z.infer<typeof searchableField>;

const DEFAULT_SEARCH_CONFIG_PATH = projectPath('search-config/meilisearch.json');

class SearchConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SearchConfigError';
  }
}

export function loadSearchSettings(path: string | URL = DEFAULT_SEARCH_CONFIG_PATH): SearchSettingsFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SearchConfigError(`cannot read the search configuration ${String(path)}: ${(err as Error).message}`, { cause: err });
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new SearchConfigError(`invalid search configuration ${String(path)}:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** What the embedded engine takes from the file. */
export interface EmbeddedSearchOptions {
  searchableFields: readonly SearchableField[];
  /** Null when typo tolerance is disabled. */
  typoSizes: TypoSizes | null;
}

/** The typo word sizes the file sets, null when it disables typo tolerance. */
export function typoSizesOf(file: SearchSettingsFile): TypoSizes | null {
  const typo = file.settings.typoTolerance;
  return typo.enabled ? { ...typo.minWordSizeForTypos } : null;
}

export function embeddedOptions(file: SearchSettingsFile): EmbeddedSearchOptions {
  return { searchableFields: file.settings.searchableAttributes, typoSizes: typoSizesOf(file) };
}
