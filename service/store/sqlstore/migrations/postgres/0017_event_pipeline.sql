-- Events and their delivery in three stages (PostgreSQL), each with its
-- own tables, so that an API transaction only ever appends one row: the
-- log (event_log), the catalog (events, event_resources) and delivery
-- (webhook_endpoints, webhook_retries, webhook_attempts). See
-- service/store/webhooks.go and migrations/sqlite/0017_event_pipeline.sql,
-- which has the same tables; here the types differ, and the log's key.
-- The outbox of 0005 goes: its events are copied into the catalog, its
-- delivery state is not kept.

-- The log: one row per RecordEvents call, never updated, inserted by a
-- data-modifying WITH on the transaction's next statement (no round trip
-- of its own). pos is the writing transaction's id (64 bits, it never
-- wraps), part numbers the rows of one transaction. A transaction id is
-- known before the transaction commits, which a sequence's value would
-- not tell: the catalog moves only rows below the oldest running
-- transaction (the snapshot's xmin), which no row written later can
-- precede. No other index: the insert stays as cheap as it gets.
CREATE TABLE event_log (
    pos        bigint      NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
    part       smallint    NOT NULL,
    created_at timestamptz NOT NULL,
    events     bytea       NOT NULL,
    PRIMARY KEY (pos, part)
);

-- The catalog, as on SQLite: seq is the event's place in one order of all
-- events without gaps, sequence counts its resource's events from 1.
-- Delivery never writes here.
CREATE TABLE events (
    seq         bigint      PRIMARY KEY,
    id          text        COLLATE "C" NOT NULL UNIQUE,
    type        text        COLLATE "C" NOT NULL,
    resource_id text        COLLATE "C" NOT NULL,
    sequence    bigint      NOT NULL CHECK (sequence > 0),
    body        bytea       NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE INDEX events_resource ON events (resource_id, seq);
CREATE INDEX events_type ON events (type, seq);
CREATE INDEX events_created ON events (created_at, seq);

-- The last sequence given to each resource, kept when retention drops its
-- events; the row of '' holds the catalog's head (the last seq given).
CREATE TABLE event_resources (
    resource_id text   COLLATE "C" PRIMARY KEY,
    sequence    bigint NOT NULL
);

-- Where events are delivered: settings and the worker's delivery state
-- (see the SQLite migration). The worker's updates (claim, finish) write
-- no indexed column: fillfactor leaves room for them to stay HOT.
CREATE TABLE webhook_endpoints (
    id              text        COLLATE "C" PRIMARY KEY,
    url             text        NOT NULL,
    description     text        NOT NULL,
    types           text        NOT NULL,
    payload         text        NOT NULL,
    is_default      boolean     NOT NULL,
    enabled         boolean     NOT NULL,
    disabled_at     timestamptz,
    disabled_reason text        NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    cursor_seq      bigint      NOT NULL,
    next_attempt_at timestamptz,
    failing_since   timestamptz,
    failed_rounds   integer     NOT NULL,
    last_success_at timestamptz,
    last_failure_at timestamptz,
    last_error      text        NOT NULL,
    lease           text        NOT NULL,
    lease_until     timestamptz
) WITH (fillfactor = 70);

CREATE UNIQUE INDEX webhook_endpoints_default ON webhook_endpoints (is_default) WHERE is_default;

CREATE TABLE webhook_retries (
    endpoint_id     text        COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id),
    event_seq       bigint      NOT NULL,
    resource_id     text        COLLATE "C" NOT NULL,
    attempts        integer     NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    give_up_at      timestamptz NOT NULL,
    PRIMARY KEY (endpoint_id, event_seq)
);

CREATE INDEX webhook_retries_resource ON webhook_retries (endpoint_id, resource_id, event_seq);
CREATE INDEX webhook_retries_event ON webhook_retries (event_seq);

-- The history: the outbox's events in the order of their ids.
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
SELECT 'webhook_upgrade_cursor', convert_to((min(e.seq) - 1)::text, 'UTF8')
FROM events e JOIN webhook_events w ON w.id = e.id WHERE w.status = 'PENDING'
HAVING count(*) > 0;

DROP TABLE webhook_attempts;
DROP TABLE webhook_events;

-- Every delivery attempt, appended by the round that made it; id orders
-- and pages them.
CREATE TABLE webhook_attempts (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id     text        COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id),
    event_seq       bigint      NOT NULL,
    event_id        text        COLLATE "C" NOT NULL,
    attempt         integer     NOT NULL,
    attempted_at    timestamptz NOT NULL,
    url             text        NOT NULL,
    response_status integer     NOT NULL,
    error           text        NOT NULL,
    duration_us     bigint      NOT NULL,
    final           boolean     NOT NULL
);

CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_seq, id);
