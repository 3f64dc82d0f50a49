-- The write model: what makers and operators change. Reads never query this schema; the
-- projector turns it into the public projection (schema projection, migration 002).

CREATE SCHEMA IF NOT EXISTS catalog;

CREATE TABLE catalog.categories (
  slug        text PRIMARY KEY CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  noun        text NOT NULL CHECK (length(noun) BETWEEN 1 AND 100),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Labels and tags are created on first use; listings keep their slugs in order in arrays.
CREATE TABLE catalog.labels (
  slug        text PRIMARY KEY CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalog.tags (
  slug        text PRIMARY KEY CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalog.makers (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX makers_email_key ON catalog.makers (lower(email));

CREATE TYPE catalog.listing_status AS ENUM ('draft', 'pending', 'live', 'rejected', 'hidden');
CREATE TYPE catalog.listing_plan AS ENUM ('free', 'premium');
CREATE TYPE catalog.product_type AS ENUM ('software', 'digital_product');
CREATE TYPE catalog.pricing_model AS ENUM ('free', 'freemium', 'paid', 'open_source');

CREATE TABLE catalog.listings (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug              text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  name              text NOT NULL,
  punchline         text NOT NULL,
  description       text NOT NULL,
  website           text NOT NULL,
  logo              text,
  cover             text,
  category          text REFERENCES catalog.categories (slug) ON UPDATE CASCADE ON DELETE SET NULL,
  labels            text[] NOT NULL DEFAULT '{}',
  tags              text[] NOT NULL DEFAULT '{}',
  product_type      catalog.product_type,
  pricing_model     catalog.pricing_model,
  social            text CHECK (social IS NULL OR social !~ '^@'),
  featured          boolean NOT NULL DEFAULT false,
  status            catalog.listing_status NOT NULL DEFAULT 'draft',
  plan              catalog.listing_plan NOT NULL DEFAULT 'free',
  listed_at         timestamptz,
  -- premium profile: shown publicly only while the plan is premium
  highlights        text[] NOT NULL DEFAULT '{}',
  ideal_for         text[] NOT NULL DEFAULT '{}',
  faq               jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(faq) = 'array'),
  -- promo: all of code and discount, or none
  promo_code        text,
  promo_discount    text,
  promo_url         text,
  promo_expires_at  date,
  review_feedback   text,
  maker_id          uuid REFERENCES catalog.makers (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT promo_complete CHECK ((promo_code IS NULL) = (promo_discount IS NULL)),
  CONSTRAINT promo_parts CHECK (promo_code IS NOT NULL OR (promo_url IS NULL AND promo_expires_at IS NULL))
);
CREATE INDEX listings_status_idx ON catalog.listings (status);
CREATE INDEX listings_category_idx ON catalog.listings (category);
CREATE INDEX listings_maker_idx ON catalog.listings (maker_id);
CREATE INDEX listings_promo_expiry_idx ON catalog.listings (promo_expires_at) WHERE promo_expires_at IS NOT NULL;

-- The outbox: one row per change to what a listing (or a category) shows publicly, appended by
-- the triggers below in the same transaction as the change. Sequence values commit out of
-- order, so the projector reads only rows whose transaction is older than every running one
-- (txid < pg_snapshot_xmin(pg_current_snapshot())), ordered by (txid, seq).
CREATE TABLE catalog.outbox (
  seq            bigserial PRIMARY KEY,
  txid           xid8 NOT NULL DEFAULT pg_current_xact_id(),
  listing_id     uuid,
  category_slug  text,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (listing_id IS NOT NULL OR category_slug IS NOT NULL)
);
CREATE INDEX outbox_txid_seq_idx ON catalog.outbox (txid, seq);

CREATE FUNCTION catalog.listing_public_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    -- Only what the public Product shows (or whether it shows at all) reaches the outbox;
    -- review feedback, the owner and bookkeeping times do not.
    IF (OLD.slug, OLD.name, OLD.punchline, OLD.description, OLD.website, OLD.logo, OLD.cover,
        OLD.category, OLD.labels, OLD.tags, OLD.product_type, OLD.pricing_model, OLD.social,
        OLD.featured, OLD.status, OLD.plan, OLD.listed_at, OLD.highlights, OLD.ideal_for, OLD.faq,
        OLD.promo_code, OLD.promo_discount, OLD.promo_url, OLD.promo_expires_at)
       IS NOT DISTINCT FROM
       (NEW.slug, NEW.name, NEW.punchline, NEW.description, NEW.website, NEW.logo, NEW.cover,
        NEW.category, NEW.labels, NEW.tags, NEW.product_type, NEW.pricing_model, NEW.social,
        NEW.featured, NEW.status, NEW.plan, NEW.listed_at, NEW.highlights, NEW.ideal_for, NEW.faq,
        NEW.promo_code, NEW.promo_discount, NEW.promo_url, NEW.promo_expires_at) THEN
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO catalog.outbox (listing_id) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
  -- NOTIFY only wakes the projector; identical payloads in one transaction fold into one.
  PERFORM pg_notify('catalog_outbox', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER listings_outbox
AFTER INSERT OR UPDATE OR DELETE ON catalog.listings
FOR EACH ROW EXECUTE FUNCTION catalog.listing_public_changed();

CREATE FUNCTION catalog.category_public_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (OLD.slug, OLD.name, OLD.noun) IS NOT DISTINCT FROM (NEW.slug, NEW.name, NEW.noun) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO catalog.outbox (category_slug) VALUES (OLD.slug);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR OLD.slug <> NEW.slug) THEN
    INSERT INTO catalog.outbox (category_slug) VALUES (NEW.slug);
  ELSIF TG_OP = 'UPDATE' THEN
    NULL; -- same slug, already recorded above
  END IF;
  PERFORM pg_notify('catalog_outbox', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER categories_outbox
AFTER INSERT OR UPDATE OR DELETE ON catalog.categories
FOR EACH ROW EXECUTE FUNCTION catalog.category_public_changed();
