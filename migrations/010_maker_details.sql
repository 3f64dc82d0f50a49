-- A payment's amount is counted in its currency's minor unit as ISO 4217 defines it (cents for
-- USD, yen for JPY, fils for KWD), not always in hundredths: the column says so.
ALTER TABLE catalog.payments RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE catalog.payments RENAME CONSTRAINT payments_amount_cents_check TO payments_amount_minor_check;

-- A maker may change a listing's website. When the change waits for a reviewer, the site the
-- listing had before stays reserved to it (its identity counts as the listing's in every
-- duplicate check) until a reviewer accepts the change by approving the listing; an accepted
-- change leaves these empty (src/catalog/listing-rules.ts, decideWebsiteChange).
ALTER TABLE catalog.listings
  ADD COLUMN previous_website      text,
  ADD COLUMN previous_website_key  text,
  ADD CONSTRAINT listings_previous_website_both CHECK ((previous_website IS NULL) = (previous_website_key IS NULL));
CREATE INDEX listings_previous_website_key_idx ON catalog.listings (previous_website_key) WHERE previous_website_key IS NOT NULL;
