-- An event's last delivery attempt lives in its own row (PostgreSQL); the
-- webhook_attempts table keeps the attempts before it. Nearly every event
-- is delivered at its first attempt, which then writes no attempts row:
-- one insert less per event, and with it the foreign-key check's share
-- lock on the event's row. An attempt moves to webhook_attempts when the
-- next one is recorded.
-- last_status and last_error (0005) are the last attempt's answer;
-- attempts is its number. NULL last_attempt_at: no attempt yet, or the
-- event's attempts were all recorded in webhook_attempts before this
-- migration.
ALTER TABLE webhook_events ADD COLUMN last_attempt_at timestamptz;
ALTER TABLE webhook_events ADD COLUMN last_url text NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN last_duration_us bigint NOT NULL DEFAULT 0;

-- The list of deliveries by status needed an index on (status, id), one
-- more entry written by every event and rewritten when it is delivered.
-- Pending events are few and have their own partial indexes, delivered
-- ones are nearly all of the table (newest first is the primary key read
-- backwards), and only failed ones are few among many: they keep an index.
DROP INDEX webhook_events_status;
CREATE INDEX webhook_events_failed ON webhook_events (id) WHERE status = 'FAILED';
