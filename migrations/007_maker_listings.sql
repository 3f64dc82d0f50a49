-- The makers' side of listings: submissions, the automatic check, review, badges, drafts with
-- claim links, and payments for the premium plan.

ALTER TABLE catalog.listings
  -- the site as duplicate detection sees it (src/sites/website-identity.ts); filled for existing
  -- listings when a process starts (catalog/website-keys.ts)
  ADD COLUMN website_key          text,
  -- what the maker wrote (Markdown or plain text); description holds it as sanitized HTML
  ADD COLUMN description_source   text,
  -- why a hidden listing is hidden: 'admin' (until an admin restores it) or 'badge_missing'
  ADD COLUMN hidden_reason        text CHECK (hidden_reason IN ('admin', 'badge_missing')),
  -- the directory badge on the maker's site: 'verified' once Verify found it
  ADD COLUMN badge_status         text NOT NULL DEFAULT 'none' CHECK (badge_status IN ('none', 'verified')),
  ADD COLUMN badge_verified_at    timestamptz,
  ADD COLUMN badge_checked_at     timestamptz,
  -- scheduled re-checks in a row that found the verified badge missing
  ADD COLUMN badge_misses         integer NOT NULL DEFAULT 0 CHECK (badge_misses >= 0),
  ADD COLUMN badge_next_check_at  timestamptz,
  -- what the automatic check found: [{code, message}], and the site as it was inspected
  ADD COLUMN check_reasons        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(check_reasons) = 'array'),
  ADD COLUMN site_snapshot        jsonb,
  -- when the listing last entered the review queue (the queue is oldest first)
  ADD COLUMN review_requested_at  timestamptz;

CREATE INDEX listings_website_key_idx ON catalog.listings (website_key);
CREATE INDEX listings_maker_created_idx ON catalog.listings (maker_id, created_at DESC);
CREATE INDEX listings_review_queue_idx ON catalog.listings (review_requested_at) WHERE status = 'pending';
CREATE INDEX listings_badge_due_idx ON catalog.listings (badge_next_check_at) WHERE badge_status = 'verified';

-- The link to the maker's site is followed (no rel=nofollow) for premium listings and for free
-- listings whose badge was verified: part of what the listing page shows, so it is projected.
CREATE OR REPLACE FUNCTION catalog.listing_public_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    -- Only what the public Product shows (or whether it shows at all, or how its page links the
    -- maker's site) reaches the outbox; review feedback, the owner and bookkeeping do not.
    IF (OLD.slug, OLD.name, OLD.punchline, OLD.description, OLD.website, OLD.logo, OLD.cover,
        OLD.category, OLD.labels, OLD.tags, OLD.product_type, OLD.pricing_model, OLD.social,
        OLD.featured, OLD.status, OLD.plan, OLD.listed_at, OLD.highlights, OLD.ideal_for, OLD.faq,
        OLD.promo_code, OLD.promo_discount, OLD.promo_url, OLD.promo_expires_at, OLD.badge_status)
       IS NOT DISTINCT FROM
       (NEW.slug, NEW.name, NEW.punchline, NEW.description, NEW.website, NEW.logo, NEW.cover,
        NEW.category, NEW.labels, NEW.tags, NEW.product_type, NEW.pricing_model, NEW.social,
        NEW.featured, NEW.status, NEW.plan, NEW.listed_at, NEW.highlights, NEW.ideal_for, NEW.faq,
        NEW.promo_code, NEW.promo_discount, NEW.promo_url, NEW.promo_expires_at, NEW.badge_status) THEN
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO catalog.outbox (listing_id) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
  PERFORM pg_notify('catalog_outbox', '');
  RETURN NULL;
END;
$$;

ALTER TABLE projection.products ADD COLUMN website_followed boolean NOT NULL DEFAULT false;

-- Private drafts: saved by submit_product without sign-in or without listings:write, or for a
-- site offering no usable image. Nothing is public; the maker finishes it through the claim link.
CREATE TABLE catalog.drafts (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  claim_token_hash  bytea NOT NULL UNIQUE,
  website           text NOT NULL,
  website_key       text NOT NULL,
  -- the submitted fields, as given (validated): name, punchline, description, category, …
  fields            jsonb NOT NULL CHECK (jsonb_typeof(fields) = 'object'),
  -- why a draft and not a submission: 'signed_out', 'no_write_scope' or 'no_usable_image'
  reason            text NOT NULL CHECK (reason IN ('signed_out', 'no_write_scope', 'no_usable_image')),
  maker_id          uuid REFERENCES catalog.makers (id) ON DELETE SET NULL,
  client_ip         text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  claimed_at        timestamptz,
  claimed_by        uuid REFERENCES catalog.makers (id) ON DELETE SET NULL,
  listing_id        uuid REFERENCES catalog.listings (id) ON DELETE SET NULL
);
CREATE INDEX drafts_ip_created_idx ON catalog.drafts (client_ip, created_at);
CREATE INDEX drafts_created_idx ON catalog.drafts (created_at);

-- Every review decision and badge outcome that changed a listing's state, for the admin's
-- record and the maker's feedback.
CREATE TABLE catalog.review_decisions (
  id           bigserial PRIMARY KEY,
  listing_id   uuid NOT NULL REFERENCES catalog.listings (id) ON DELETE CASCADE,
  -- the admin who decided; null for the service itself (the badge re-check)
  decided_by   uuid REFERENCES catalog.makers (id) ON DELETE SET NULL,
  action       text NOT NULL CHECK (action IN ('approve', 'reject', 'request_changes', 'hide', 'restore', 'feature', 'unfeature', 'badge_hide', 'badge_restore')),
  from_status  catalog.listing_status NOT NULL,
  to_status    catalog.listing_status NOT NULL,
  feedback     text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX review_decisions_listing_idx ON catalog.review_decisions (listing_id, created_at DESC);

-- Payments for the premium plan. Nothing is charged here: the maker pays in the browser at the
-- payment provider; a confirmed payment moves the listing to the premium plan.
CREATE TABLE catalog.payments (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  listing_id    uuid NOT NULL REFERENCES catalog.listings (id) ON DELETE CASCADE,
  maker_id      uuid REFERENCES catalog.makers (id) ON DELETE SET NULL,
  provider      text NOT NULL CHECK (provider IN ('stripe', 'builtin')),
  -- the provider's id for the checkout (a Stripe Checkout Session id), once one is opened
  provider_ref  text UNIQUE,
  amount_cents  integer NOT NULL CHECK (amount_cents > 0),
  currency      text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'cancelled')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  paid_at       timestamptz
);
CREATE INDEX payments_listing_idx ON catalog.payments (listing_id);

-- Provider events applied, so a retried webhook is applied once.
CREATE TABLE catalog.payment_events (
  provider     text NOT NULL,
  event_id     text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);
