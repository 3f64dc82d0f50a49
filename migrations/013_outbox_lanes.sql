-- Two lanes through the outbox, so that a maker's edit never waits behind a bulk import.
--
-- A bulk transaction (`catalog import`) marks itself: it sets catalog.bulk to 'on' for the
-- transaction and holds BULK_WRITE_LOCK (src/db/locks.ts) shared until it ends, both before its
-- first write (src/catalog/import/bulk-transaction.ts). Every outbox row it writes is `bulk`
-- (this column's default reads the setting at insert time, so the triggers stay as they are).
--
-- The projector's interactive lane reads only rows that are not bulk, up to a horizon that
-- leaves out running transactions holding the lock: an import running for a minute holds back
-- no edit committed meanwhile. Its main lane reads every row in (txid, seq) order as before and
-- passes over the interactive rows the other lane already projected (projector/projector.ts).
ALTER TABLE catalog.outbox
  ADD COLUMN bulk boolean NOT NULL DEFAULT (current_setting('catalog.bulk', true) IS NOT DISTINCT FROM 'on');

CREATE INDEX outbox_interactive_idx ON catalog.outbox (txid, seq) WHERE NOT bulk;

-- When the projection's latest version was committed, and when the oldest write-model change it
-- carries was (its outbox row's created_at): API processes time each change they apply from
-- them (catalog_projection_delivery_seconds in /metrics). NULL for versions that carry no
-- write-model change (a promo lapse, a rebuild).
ALTER TABLE projection.state
  ADD COLUMN committed_at timestamptz,
  ADD COLUMN oldest_change_at timestamptz;
