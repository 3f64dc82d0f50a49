-- The public projection: the only thing REST and MCP read. Written only by the projector.

CREATE SCHEMA IF NOT EXISTS projection;

-- One row per LIVE listing: the exact public Product as JSON text (serialized once, through
-- the contract schema), plus the fields search needs.
CREATE TABLE projection.products (
  id                uuid PRIMARY KEY,
  slug              text NOT NULL UNIQUE,
  doc               text NOT NULL,
  name              text NOT NULL,
  punchline         text NOT NULL,
  description_text  text NOT NULL,
  category          text,
  labels            text[] NOT NULL,
  tags              text[] NOT NULL,
  listed_at         timestamptz,
  -- the day after which the promo in doc lapses; the projector re-projects then
  promo_expires_at  date,
  -- projection version (see projection.state) of the batch that last wrote this row
  version           bigint NOT NULL
);
CREATE INDEX products_version_idx ON projection.products (version);
CREATE INDEX products_promo_expiry_idx ON projection.products (promo_expires_at) WHERE promo_expires_at IS NOT NULL;

-- Products that left the projection, so readers that follow versions can drop them.
CREATE TABLE projection.removed (
  id       uuid PRIMARY KEY,
  version  bigint NOT NULL
);
CREATE INDEX removed_version_idx ON projection.removed (version);

-- Every category with its live count, zero included; doc is the public Category as JSON text.
CREATE TABLE projection.category_counts (
  slug     text PRIMARY KEY,
  name     text NOT NULL,
  noun     text NOT NULL,
  count    integer NOT NULL CHECK (count >= 0),
  doc      text NOT NULL,
  version  bigint NOT NULL
);

-- One row. version advances with every projected batch; readers compare it with their own.
-- oldest_version: versions at or below it may have had their removals pruned, so a reader
-- older than it reloads everything.
CREATE TABLE projection.state (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version         bigint NOT NULL DEFAULT 0,
  oldest_version  bigint NOT NULL DEFAULT 0,
  site_url        text,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
INSERT INTO projection.state DEFAULT VALUES;

-- Outbox positions: 'projection' advances in the same transaction as the documents (exactly
-- once); 'search' advances only after the external search index confirmed the same changes.
CREATE TABLE projection.checkpoints (
  name        text PRIMARY KEY,
  txid        xid8 NOT NULL DEFAULT '0',
  seq         bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO projection.checkpoints (name) VALUES ('projection'), ('search');
