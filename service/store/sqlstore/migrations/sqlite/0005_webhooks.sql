-- The webhook outbox (SQLite). Conventions as in 0001_init.sql.

-- One row per event, written in the same transaction as the change it
-- reports. body is the envelope exactly as it is sent (and signed);
-- sequence counts the events of one resource (a transaction, account or
-- customer id) from 1. status is PENDING until a delivery succeeds
-- (DELIVERED) or the retries ran out (FAILED). lease names the worker
-- delivering it right now; next_attempt_at is then the lease's end.
CREATE TABLE webhook_events (
    id              TEXT    PRIMARY KEY,
    type            TEXT    NOT NULL,
    resource_id     TEXT    NOT NULL,
    sequence        INTEGER NOT NULL CHECK (sequence > 0),
    body            BLOB    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    give_up_at      INTEGER NOT NULL,
    lease           TEXT    NOT NULL DEFAULT '',
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    delivered_at    INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (resource_id, sequence)
) STRICT; -- a rowid table: bodies of a kilobyte or more are too big for WITHOUT ROWID

CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX webhook_events_status ON webhook_events (status, id);
-- The pending events of a resource: a claim checks that none comes before
-- the one it takes, without reading the resource's delivered history.
CREATE INDEX webhook_events_pending ON webhook_events (resource_id, sequence) WHERE status = 'PENDING';

-- Every delivery attempt of an event, for GET /webhooks/deliveries.
CREATE TABLE webhook_attempts (
    event_id        TEXT    NOT NULL REFERENCES webhook_events (id),
    attempt         INTEGER NOT NULL,
    attempted_at    INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    response_status INTEGER NOT NULL,
    error           TEXT    NOT NULL,
    duration_us     INTEGER NOT NULL,
    PRIMARY KEY (event_id, attempt)
) STRICT, WITHOUT ROWID;
