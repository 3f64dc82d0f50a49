import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, type Projector, type ProjectorOptions } from '../../../projector/projector.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { deleteListing, insertCategory, insertListing, projectedDocs, recomputedDocs, updateListing } from '../../helpers/write-model.ts';

const SITE = 'https://directory.example';

let db: TestDatabase;
const running: Projector[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await insertCategory(db.pool, { slug: 'design', name: 'Design', noun: 'design tools' });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});
afterAll(async () => {
  await db.drop();
});

async function startProjector(opts: Partial<ProjectorOptions> = {}): Promise<Projector> {
  const p = createProjector({ connectionString: db.url, siteUrl: SITE, pollMs: 200, ...opts });
  running.push(p);
  await p.start();
  return p;
}

async function docOf(id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.pool.query<{ doc: string }>('SELECT doc FROM projection.products WHERE id = $1', [id]);
  return rows[0] ? (JSON.parse(rows[0].doc) as Record<string, unknown>) : undefined;
}

describe('projector', () => {
  it('stores the exact public Product of a live listing, serialized in the spec order', async () => {
    const id = await insertListing(db.pool, {
      slug: 'pixel-forge',
      name: 'Pixel Forge',
      punchline: 'Icons in seconds',
      description: '<p>Make <b>icons</b></p>',
      website: 'https://pixelforge.example',
      logo: 'https://cdn.example/logo.png',
      category: 'design',
      labels: ['new'],
      tags: ['icons', 'svg'],
      social: 'pixelforge',
      featured: true,
      plan: 'premium',
      listed_at: new Date('2025-03-04T05:06:07.089Z'),
      highlights: ['Exports SVG'],
      ideal_for: ['designers'],
      faq: [{ question: 'Free?', answer: 'Yes' }],
      promo_code: 'SAVE10',
      promo_discount: '10% off',
      promo_url: 'https://pixelforge.example/redeem',
      promo_expires_at: '2999-12-31',
    });
    const projector = await startProjector();
    await projector.catchUp();
    const { rows } = await db.pool.query<{ doc: string; description_text: string; promo_expires_at: string | null }>(
      `SELECT doc, description_text, to_char(promo_expires_at, 'YYYY-MM-DD') AS promo_expires_at FROM projection.products WHERE id = $1`,
      [id],
    );
    expect(rows[0]!.doc).toBe(
      JSON.stringify({
        id,
        slug: 'pixel-forge',
        name: 'Pixel Forge',
        punchline: 'Icons in seconds',
        description: '<p>Make <b>icons</b></p>',
        url: `${SITE}/products/pixel-forge`,
        website: 'https://pixelforge.example',
        logo: 'https://cdn.example/logo.png',
        cover: null,
        category: 'design',
        labels: ['new'],
        tags: ['icons', 'svg'],
        product_type: 'software',
        pricing_model: 'freemium',
        social: 'pixelforge',
        featured: true,
        listed_at: '2025-03-04T05:06:07.089Z',
        highlights: ['Exports SVG'],
        ideal_for: ['designers'],
        faq: [{ question: 'Free?', answer: 'Yes' }],
        promo: { code: 'SAVE10', discount: '10% off', url: 'https://pixelforge.example/redeem', expires_at: '2999-12-31' },
      }),
    );
    expect(rows[0]!.description_text).toBe('Make icons');
    expect(rows[0]!.promo_expires_at).toBe('2999-12-31');
    const cat = await db.pool.query<{ doc: string }>(`SELECT doc FROM projection.category_counts WHERE slug = 'design'`);
    expect(JSON.parse(cat.rows[0]!.doc)).toEqual({ slug: 'design', name: 'Design', noun: 'design tools', url: `${SITE}/categories/design`, count: 1 });
  });

  it('shows the premium profile only on premium listings', async () => {
    const free = await insertListing(db.pool, { plan: 'free', highlights: ['Fast'], ideal_for: ['teams'], faq: [{ question: 'Q', answer: 'A' }] });
    const projector = await startProjector();
    await projector.catchUp();
    expect(await docOf(free)).toMatchObject({ highlights: [], ideal_for: [], faq: [] });
    await updateListing(db.pool, free, { plan: 'premium' });
    await projector.catchUp();
    expect(await docOf(free)).toMatchObject({ highlights: ['Fast'], ideal_for: ['teams'], faq: [{ question: 'Q', answer: 'A' }] });
    await updateListing(db.pool, free, { plan: 'free' });
    await projector.catchUp();
    expect(await docOf(free)).toMatchObject({ highlights: [], ideal_for: [], faq: [] });
  });

  it('drops a listing that leaves live at the next batch and records the removal', async () => {
    const id = await insertListing(db.pool, { category: 'design' });
    const projector = await startProjector();
    await projector.catchUp();
    expect(await docOf(id)).toBeDefined();
    const before = await db.pool.query<{ count: number }>(`SELECT count FROM projection.category_counts WHERE slug = 'design'`);
    await updateListing(db.pool, id, { status: 'hidden' });
    await projector.catchUp();
    expect(await docOf(id)).toBeUndefined();
    const removed = await db.pool.query<{ version: number }>('SELECT version FROM projection.removed WHERE id = $1', [id]);
    const state = await db.pool.query<{ version: number }>('SELECT version FROM projection.state');
    expect(removed.rows[0]?.version).toBe(state.rows[0]!.version);
    const after = await db.pool.query<{ count: number }>(`SELECT count FROM projection.category_counts WHERE slug = 'design'`);
    expect(after.rows[0]!.count).toBe(before.rows[0]!.count - 1);
    // Back to live: in the projection again, no longer a removal.
    await updateListing(db.pool, id, { status: 'live' });
    await projector.catchUp();
    expect(await docOf(id)).toBeDefined();
    expect((await db.pool.query('SELECT 1 FROM projection.removed WHERE id = $1', [id])).rowCount).toBe(0);
  });

  it('announces each new version on projection_changed', async () => {
    const projector = await startProjector();
    await projector.catchUp();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    try {
      const payloads: string[] = [];
      listener.on('notification', (n) => {
        if (n.channel === 'projection_changed' && n.payload) payloads.push(n.payload);
      });
      await listener.query('LISTEN projection_changed');
      const id = await insertListing(db.pool);
      await projector.catchUp();
      const state = await db.pool.query<{ version: number }>('SELECT version FROM projection.state');
      const product = await db.pool.query<{ version: number }>('SELECT version FROM projection.products WHERE id = $1', [id]);
      expect(product.rows[0]!.version).toBe(state.rows[0]!.version);
      await expect.poll(() => payloads).toContain(String(state.rows[0]!.version));
    } finally {
      await listener.end();
    }
  });

  it('never skips a transaction that took an earlier outbox position but committed later', async () => {
    const projector = await startProjector();
    await projector.catchUp();
    const a = new pg.Client({ connectionString: db.url });
    const b = new pg.Client({ connectionString: db.url });
    await a.connect();
    await b.connect();
    try {
      await a.query('BEGIN');
      const idA = await insertListing(a, { name: 'Slow commit' });
      await b.query('BEGIN');
      const idB = await insertListing(b, { name: 'Fast commit' });
      await b.query('COMMIT');
      const seqs = await db.pool.query<{ listing_id: string; seq: number }>('SELECT listing_id, seq FROM catalog.outbox WHERE listing_id = ANY($1::uuid[])', [[idA, idB]]);
      expect(seqs.rows).toHaveLength(1); // A's row is not committed yet
      await projector.catchUp();
      // The projector waits behind A: B's change is committed but sorts after A's.
      expect(await docOf(idA)).toBeUndefined();
      await a.query('COMMIT');
      await projector.catchUp();
      expect(await docOf(idA)).toMatchObject({ name: 'Slow commit' });
      expect(await docOf(idB)).toMatchObject({ name: 'Fast commit' });
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('is not held back by a transaction open in another database of the server', async () => {
    const projector = await startProjector();
    const elsewhere = await createTestDatabase();
    const other = new pg.Client({ connectionString: elsewhere.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      const id = await insertListing(db.pool, { name: 'Not held back' });
      await projector.catchUp();
      expect(await docOf(id)).toMatchObject({ name: 'Not held back' });
      await other.query('COMMIT');
    } finally {
      await other.end();
      await elsewhere.drop();
    }
  });

  it('lets a lapsed promo leave the projection without any write', async () => {
    let clock = new Date('2030-01-10T23:59:00Z');
    const projector = await startProjector({ now: () => clock });
    const id = await insertListing(db.pool, { promo_code: 'LAST', promo_discount: '20% off', promo_expires_at: '2030-01-10' });
    await projector.catchUp();
    expect(await docOf(id)).toMatchObject({ promo: { code: 'LAST', discount: '20% off', url: null, expires_at: '2030-01-10' } });
    const outbox = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox');
    clock = new Date('2030-01-11T00:00:01Z');
    await projector.catchUp();
    expect(await docOf(id)).toMatchObject({ promo: null });
    const row = await db.pool.query('SELECT promo_expires_at FROM projection.products WHERE id = $1', [id]);
    expect(row.rows[0]!.promo_expires_at).toBeNull();
    expect((await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog.outbox')).rows[0]!.n).toBe(outbox.rows[0]!.n);
    // The other tests compare with documents built today.
    await deleteListing(db.pool, id);
    await projector.catchUp();
  });

  it('keeps slugs unique through renames projected out of order', async () => {
    // One outbox row per batch: the newcomer's row is projected before the rename it follows.
    const projector = await startProjector({ batchSize: 1 });
    const first = await insertListing(db.pool, { slug: 'swap-one' });
    const second = await insertListing(db.pool, { slug: 'swap-two' });
    await projector.catchUp();
    // Two listings swap slugs in one transaction.
    const c = await db.pool.connect();
    try {
      await c.query('BEGIN');
      await updateListing(c, first, { slug: 'swap-tmp' });
      await updateListing(c, second, { slug: 'swap-one' });
      await updateListing(c, first, { slug: 'swap-two' });
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    // A later transaction (higher txid) renames, an earlier one that commits after it takes the slug.
    const early = new pg.Client({ connectionString: db.url });
    await early.connect();
    try {
      const third = await insertListing(db.pool, { slug: 'taken-later' });
      await projector.catchUp();
      await early.query('BEGIN');
      await early.query('SELECT pg_current_xact_id()');
      await updateListing(db.pool, third, { slug: 'moved-away' });
      await insertListing(early, { slug: 'taken-later', name: 'Newcomer' });
      await early.query('COMMIT');
      await projector.catchUp();
    } finally {
      await early.end();
    }
    const today = new Date().toISOString().slice(0, 10);
    expect(await projectedDocs(db.pool)).toEqual(await recomputedDocs(db.pool, SITE, today));
    expect(await docOf(first)).toMatchObject({ slug: 'swap-two' });
  });

  it('leaves out a live listing that does not form a valid Product, and goes on', async () => {
    const errors: unknown[] = [];
    const log = { info: () => undefined, warn: () => undefined, error: (obj: unknown) => errors.push(obj) };
    const projector = await startProjector({ log });
    const bad = await insertListing(db.pool, { logo: 'not a url' });
    const good = await insertListing(db.pool);
    await projector.catchUp();
    expect(await docOf(bad)).toBeUndefined();
    expect(await docOf(good)).toBeDefined();
    expect(errors).toContainEqual(expect.objectContaining({ listingId: bad }));
    await updateListing(db.pool, bad, { logo: 'https://cdn.example/fixed.png' });
    await projector.catchUp();
    expect(await docOf(bad)).toMatchObject({ logo: 'https://cdn.example/fixed.png' });
  });

  it('rebuilds every url when SITE_URL changes', async () => {
    const id = await insertListing(db.pool, { slug: 'moving-site', category: 'design' });
    const first = await startProjector();
    await first.catchUp();
    await first.stop();
    running.splice(running.indexOf(first), 1);
    const other = 'https://other.example';
    const second = await startProjector({ siteUrl: other });
    await second.catchUp();
    expect(await docOf(id)).toMatchObject({ url: `${other}/products/moving-site` });
    const cat = await db.pool.query<{ doc: string }>(`SELECT doc FROM projection.category_counts WHERE slug = 'design'`);
    expect(JSON.parse(cat.rows[0]!.doc)).toMatchObject({ url: `${other}/categories/design` });
    const state = await db.pool.query<{ site_url: string }>('SELECT site_url FROM projection.state');
    expect(state.rows[0]!.site_url).toBe(other);
    await second.stop();
    running.splice(running.indexOf(second), 1);
    // Back to the site the other tests use.
    const third = await startProjector();
    await third.catchUp();
  });
});
