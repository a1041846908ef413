-- Just-in-time funded quotes (PostgreSQL). Same column and index as
-- migrations/sqlite/0011_realtime_funding.sql.
ALTER TABLE quotes ADD COLUMN funding_reference text COLLATE "C";
CREATE UNIQUE INDEX quotes_funding_reference ON quotes (funding_reference);
