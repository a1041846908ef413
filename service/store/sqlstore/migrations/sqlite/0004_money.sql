-- Balances, quotes, transactions and idempotency records (SQLite).
-- Conventions as in 0001_init.sql.

-- available is what the owner can spend; held is money taken from
-- available by an executed payment that has not left yet (or whose refund
-- failed). totalBalance = available + held. The CHECKs are the last line
-- of defence: whatever the code does, no statement can make either negative.
ALTER TABLE internal_accounts ADD COLUMN available INTEGER NOT NULL DEFAULT 0 CHECK (available >= 0);
ALTER TABLE internal_accounts ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0);

-- A transaction is the state of one payment. Its quote (below) is the
-- immutable offer it was created from. next_step_at is when the settlement
-- worker must look at it next (the quote's expiry while PENDING, the
-- simulated network's answer while PROCESSING); NULL when nothing is due.
CREATE TABLE transactions (
    id                     TEXT    PRIMARY KEY,
    quote_id               TEXT,
    type                   TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    customer_id            TEXT    NOT NULL REFERENCES customers (id),
    platform_customer_id   TEXT    NOT NULL,
    source_account_id      TEXT,
    destination_account_id TEXT    NOT NULL,
    sending_currency       TEXT    NOT NULL,
    receiving_currency     TEXT    NOT NULL,
    sent_amount            INTEGER NOT NULL CHECK (sent_amount >= 0),
    received_amount        INTEGER NOT NULL CHECK (received_amount >= 0),
    fees                   INTEGER NOT NULL CHECK (fees >= 0),
    exchange_rate          REAL    NOT NULL,
    rate_details           BLOB,
    payment_rail           TEXT    NOT NULL,
    description            TEXT    NOT NULL,
    failure_reason         TEXT    NOT NULL,
    outcome                TEXT    NOT NULL,
    reference              TEXT    NOT NULL,
    counterparty           BLOB,
    next_step_at           INTEGER,
    settled_at             INTEGER,
    receipt_confirmed_at   INTEGER,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX transactions_customer ON transactions (customer_id, id);
CREATE INDEX transactions_source ON transactions (source_account_id, id);
CREATE INDEX transactions_destination ON transactions (destination_account_id, id);
CREATE INDEX transactions_due ON transactions (next_step_at) WHERE next_step_at IS NOT NULL;

CREATE TABLE quotes (
    id                     TEXT    PRIMARY KEY,
    transaction_id         TEXT    NOT NULL UNIQUE REFERENCES transactions (id),
    customer_id            TEXT    NOT NULL REFERENCES customers (id),
    source_account_id      TEXT    NOT NULL REFERENCES internal_accounts (id),
    destination_account_id TEXT    NOT NULL REFERENCES external_accounts (id),
    payment_rail           TEXT    NOT NULL,
    locked_side            TEXT    NOT NULL,
    locked_amount          INTEGER NOT NULL,
    sending_currency       TEXT    NOT NULL,
    receiving_currency     TEXT    NOT NULL,
    total_sending_amount   INTEGER NOT NULL CHECK (total_sending_amount > 0),
    total_receiving_amount INTEGER NOT NULL CHECK (total_receiving_amount > 0),
    fees_included          INTEGER NOT NULL CHECK (fees_included >= 0),
    exchange_rate          REAL    NOT NULL,
    rate_details           BLOB    NOT NULL,
    payload                BLOB    NOT NULL, -- payloadToSign byte for byte
    description            TEXT    NOT NULL,
    created_at             INTEGER NOT NULL,
    expires_at             INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The stored answer of a request made with an Idempotency-Key, replayed for
-- a repeat. scope names the operation (and its target), so one key cannot
-- replay another operation's answer.
CREATE TABLE idempotency_records (
    scope        TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    status       INTEGER NOT NULL,
    body         BLOB    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_records_created ON idempotency_records (created_at);
