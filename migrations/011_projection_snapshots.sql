-- Snapshots of the projection: every live product's JSON and the embedded search index at one
-- projection version, laid out as one binary image (src/read/snapshot.ts) that a process loads
-- in one read instead of rebuilding it row by row. Written by the leading projector; a
-- snapshot is usable once complete, and replaced as a whole by a newer one.
CREATE TABLE projection.snapshots (
  id          uuid PRIMARY KEY,
  version     bigint NOT NULL,
  format      integer NOT NULL,
  -- bytes of the image, and live listings in it
  size        bigint NOT NULL,
  listings    integer NOT NULL,
  -- whether it holds the embedded engine's index (not when the projector feeds Meilisearch)
  search      boolean NOT NULL,
  complete    boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX snapshots_latest_idx ON projection.snapshots (format, search, version) WHERE complete;

-- The image in parts (a value is limited to 1 GB), stored uncompressed: it is read whole and
-- mostly JSON text, which PostgreSQL's compression would only make slower to read.
CREATE TABLE projection.snapshot_parts (
  snapshot  uuid NOT NULL REFERENCES projection.snapshots (id) ON DELETE CASCADE,
  part      integer NOT NULL,
  bytes     bytea NOT NULL,
  PRIMARY KEY (snapshot, part)
);
ALTER TABLE projection.snapshot_parts ALTER COLUMN bytes SET STORAGE EXTERNAL;
