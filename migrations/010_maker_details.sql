-- A payment's amount is counted in its currency's minor unit as ISO 4217 defines it (cents for
-- USD, yen for JPY, fils for KWD), not always in hundredths: the column says so.
ALTER TABLE catalog.payments RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE catalog.payments RENAME CONSTRAINT payments_amount_cents_check TO payments_amount_minor_check;
