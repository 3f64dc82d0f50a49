-- Traces (docs/operating.md#traces): the W3C traceparent of the projector's batch that wrote the
-- current version, so each API process's span applying it joins that batch's trace. NULL when
-- the projector runs without tracing, or the version came from a promo lapse or a rebuild.
ALTER TABLE projection.state ADD COLUMN traceparent text;
