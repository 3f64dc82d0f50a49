-- A listing a reviewer sent back to its maker with feedback. On its own: a new enum value cannot
-- be used in the transaction that adds it.
ALTER TYPE catalog.listing_status ADD VALUE IF NOT EXISTS 'changes_requested' AFTER 'pending';
