import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector } from '../../../projector/projector.ts';
import { pruneOutbox } from '../../../projector/prune.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { insertListing, updateListing } from '../../helpers/write-model.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function outboxSeqs(): Promise<number[]> {
  const { rows } = await db.pool.query<{ seq: number }>('SELECT seq FROM catalog.outbox ORDER BY seq');
  return rows.map((r) => r.seq);
}

describe('outbox pruning', () => {
  it('deletes only rows both checkpoints passed and older than the retention', async () => {
    const id = await insertListing(db.pool, { slug: 'first-listing' });
    const projector = createProjector({ connectionString: db.url, siteUrl: 'https://directory.example', pollMs: 100 });
    await projector.start();
    await projector.catchUp();
    await projector.stop();
    // a change the projector has not seen yet
    await updateListing(db.pool, id, { name: 'Renamed' });
    const [projected, unprojected] = await outboxSeqs();
    expect(unprojected).toBeDefined();

    // young rows stay whatever the checkpoints say
    expect(await pruneOutbox(db.pool, 24)).toBe(0);

    await db.pool.query(`UPDATE catalog.outbox SET created_at = now() - interval '2 days'`);
    expect(await pruneOutbox(db.pool, 24)).toBe(1);
    expect(await outboxSeqs()).toEqual([unprojected]);
    expect(projected).toBeLessThan(unprojected!);
  });
});
