-- The customers' security logs (PostgreSQL). Same tables, columns and
-- constraints as migrations/sqlite/0018_security_events.sql (which says
-- what they hold); only the types differ. details is text, not jsonb: the
-- hash covers its exact bytes, which jsonb would not keep.
CREATE TABLE security_events (
    id          text        COLLATE "C" PRIMARY KEY,
    customer_id text        COLLATE "C" NOT NULL REFERENCES customers (id),
    account_id  text        COLLATE "C",
    seq         bigint      NOT NULL CHECK (seq > 0),
    type        text        COLLATE "C" NOT NULL,
    details     text        NOT NULL,
    created_at  timestamptz NOT NULL,
    prev_hash   text        COLLATE "C" NOT NULL,
    hash        text        COLLATE "C" NOT NULL
);

CREATE UNIQUE INDEX security_events_chain ON security_events (customer_id, seq);

CREATE TABLE sign_out_links (
    token_hash  bytea       PRIMARY KEY,
    customer_id text        COLLATE "C" NOT NULL REFERENCES customers (id),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
