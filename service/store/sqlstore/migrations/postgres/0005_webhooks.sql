-- The webhook outbox (PostgreSQL). Same columns, constraints and indexes
-- as migrations/sqlite/0005_webhooks.sql; only the types differ.

CREATE TABLE webhook_events (
    id              text COLLATE "C" PRIMARY KEY,
    type            text NOT NULL,
    resource_id     text COLLATE "C" NOT NULL,
    sequence        bigint NOT NULL CHECK (sequence > 0),
    body            bytea NOT NULL,
    status          text NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    give_up_at      timestamptz NOT NULL,
    lease           text NOT NULL DEFAULT '',
    last_status     integer NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT '',
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (resource_id, sequence)
);

CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX webhook_events_status ON webhook_events (status, id);
-- The pending events of a resource: a claim checks that none comes before
-- the one it takes, without reading the resource's delivered history.
CREATE INDEX webhook_events_pending ON webhook_events (resource_id, sequence) WHERE status = 'PENDING';

CREATE TABLE webhook_attempts (
    event_id        text COLLATE "C" NOT NULL REFERENCES webhook_events (id),
    attempt         integer NOT NULL,
    attempted_at    timestamptz NOT NULL,
    url             text NOT NULL,
    response_status integer NOT NULL,
    error           text NOT NULL,
    duration_us     bigint NOT NULL,
    PRIMARY KEY (event_id, attempt)
);
