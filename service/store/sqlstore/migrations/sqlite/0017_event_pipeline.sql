-- Events and their delivery in three stages (SQLite), each with its own
-- tables, so that an API transaction only ever appends one row: the log
-- (event_log), the catalog (events, event_resources) and delivery
-- (webhook_endpoints, webhook_retries, webhook_attempts). See
-- service/store/webhooks.go. The outbox of 0005 (webhook_events, one row
-- per event updated by every delivery attempt, and webhook_attempts) goes:
-- its events are copied into the catalog, its delivery state is not kept.

-- The log: one row per transaction that recorded events, the batch
-- framed by the store (sqlstore/logcodec.go), never updated; the catalog
-- moves rows out in pos order and deletes them, in one transaction. pos
-- is the rowid, without AUTOINCREMENT (whose counter would be one more
-- write in every API transaction): a new row's pos is above every row
-- present, which is all the order needs, since SQLite runs one writer at
-- a time and a moved row is gone in the transaction that moved it.
CREATE TABLE event_log (
    pos        INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    events     BLOB    NOT NULL
) STRICT;

-- The catalog. seq is the event's place in one order of all events, 1, 2,
-- 3, … without gaps; sequence counts the events of its resource from 1.
-- Delivery never writes here: an endpoint's progress is its cursor, its
-- failures are its retries.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    type        TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    sequence    INTEGER NOT NULL CHECK (sequence > 0),
    body        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT; -- a rowid table: seq is the rowid, and bodies are too big for WITHOUT ROWID

-- GET /events?resourceId=…, ?type=… (newest first) and the time range of
-- retention and replay (oldest first).
CREATE INDEX events_resource ON events (resource_id, seq);
CREATE INDEX events_type ON events (type, seq);
CREATE INDEX events_created ON events (created_at, seq);

-- The last sequence given to each resource, kept when retention drops
-- the resource's events, so that its next event continues the count
-- instead of starting again at 1. The row of the empty resource id ('',
-- which no event has) holds the catalog's head, the last seq given, kept
-- when retention drops the newest events.
CREATE TABLE event_resources (
    resource_id TEXT    PRIMARY KEY,
    sequence    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Where events are delivered: the settings (url … updated_at) and the
-- worker's delivery state (cursor_seq …). cursor_seq is the seq through
-- which the endpoint has handled events; lease names the worker that
-- holds it until lease_until. lease_until stays after the lease ends:
-- claims take the endpoints whose last lease ended longest ago first.
-- types is a JSON array of the event types it wants ([]: all).
CREATE TABLE webhook_endpoints (
    id              TEXT    PRIMARY KEY,
    url             TEXT    NOT NULL,
    description     TEXT    NOT NULL,
    types           TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    is_default      INTEGER NOT NULL CHECK (is_default IN (0, 1)),
    enabled         INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    disabled_at     INTEGER,
    disabled_reason TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    cursor_seq      INTEGER NOT NULL,
    next_attempt_at INTEGER,
    failing_since   INTEGER,
    failed_rounds   INTEGER NOT NULL,
    last_success_at INTEGER,
    last_failure_at INTEGER,
    last_error      TEXT    NOT NULL,
    lease           TEXT    NOT NULL,
    lease_until     INTEGER
) STRICT, WITHOUT ROWID;

-- At most one endpoint is the reference API's webhookEndpoint.
CREATE UNIQUE INDEX webhook_endpoints_default ON webhook_endpoints (is_default) WHERE is_default = 1;

-- An endpoint's events to send again, and the events of the same
-- resource that wait behind them. A delivered event leaves no row.
CREATE TABLE webhook_retries (
    endpoint_id     TEXT    NOT NULL REFERENCES webhook_endpoints (id),
    event_seq       INTEGER NOT NULL,
    resource_id     TEXT    NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    give_up_at      INTEGER NOT NULL,
    PRIMARY KEY (endpoint_id, event_seq)
) STRICT, WITHOUT ROWID;

-- A resource's retries of an endpoint, oldest first: which resources are
-- due, and which wait.
CREATE INDEX webhook_retries_resource ON webhook_retries (endpoint_id, resource_id, event_seq);
-- Retention drops the retries of the events it drops.
CREATE INDEX webhook_retries_event ON webhook_retries (event_seq);

-- Every delivery attempt, appended by the round that made it. id orders
-- them (newest first in lists) and pages them.
CREATE TABLE webhook_attempts_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint_id     TEXT    NOT NULL REFERENCES webhook_endpoints (id),
    event_seq       INTEGER NOT NULL,
    event_id        TEXT    NOT NULL,
    attempt         INTEGER NOT NULL,
    attempted_at    INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    response_status INTEGER NOT NULL,
    error           TEXT    NOT NULL,
    duration_us     INTEGER NOT NULL,
    final           INTEGER NOT NULL CHECK (final IN (0, 1))
) STRICT;

-- The history: every event of the outbox, in the order of its ids (UUIDv7:
-- the order they were recorded), keeps its id, sequence and body.
INSERT INTO events (seq, id, type, resource_id, sequence, body, created_at)
SELECT row_number() OVER (ORDER BY id), id, type, resource_id, sequence, body, created_at FROM webhook_events;
INSERT INTO event_resources (resource_id, sequence)
-- '' is the head's row (no event the service wrote has an empty resource).
SELECT resource_id, max(sequence) FROM webhook_events WHERE resource_id <> '' GROUP BY resource_id;
INSERT INTO event_resources (resource_id, sequence) SELECT '', count(*) FROM webhook_events;

-- Events the old outbox had not delivered yet (its receiver was down, or
-- the worker behind) are sent again: the service gives the default
-- endpoint it makes from the stored webhookEndpoint this cursor, the seq
-- just before the oldest of them (payments.initWebhooks), so it receives
-- every event from there on (some a second time: deliveries are at least
-- once, deduplicated by id).
INSERT INTO settings (key, value)
SELECT 'webhook_upgrade_cursor', CAST(CAST(min(e.seq) - 1 AS TEXT) AS BLOB)
FROM events e JOIN webhook_events w ON w.id = e.id WHERE w.status = 'PENDING'
HAVING count(*) > 0;

DROP TABLE webhook_attempts;
DROP TABLE webhook_events;
ALTER TABLE webhook_attempts_new RENAME TO webhook_attempts;

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
-- An event's attempts: GET /webhooks/deliveries?eventId=…, and retention.
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_seq, id);
