import { randomBytes } from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../src/search/embedded/embedded-search-index.ts';
import { MeilisearchSearchIndex } from '../../../src/search/meilisearch/meilisearch-search-index.ts';
import { searchIndexContract } from '../../helpers/search-contract.ts';

searchIndexContract('embedded adapter', async () => new EmbeddedSearchIndex());

const MEILI_IMAGE = process.env.MEILI_TEST_IMAGE ?? 'getmeili/meilisearch:v1.20';

/** Meilisearch from MEILI_URL, else from a container when a Docker engine answers, else none. */
async function meilisearchAvailable(): Promise<'url' | 'container' | undefined> {
  if (process.env.MEILI_URL) return 'url';
  try {
    await getContainerRuntimeClient();
    return 'container';
  } catch {
    return undefined;
  }
}

const source = await meilisearchAvailable();

if (source === undefined) {
  // One visible line in every run that leaves Meilisearch out, so nobody mistakes it for covered.
  process.stderr.write('SKIPPED: Meilisearch adapter tests (no MEILI_URL and no Docker engine here)\n');
  describe.skip('meilisearch adapter (set MEILI_URL or run a Docker engine to include it)', () => {
    it('runs the search contract against Meilisearch', () => undefined);
  });
} else {
  const target = { url: process.env.MEILI_URL ?? '', key: process.env.MEILI_KEY };
  const uids: string[] = [];
  let container: StartedTestContainer | undefined;

  beforeAll(async () => {
    if (source !== 'container') return;
    const key = randomBytes(16).toString('hex');
    container = await new GenericContainer(MEILI_IMAGE)
      .withEnvironment({ MEILI_MASTER_KEY: key, MEILI_NO_ANALYTICS: 'true', MEILI_ENV: 'development' })
      .withExposedPorts(7700)
      .withWaitStrategy(Wait.forHttp('/health', 7700))
      .start();
    target.url = `http://${container.getHost()}:${container.getMappedPort(7700)}`;
    target.key = key;
  }, 120_000);

  afterAll(async () => {
    if (container) {
      await container.stop();
      return;
    }
    const client = new Meilisearch({ host: target.url, apiKey: target.key });
    for (const uid of uids) await client.deleteIndexIfExists(uid).catch(() => undefined);
  });

  searchIndexContract('meilisearch adapter', async () => {
    const uid = `contract_${randomBytes(6).toString('hex')}`;
    uids.push(uid);
    return new MeilisearchSearchIndex({ url: target.url, key: target.key, index: uid });
  });
}
