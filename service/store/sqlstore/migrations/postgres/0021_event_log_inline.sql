-- The event log's rows stay in the table's own pages. A transaction's
-- row (its events' snapshots, 1–3 kB for a payment) passes PostgreSQL's
-- default TOAST threshold of about 2 kB, so each would be compressed with
-- pglz and, if still long, written to the TOAST table and its index: work
-- on the API's hot path for a row read once, by the catalogue, and then
-- deleted. With the target at its maximum only rows longer than a page
-- would be TOASTed. (BenchmarkOutboxCost/postgres, events on against
-- paused: 0.96× before, 1.0× after.) SQLite has no TOAST, so no 0021.
ALTER TABLE event_log SET (toast_tuple_target = 8160);
