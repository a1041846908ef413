-- An event's last delivery attempt lives in its own row (PostgreSQL); the
-- webhook_attempts table keeps the attempts before it. Nearly every event
-- is delivered at its first attempt, which then writes no attempts row:
-- one insert less per event, and with it the foreign-key check's share
-- lock on the event's row. An attempt moves to webhook_attempts when the
-- next one is recorded.
--
-- The row's attempt has columns of its own, as a webhook_attempts row does
-- (last_status and last_error of 0005 stay the event's): last_attempt is
-- its number, which is not always attempts. A binary of before this
-- migration, still running during a rolling upgrade, records its attempts
-- in webhook_attempts only and counts attempts up, leaving the row's
-- attempt as it was, to be moved with its own number and answer by the
-- next finish of this binary. 0 (last_attempt_at NULL): no attempt kept in
-- the row (none yet, or all of them recorded in webhook_attempts). An
-- older binary lists webhook_attempts only: until it is gone it does not
-- show the attempts newer ones keep in the rows.
ALTER TABLE webhook_events ADD COLUMN last_attempt integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN last_attempt_at timestamptz;
ALTER TABLE webhook_events ADD COLUMN last_url text NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN last_response_status integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN last_attempt_error text NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN last_duration_us bigint NOT NULL DEFAULT 0;
