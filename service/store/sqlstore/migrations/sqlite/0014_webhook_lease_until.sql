-- A claim's lease end gets its own column (SQLite). Before, a claim moved
-- next_attempt_at to the lease's end, which rewrote the due index entry of
-- every event twice on its way out (claim, then finish); now a claim
-- writes only lease, lease_until and updated_at, none of them indexed.
-- NULL: no lease, or one taken before this column (those rows still have
-- next_attempt_at at their lease's end, which keeps them from being due).
ALTER TABLE webhook_events ADD COLUMN lease_until INTEGER;
