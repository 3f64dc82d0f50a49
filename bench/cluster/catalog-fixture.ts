import { createProjector } from '../../projector/projector.ts';
import { demoCatalogLines } from '../../src/demo/demo-data.ts';
import { importCatalog } from '../../src/catalog/import/import-catalog.ts';
import { formatLineError } from '../../src/catalog/listings/listing-input.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import type { MakerSites } from './maker-sites.ts';

/**
 * The catalog a cluster run starts from: a demo catalog, and what the scheduled jobs will find
 * once the cluster runs, so that a run can count what each job did:
 * - badges due for their daily re-check on sites the run serves (each must be fetched once);
 * - promos that lapsed since the projection was built, yesterday (each projected again once);
 * - projected outbox rows older than a day (each pruned once);
 * - expired web sessions (removed by one account upkeep run).
 */
interface JobFixtures {
  readonly badgeHosts: readonly string[];
  readonly lapsedPromos: number;
  readonly oldOutboxRows: number;
  readonly expiredSessions: number;
}

export interface PreparedCatalog {
  readonly categories: readonly string[];
  readonly jobs: JobFixtures;
}

const BADGES = 3;
const PROMOS = 2;
const SESSIONS = 3;

export async function prepareCatalog(databaseUrl: string, opts: { publicUrl: string; sites: MakerSites; listings: number }): Promise<PreparedCatalog> {
  await migrate(databaseUrl);
  const pool = createPool(databaseUrl, { max: 2, applicationName: 'cluster run setup' });
  try {
    const imported = await importCatalog(pool, demoCatalogLines({ count: opts.listings, seed: 7 }));
    if (imported.errors.length > 0) throw new Error(`the demo catalog did not import: ${formatLineError(imported.errors[0]!)}`);

    const { rows: badged } = await pool.query<{ id: string; slug: string }>(
      `SELECT id, slug FROM catalog.listings WHERE status = 'live' AND plan = 'free' ORDER BY slug LIMIT ${BADGES}`,
    );
    const badgeHosts: string[] = [];
    for (const [i, listing] of badged.entries()) {
      const host = `badge-${i + 1}.cluster.example`;
      badgeHosts.push(host);
      opts.sites.badges.set(host, `${opts.publicUrl}/products/${listing.slug}`);
      await pool.query(
        `UPDATE catalog.listings SET website = $2, badge_status = 'verified', badge_verified_at = now() - interval '2 days',
                badge_checked_at = now() - interval '25 hours', badge_next_check_at = now() - interval '1 hour' WHERE id = $1`,
        [listing.id, opts.sites.url(host)],
      );
    }
    const yesterday = new Date(Date.now() - 86_400_000);
    await pool.query(
      `UPDATE catalog.listings SET promo_code = 'CLUSTER', promo_discount = '10% off', promo_expires_at = $1::date
        WHERE id IN (SELECT id FROM catalog.listings WHERE status = 'live' AND promo_code IS NULL ORDER BY slug DESC LIMIT ${PROMOS})`,
      [yesterday.toISOString().slice(0, 10)],
    );
    const { rows: makers } = await pool.query<{ id: string }>(`INSERT INTO catalog.makers (email) VALUES ('expired-sessions@cluster.example') RETURNING id`);
    for (let i = 0; i < SESSIONS; i++) {
      await pool.query(`INSERT INTO catalog.sessions (token_hash, maker_id, expires_at) VALUES (decode(md5(random()::text || clock_timestamp()::text), 'hex'), $1, now() - interval '1 hour')`, [makers[0]!.id]);
    }

    // The projection as a projector left it yesterday: the promos were still shown.
    const projector = createProjector({ connectionString: databaseUrl, siteUrl: opts.publicUrl, now: () => yesterday });
    await projector.start();
    try {
      await projector.catchUp();
    } finally {
      await projector.stop();
    }
    const { rowCount: oldOutboxRows } = await pool.query(`UPDATE catalog.outbox SET created_at = now() - interval '2 days'`);
    const { rows: categories } = await pool.query<{ slug: string }>('SELECT slug FROM catalog.categories ORDER BY slug');
    return {
      categories: categories.map((c) => c.slug),
      jobs: { badgeHosts, lapsedPromos: PROMOS, oldOutboxRows: oldOutboxRows ?? 0, expiredSessions: SESSIONS },
    };
  } finally {
    await pool.end();
  }
}
