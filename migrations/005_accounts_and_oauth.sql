-- Maker accounts, web sign-in and the OAuth authorization server for MCP clients.
-- Every secret a browser or client holds (sign-in links, sessions, codes, tokens) is stored only
-- as its SHA-256 hash: a copy of this database lets nobody sign in or call the API.

ALTER TABLE catalog.makers
  ADD COLUMN is_admin        boolean NOT NULL DEFAULT false,
  ADD COLUMN last_sign_in_at timestamptz;

-- E-mailed sign-in links: single use, short-lived. The address need not have an account yet;
-- the account is made when the link is used.
CREATE TABLE catalog.sign_in_links (
  token_hash  bytea PRIMARY KEY,
  email       text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  -- a path on this site to continue to after signing in (validated when written)
  return_to   text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX sign_in_links_expires_idx ON catalog.sign_in_links (expires_at);

-- Web sessions of signed-in makers (cookie value hashed).
CREATE TABLE catalog.sessions (
  token_hash    bytea PRIMARY KEY,
  maker_id      uuid NOT NULL REFERENCES catalog.makers (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_maker_idx ON catalog.sessions (maker_id);
CREATE INDEX sessions_expires_idx ON catalog.sessions (expires_at);

CREATE SCHEMA IF NOT EXISTS auth;

-- The authorization server's own records (authorization codes, refresh tokens, its sessions and
-- interactions, grants, dynamically registered clients), one row each. id_key is the SHA-256 of
-- the record's id for every kind whose id is a secret, and the id itself for clients and grants.
CREATE TABLE auth.oauth_records (
  kind          text NOT NULL,
  id_key        text NOT NULL,
  payload       jsonb NOT NULL,
  grant_id      text,
  uid_key       text,
  expires_at    timestamptz,
  consumed_at   timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, id_key)
);
CREATE INDEX oauth_records_grant_idx ON auth.oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_uid_idx ON auth.oauth_records (kind, uid_key) WHERE uid_key IS NOT NULL;
CREATE INDEX oauth_records_expires_idx ON auth.oauth_records (expires_at) WHERE expires_at IS NOT NULL;

-- Connected apps: one row per grant a maker approved on the consent page. Disconnect sets
-- revoked_at; API processes refuse tokens of a revoked grant from the next call on.
CREATE TABLE auth.grants (
  grant_id      text PRIMARY KEY,
  maker_id      uuid NOT NULL REFERENCES catalog.makers (id) ON DELETE CASCADE,
  client_id     text NOT NULL,
  client_name   text NOT NULL,
  client_site   text,
  -- 'metadata_document' (client_id is an https URL) or 'registered' (dynamic registration)
  client_kind   text NOT NULL CHECK (client_kind IN ('metadata_document', 'registered')),
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX grants_maker_idx ON auth.grants (maker_id, created_at DESC);

-- A refresh answered a moment ago, sealed with a key derived from the refresh token that was
-- spent, so a client retrying the same refresh within seconds gets the same new pair. Without
-- the spent token the sealed answer is unreadable.
CREATE TABLE auth.refresh_replays (
  token_hash  bytea PRIMARY KEY,
  sealed      bytea NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- Keys the service makes for itself on first start and shares between its processes: the
-- token signing keys and the cookie keys.
CREATE TABLE auth.service_keys (
  name        text PRIMARY KEY,
  value       jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
