-- Initial schema (PostgreSQL). Same tables, columns and indexes as
-- migrations/sqlite/0001_init.sql; only the types differ:
--   * text columns that are ids or compared case-insensitively use the "C"
--     collation: ids then sort byte-wise (UUIDv7 order, as on SQLite) whatever
--     the database's locale, and lower() folds ASCII only, as on SQLite;
--   * times are timestamptz (microsecond precision); NULL means unset;
--   * byte strings are bytea, flags boolean.

CREATE TABLE settings (
    key   text  COLLATE "C" PRIMARY KEY,
    value bytea NOT NULL
);

CREATE TABLE customers (
    id                   text COLLATE "C" PRIMARY KEY,
    platform_customer_id text COLLATE "C",
    customer_type        text NOT NULL,
    email                text NOT NULL,
    uma_address          text NOT NULL,
    full_name            text NOT NULL,
    kyc_status           text NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);

CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_customer_id);
CREATE INDEX customers_type ON customers (customer_type, id);

CREATE TABLE internal_accounts (
    id              text COLLATE "C" PRIMARY KEY,
    customer_id     text COLLATE "C" REFERENCES customers (id),
    type            text NOT NULL,
    status          text NOT NULL,
    currency        text NOT NULL,
    private_enabled boolean NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX internal_accounts_customer ON internal_accounts (customer_id, id);
CREATE INDEX internal_accounts_type ON internal_accounts (type, currency, id);

CREATE TABLE credentials (
    id              text COLLATE "C" PRIMARY KEY,
    account_id      text COLLATE "C" NOT NULL REFERENCES internal_accounts (id),
    type            text NOT NULL,
    nickname        text COLLATE "C" NOT NULL,
    credential_id   text NOT NULL,
    failed_attempts integer NOT NULL,
    locked_until    timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX credentials_account ON credentials (account_id, id);
CREATE UNIQUE INDEX credentials_email_otp_account ON credentials (account_id) WHERE type = 'EMAIL_OTP';
CREATE UNIQUE INDEX credentials_email_otp_nickname ON credentials (lower(nickname)) WHERE type = 'EMAIL_OTP';

CREATE TABLE otps (
    id                 text COLLATE "C" PRIMARY KEY,
    credential_id      text COLLATE "C" NOT NULL REFERENCES credentials (id),
    code_hash          bytea NOT NULL,
    target_private_key bytea NOT NULL,
    created_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    used_at            timestamptz
);

CREATE INDEX otps_credential ON otps (credential_id, created_at, id);

CREATE TABLE challenges (
    id          text COLLATE "C" PRIMARY KEY,
    operation   text NOT NULL,
    target_id   text COLLATE "C" NOT NULL,
    account_id  text COLLATE "C" NOT NULL,
    body_hash   bytea NOT NULL,
    payload     bytea NOT NULL, -- bytea: text cannot hold NUL or invalid UTF-8
    public_key  bytea,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz
);

CREATE TABLE sessions (
    id            text COLLATE "C" PRIMARY KEY,
    account_id    text COLLATE "C" NOT NULL REFERENCES internal_accounts (id),
    credential_id text COLLATE "C" NOT NULL REFERENCES credentials (id),
    type          text NOT NULL,
    nickname      text NOT NULL,
    public_key    bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz
);

CREATE INDEX sessions_account ON sessions (account_id, id);
CREATE INDEX sessions_credential ON sessions (credential_id);
