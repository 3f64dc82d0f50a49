import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../src/search/embedded/embedded-search-index.ts';
import type { SearchDocument } from '../../../src/search/port.ts';

const doc = (id: string, name: string, listedAt: number): SearchDocument => ({
  id,
  name,
  punchline: '',
  description_text: '',
  category: null,
  labels: [],
  tags: [],
  listed_at: listedAt,
});

describe('remembered word expansions', () => {
  it('a word added after a search is found by the same search again', async () => {
    const index = new EmbeddedSearchIndex();
    await index.upsert([doc('00000000-0000-4000-8000-000000000001', 'Alpine tracker', 1)]);
    expect((await index.search({ q: 'alpi', offset: 0, limit: 10 })).total).toBe(1);
    expect((await index.search({ q: 'trackre', offset: 0, limit: 10 })).total).toBe(1);
    await index.upsert([doc('00000000-0000-4000-8000-000000000002', 'Alpinist trackers', 2)]);
    expect((await index.search({ q: 'alpi', offset: 0, limit: 10 })).ids).toEqual([
      '00000000-0000-4000-8000-000000000002',
      '00000000-0000-4000-8000-000000000001',
    ]);
    expect((await index.search({ q: 'trackre', offset: 0, limit: 10 })).total).toBe(2);
  });
});
