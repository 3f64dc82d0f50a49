-- The change log of the public catalog, behind GET /api/v1/changes and the export's cursor.
--
-- Every difference the projector makes to the live catalog (seen as slug → Product JSON, what
-- GET /products/{slug} answers) is one row, written by the projector in the same transaction
-- as the projection itself: an upsert with the Product JSON exactly as projection.products
-- stores it, or a delete. Positions come from projection.state.change_position, advanced
-- inside that transaction, so they are gapless; every writer of the projection holds
-- PROJECTION_WRITE_LOCK until it commits, so positions also commit in order: a snapshot that
-- sees a position sees every position before it.

ALTER TABLE projection.state
  -- the last position given to a change (0: none yet)
  ADD COLUMN change_position bigint NOT NULL DEFAULT 0,
  -- every position at or below this one may have been pruned; every one above it is kept
  ADD COLUMN changes_pruned_through bigint NOT NULL DEFAULT 0,
  -- names this log in its cursors, so a cursor from another database (or from before the
  -- database was recreated) is told apart from a position of this one
  ADD COLUMN change_log text;

UPDATE projection.state SET change_log = substr(md5(gen_random_uuid()::text), 1, 8);
ALTER TABLE projection.state ALTER COLUMN change_log SET NOT NULL;

CREATE TABLE projection.changes (
  position    bigint PRIMARY KEY,
  op          text NOT NULL CHECK (op IN ('upsert', 'delete')),
  slug        text NOT NULL,
  -- the Product as projection.products.doc held it when the change was made; NULL on a delete
  doc         text,
  -- clock_timestamp(), not now(): it grows with position (writers take turns under the lock),
  -- so "everything older than the retention" is a prefix of the log
  changed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((op = 'upsert') = (doc IS NOT NULL))
);
