-- Which external search index the 'search' checkpoint describes. A projector that finds a
-- different index (a first switch to Meilisearch, a new index name or server) rebuilds it
-- from the projection before following the outbox.
ALTER TABLE projection.checkpoints ADD COLUMN target text;
