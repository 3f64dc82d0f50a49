import type { Queryable } from './listing-source.ts';

/**
 * The change log of the public catalog (projection.changes, migration 009): what a consumer of
 * GET /api/v1/changes applies to a copy of the catalog, keyed by slug, to keep it equal to what
 * GET /products/{slug} answers.
 *
 * Only the projection's writers call these, inside their transaction, which holds
 * PROJECTION_WRITE_LOCK until it commits. That lock is what makes positions safe to follow:
 * positions are taken from projection.state.change_position in the same transaction, so they
 * are gapless (a rolled-back batch gives its positions back), and a batch can only take
 * positions after the previous batch committed and released the lock, so they commit in
 * order. A reader's snapshot that sees position p therefore sees every position before p.
 */
export interface CatalogChange {
  op: 'upsert' | 'delete';
  slug: string;
  /** The Product JSON on an upsert; null on a delete. */
  doc: string | null;
}

export interface PublicEntry {
  slug: string;
  doc: string;
}

/**
 * The differences between two states of part of the catalog, seen as slug → Product JSON, the
 * way a client keeps its copy: a slug that is gone is a delete, a slug whose document is new or
 * different is an upsert, an unchanged document is nothing. A listing whose slug changed is
 * thus a delete of the old slug and an upsert of the new one, and two listings swapping slugs
 * are two upserts. Deletes come first, then upserts, each in slug order: every slug appears at
 * most once, so any order would do, and this one is deterministic.
 *
 * `before` and `after` must cover the same slugs of the catalog (every slug either side could
 * have touched); slugs appear at most once on each side.
 */
export function catalogDifferences(before: readonly PublicEntry[], after: readonly PublicEntry[]): CatalogChange[] {
  const was = new Map<string, string>();
  for (const e of before) was.set(e.slug, e.doc);
  const now = new Map<string, string>();
  for (const e of after) now.set(e.slug, e.doc);
  const deletes: CatalogChange[] = [];
  const upserts: CatalogChange[] = [];
  for (const slug of was.keys()) if (!now.has(slug)) deletes.push({ op: 'delete', slug, doc: null });
  for (const [slug, doc] of now) if (was.get(slug) !== doc) upserts.push({ op: 'upsert', slug, doc });
  const bySlug = (a: CatalogChange, b: CatalogChange) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
  return [...deletes.sort(bySlug), ...upserts.sort(bySlug)];
}

/**
 * Appends changes to the log at the next positions. Returns the log's new head. An upsert's
 * document is taken from projection.products, where this transaction has just written it (the
 * change says what the slug now is): sent again, every document would cross the connection
 * twice.
 */
export async function recordChanges(db: Queryable, changes: readonly CatalogChange[]): Promise<number | undefined> {
  if (changes.length === 0) return undefined;
  const { rows } = await db.query<{ head: number }>(
    `WITH head AS (
       UPDATE projection.state SET change_position = change_position + $3 RETURNING change_position
     ), added AS (
       INSERT INTO projection.changes (position, op, slug, doc)
       SELECT head.change_position - $3 + c.ord, c.op, c.slug, p.doc
         FROM head CROSS JOIN unnest($1::text[], $2::text[]) WITH ORDINALITY AS c(op, slug, ord)
         LEFT JOIN projection.products p ON c.op = 'upsert' AND p.slug = c.slug
     )
     SELECT change_position AS head FROM head`,
    [changes.map((c) => c.op), changes.map((c) => c.slug), changes.length],
  );
  return rows[0]?.head;
}

/**
 * For a rebuild: appends the differences between `beforeTable` (a table of the rebuild's own
 * holding the projection's slugs and sha256 of their documents before it started) and the
 * projection as it now stands. Only rows the rebuild wrote (stamped with `version`) can differ
 * from before; rows it left alone kept their document. Same order as catalogDifferences.
 * Returns the number of changes recorded.
 */
export async function recordRebuildChanges(db: Queryable, beforeTable: string, version: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH diff AS (
       SELECT 0 AS kind, 'delete' AS op, b.slug, NULL::text AS doc
         FROM ${beforeTable} b
        WHERE NOT EXISTS (SELECT 1 FROM projection.products p WHERE p.slug = b.slug)
       UNION ALL
       SELECT 1, 'upsert', p.slug, p.doc
         FROM projection.products p LEFT JOIN ${beforeTable} b ON b.slug = p.slug
        WHERE p.version = $1 AND (b.slug IS NULL OR b.doc_sha256 <> sha256(convert_to(p.doc, 'UTF8')))
     ), numbered AS (
       SELECT op, slug, doc, row_number() OVER (ORDER BY kind, slug COLLATE "C") AS ord FROM diff
     ), head AS (
       UPDATE projection.state SET change_position = change_position + (SELECT count(*) FROM numbered)
       RETURNING change_position - (SELECT count(*) FROM numbered) AS base
     ), added AS (
       INSERT INTO projection.changes (position, op, slug, doc)
       SELECT head.base + n.ord, n.op, n.slug, n.doc FROM head, numbered n
     )
     SELECT count(*)::int AS n FROM numbered`,
    [version],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Forgets changes older than `olderThanHours`, oldest first, at most `limit` per call so the
 * transaction stays short, and raises projection.state.changes_pruned_through to the last
 * position forgotten: the feed answers a cursor below it with CURSOR_EXPIRED, and serves any
 * other in full. Since changed_at grows with position, what is older than the retention is a
 * prefix of the log. Runs inside a transaction holding PROJECTION_WRITE_LOCK. Returns the
 * number of changes pruned.
 */
export async function pruneChanges(db: Queryable, olderThanHours: number, limit = 10_000): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH bound AS (
       SELECT LEAST(
                s.changes_pruned_through + $2,
                COALESCE((SELECT c.position - 1 FROM projection.changes c
                           WHERE c.position > s.changes_pruned_through
                             AND c.changed_at >= now() - make_interval(hours => $1)
                           ORDER BY c.position LIMIT 1),
                         s.change_position)) AS through
         FROM projection.state s
     ), pruned AS (
       DELETE FROM projection.changes c USING bound WHERE c.position <= bound.through RETURNING 1
     ), raised AS (
       UPDATE projection.state s SET changes_pruned_through = bound.through
         FROM bound WHERE bound.through > s.changes_pruned_through
     )
     SELECT count(*)::int AS n FROM pruned`,
    [olderThanHours, limit],
  );
  return rows[0]?.n ?? 0;
}
