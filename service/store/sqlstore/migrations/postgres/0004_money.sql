-- Balances, quotes, transactions and idempotency records (PostgreSQL). Same
-- columns, constraints and indexes as migrations/sqlite/0004_money.sql;
-- only the types differ.

ALTER TABLE internal_accounts ADD COLUMN available bigint NOT NULL DEFAULT 0 CHECK (available >= 0);
ALTER TABLE internal_accounts ADD COLUMN held bigint NOT NULL DEFAULT 0 CHECK (held >= 0);

CREATE TABLE transactions (
    id                     text COLLATE "C" PRIMARY KEY,
    quote_id               text COLLATE "C",
    type                   text NOT NULL,
    status                 text NOT NULL,
    customer_id            text COLLATE "C" NOT NULL REFERENCES customers (id),
    platform_customer_id   text NOT NULL,
    source_account_id      text COLLATE "C",
    destination_account_id text COLLATE "C" NOT NULL,
    sending_currency       text NOT NULL,
    receiving_currency     text NOT NULL,
    sent_amount            bigint NOT NULL CHECK (sent_amount >= 0),
    received_amount        bigint NOT NULL CHECK (received_amount >= 0),
    fees                   bigint NOT NULL CHECK (fees >= 0),
    exchange_rate          double precision NOT NULL,
    rate_details           bytea,
    payment_rail           text NOT NULL,
    description            text NOT NULL,
    failure_reason         text NOT NULL,
    outcome                text NOT NULL,
    reference              text NOT NULL,
    counterparty           bytea,
    next_step_at           timestamptz,
    settled_at             timestamptz,
    receipt_confirmed_at   timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);

CREATE INDEX transactions_customer ON transactions (customer_id, id);
CREATE INDEX transactions_source ON transactions (source_account_id, id);
CREATE INDEX transactions_destination ON transactions (destination_account_id, id);
CREATE INDEX transactions_due ON transactions (next_step_at) WHERE next_step_at IS NOT NULL;

CREATE TABLE quotes (
    id                     text COLLATE "C" PRIMARY KEY,
    transaction_id         text COLLATE "C" NOT NULL UNIQUE REFERENCES transactions (id),
    customer_id            text COLLATE "C" NOT NULL REFERENCES customers (id),
    source_account_id      text COLLATE "C" NOT NULL REFERENCES internal_accounts (id),
    destination_account_id text COLLATE "C" NOT NULL REFERENCES external_accounts (id),
    payment_rail           text NOT NULL,
    locked_side            text NOT NULL,
    locked_amount          bigint NOT NULL,
    sending_currency       text NOT NULL,
    receiving_currency     text NOT NULL,
    total_sending_amount   bigint NOT NULL CHECK (total_sending_amount > 0),
    total_receiving_amount bigint NOT NULL CHECK (total_receiving_amount > 0),
    fees_included          bigint NOT NULL CHECK (fees_included >= 0),
    exchange_rate          double precision NOT NULL,
    rate_details           bytea NOT NULL,
    payload                bytea NOT NULL,
    description            text NOT NULL,
    created_at             timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL
);

CREATE TABLE idempotency_records (
    scope        text COLLATE "C" NOT NULL,
    key          text COLLATE "C" NOT NULL,
    request_hash bytea NOT NULL,
    status       integer NOT NULL,
    body         bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_records_created ON idempotency_records (created_at);
