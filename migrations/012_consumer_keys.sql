-- Consumer keys: higher request budgets by arrangement with the operator (docs/keys.md).
-- A key is made, listed, changed, rotated and revoked by `catalog keys` and /admin/keys; API
-- processes hold every key in memory and reload it when keys_changed is notified.

-- One row per arrangement: its name, its budgets per minute, its last valid day, its revocation.
CREATE TABLE auth.consumer_keys (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name             text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9-]{1,64}$'),
  search_per_min   integer NOT NULL CHECK (search_per_min BETWEEN 1 AND 10000000),
  other_per_min    integer NOT NULL CHECK (other_per_min BETWEEN 1 AND 10000000),
  export_per_min   integer NOT NULL CHECK (export_per_min BETWEEN 1 AND 10000000),
  changes_per_min  integer NOT NULL CHECK (changes_per_min BETWEEN 1 AND 10000000),
  -- the last day (UTC) on which the key works; null: no expiry
  expires_on       date,
  revoked_at       timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- The secrets of a key, stored only as their SHA-256: the current one, and after a rotation the
-- previous ones until retires_at. `prefix` is the start of the key as shown in lists and logs.
CREATE TABLE auth.consumer_key_secrets (
  hash        bytea PRIMARY KEY CHECK (length(hash) = 32),
  key_id      uuid NOT NULL REFERENCES auth.consumer_keys (id) ON DELETE CASCADE,
  prefix      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  retires_at  timestamptz
);
CREATE INDEX consumer_key_secrets_key_idx ON auth.consumer_key_secrets (key_id, created_at DESC);

-- Requests answered per key, per UTC day, by family, and those refused (429). Kept 400 days.
CREATE TABLE auth.consumer_key_usage (
  key_id        uuid NOT NULL REFERENCES auth.consumer_keys (id) ON DELETE CASCADE,
  day           date NOT NULL,
  search        bigint NOT NULL DEFAULT 0,
  other         bigint NOT NULL DEFAULT 0,
  export        bigint NOT NULL DEFAULT 0,
  changes       bigint NOT NULL DEFAULT 0,
  refused       bigint NOT NULL DEFAULT 0,
  last_used_at  timestamptz NOT NULL,
  PRIMARY KEY (key_id, day)
);
CREATE INDEX consumer_key_usage_day_idx ON auth.consumer_key_usage (day);

-- Batches of counts already added to consumer_key_usage, so a batch handed over twice (a
-- process that died after writing it, before saying so) is added once. Kept a few days.
CREATE TABLE auth.consumer_key_usage_batches (
  batch       text PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT now()
);

-- A change counter API processes poll as a backstop to the notification, and the name of this
-- catalog's usage counts in a Redis that other catalogs may share (with the database's name).
CREATE TABLE auth.consumer_keys_state (
  only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version      bigint NOT NULL,
  usage_space  text NOT NULL DEFAULT md5(gen_random_uuid()::text)
);
INSERT INTO auth.consumer_keys_state (version) VALUES (0);

CREATE FUNCTION auth.consumer_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v bigint;
BEGIN
  UPDATE auth.consumer_keys_state SET version = version + 1 RETURNING version INTO v;
  PERFORM pg_notify('consumer_keys_changed', v::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER consumer_keys_changed AFTER INSERT OR UPDATE OR DELETE ON auth.consumer_keys
  FOR EACH STATEMENT EXECUTE FUNCTION auth.consumer_keys_changed();
CREATE TRIGGER consumer_key_secrets_changed AFTER INSERT OR UPDATE OR DELETE ON auth.consumer_key_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION auth.consumer_keys_changed();
