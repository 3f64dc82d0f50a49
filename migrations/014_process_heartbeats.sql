-- What operators see of a cluster's processes (`catalog status`): every `catalog serve`, `api` and
-- `projector` process keeps one row here, written every 10 s by the process itself, and at once
-- when its leadership changes (src/ops/heartbeat.ts), and deleted when it stops; rows not written for 10 minutes (a process
-- that died without stopping) are pruned by the others. Nothing in the service reads it: it
-- only says who is there.
CREATE SCHEMA IF NOT EXISTS ops;

CREATE TABLE ops.processes (
  -- a fresh id per process start
  id                  uuid PRIMARY KEY,
  command             text NOT NULL CHECK (command IN ('serve', 'api', 'projector')),
  host                text NOT NULL,
  pid                 integer NOT NULL,
  -- the service version it runs (package.json)
  service_version     text NOT NULL,
  -- where it answers (serve, api); NULL for a projector
  url                 text,
  -- whether its projector leads (serve, projector); NULL when it runs none (api)
  leads               boolean,
  -- while it leads, the backend pid of the session holding the leader's lock (pg_locks.pid)
  leader_session_pid  integer,
  -- the projection version its mirror serves, and when the mirror last found that version
  -- current in the database (serve, api)
  projection_version  bigint,
  mirror_checked_at   timestamptz,
  started_at          timestamptz NOT NULL,
  seen_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processes_seen_at_idx ON ops.processes (seen_at);
