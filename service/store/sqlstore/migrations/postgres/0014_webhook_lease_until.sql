-- A claim's lease end gets its own column (PostgreSQL). Before, a claim
-- moved next_attempt_at to the lease's end: an indexed column, so every
-- claim was a non-HOT update that added an entry to each of the table's
-- five indexes for a row that was about to change again (finish), and the
-- dead entries slowed the next claims' index scans. Now a claim writes
-- only lease, lease_until and updated_at, none of them indexed, and the
-- free space fillfactor leaves lets PostgreSQL do it as a HOT update on
-- the same page. NULL: no lease, or one taken before this column (those
-- rows still have next_attempt_at at their lease's end).
ALTER TABLE webhook_events ADD COLUMN lease_until timestamptz;
ALTER TABLE webhook_events SET (fillfactor = 70);
