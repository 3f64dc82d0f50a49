import type { Pool } from '../../db/pool.ts';

/**
 * The categories a maker may put a listing in: every category of the write model, empty ones
 * included (the public list counts live listings; a new listing may be the first of its kind).
 */
export interface CategoryChoice {
  readonly slug: string;
  readonly name: string;
}

export async function listCategoryChoices(pool: Pool): Promise<CategoryChoice[]> {
  const { rows } = await pool.query<CategoryChoice>('SELECT slug, name FROM catalog.categories ORDER BY lower(name), slug');
  return rows;
}
