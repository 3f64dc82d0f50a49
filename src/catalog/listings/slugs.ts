import type { PoolClient } from '../../db/pool.ts';
import { SLUG_MAX } from '../../contract/schemas.ts';

/** A slug from a listing's name: lowercase ASCII words joined by hyphens ("Pixel Forge!" → "pixel-forge"). */
export function slugFromName(name: string, fallback: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX - 8)
    .replace(/-+$/g, '');
  return base || fallback;
}

/**
 * The first free slug among base, base-2, base-3 … Taken inside the inserting transaction after
 * an advisory lock on the base, so two submissions of the same name never pick the same slug.
 */
export async function freeSlug(client: PoolClient, base: string): Promise<string> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`slug:${base}`]);
  const { rows } = await client.query<{ slug: string }>(`SELECT slug FROM catalog.listings WHERE slug = $1 OR slug LIKE $1 || '-%'`, [base]);
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
