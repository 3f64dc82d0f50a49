-- Upkeep of the projection: when a removal happened (so old removals can be pruned, raising
-- projection.state.oldest_version), and category counts computed from projection.products.

ALTER TABLE projection.removed ADD COLUMN removed_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX removed_removed_at_idx ON projection.removed (removed_at);

CREATE INDEX products_category_idx ON projection.products (category);
