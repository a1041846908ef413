-- Initial schema (SQLite).
--
-- Conventions, shared with migrations/postgres:
--   * ids are TEXT "<Type>:<uuidv7>"; lists page by id, which is creation order;
--   * times are INTEGER microseconds since the Unix epoch, UTC; NULL means unset;
--   * an empty optional reference (internal account without customer) is NULL,
--     so that foreign keys and unique indexes ignore it.
-- Tables are STRICT so that a value of the wrong type is an error, not a
-- silent conversion, and WITHOUT ROWID so rows are stored in id order.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE customers (
    id                   TEXT    PRIMARY KEY,
    platform_customer_id TEXT,
    customer_type        TEXT    NOT NULL,
    email                TEXT    NOT NULL,
    uma_address          TEXT    NOT NULL,
    full_name            TEXT    NOT NULL,
    kyc_status           TEXT    NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_customer_id);
CREATE INDEX customers_type ON customers (customer_type, id);

CREATE TABLE internal_accounts (
    id              TEXT    PRIMARY KEY,
    customer_id     TEXT    REFERENCES customers (id),
    type            TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    currency        TEXT    NOT NULL,
    private_enabled INTEGER NOT NULL CHECK (private_enabled IN (0, 1)),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX internal_accounts_customer ON internal_accounts (customer_id, id);
CREATE INDEX internal_accounts_type ON internal_accounts (type, currency, id);

CREATE TABLE credentials (
    id              TEXT    PRIMARY KEY,
    account_id      TEXT    NOT NULL REFERENCES internal_accounts (id),
    type            TEXT    NOT NULL,
    nickname        TEXT    NOT NULL,
    credential_id   TEXT    NOT NULL,
    failed_attempts INTEGER NOT NULL,
    locked_until    INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX credentials_account ON credentials (account_id, id);
-- At most one e-mail credential per account, and one e-mail address belongs
-- to one account. lower() folds ASCII only, here and on PostgreSQL (where the
-- column uses the "C" collation), so both back ends agree.
CREATE UNIQUE INDEX credentials_email_otp_account ON credentials (account_id) WHERE type = 'EMAIL_OTP';
CREATE UNIQUE INDEX credentials_email_otp_nickname ON credentials (lower(nickname)) WHERE type = 'EMAIL_OTP';

CREATE TABLE otps (
    id                 TEXT    PRIMARY KEY,
    credential_id      TEXT    NOT NULL REFERENCES credentials (id),
    code_hash          BLOB    NOT NULL,
    target_private_key BLOB    NOT NULL,
    created_at         INTEGER NOT NULL,
    expires_at         INTEGER NOT NULL,
    used_at            INTEGER
) STRICT, WITHOUT ROWID;

-- Serves LatestOTP (newest by created_at) and the supersede UPDATE.
CREATE INDEX otps_credential ON otps (credential_id, created_at, id);

-- challenges.account_id has no foreign key: a challenge is a record of a 202
-- answer, and keeping it must never depend on other rows.
CREATE TABLE challenges (
    id          TEXT    PRIMARY KEY,
    operation   TEXT    NOT NULL,
    target_id   TEXT    NOT NULL,
    account_id  TEXT    NOT NULL,
    body_hash   BLOB    NOT NULL,
    payload     BLOB    NOT NULL, -- payloadToSign byte for byte
    public_key  BLOB,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    consumed_at INTEGER
) STRICT, WITHOUT ROWID;

CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY,
    account_id    TEXT    NOT NULL REFERENCES internal_accounts (id),
    credential_id TEXT    NOT NULL REFERENCES credentials (id),
    type          TEXT    NOT NULL,
    nickname      TEXT    NOT NULL,
    public_key    BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    revoked_at    INTEGER
) STRICT, WITHOUT ROWID;

CREATE INDEX sessions_account ON sessions (account_id, id);
CREATE INDEX sessions_credential ON sessions (credential_id);
