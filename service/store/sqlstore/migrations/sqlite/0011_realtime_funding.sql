-- Just-in-time funded quotes (SQLite): a quote with source REALTIME_FUNDING
-- carries the deposit reference (store.NewDepositReference) that the
-- incoming payment funding it quotes; NULL for a quote paid from an
-- internal account. Unique, so a deposit matches one quote.
ALTER TABLE quotes ADD COLUMN funding_reference TEXT;
CREATE UNIQUE INDEX quotes_funding_reference ON quotes (funding_reference);
