-- Personal limits of embedded wallets (PostgreSQL). Same table, columns
-- and constraints as migrations/sqlite/0019_wallet_limits.sql; only the
-- types differ.

CREATE TABLE wallet_limits (
    account_id              text COLLATE "C" PRIMARY KEY REFERENCES internal_accounts (id),
    per_payment             bigint CHECK (per_payment > 0),
    daily                   bigint CHECK (daily > 0),
    cooling_off_hours       integer NOT NULL CHECK (cooling_off_hours >= 0),
    pending_per_payment_set boolean NOT NULL,
    pending_per_payment     bigint CHECK (pending_per_payment > 0),
    pending_daily_set       boolean NOT NULL,
    pending_daily           bigint CHECK (pending_daily > 0),
    pending_cooling_off_set boolean NOT NULL,
    pending_cooling_off     integer NOT NULL CHECK (pending_cooling_off >= 0),
    pending_effective_at    timestamptz,
    updated_at              timestamptz NOT NULL
);

CREATE INDEX transactions_source_created ON transactions (source_account_id, created_at) WHERE type = 'OUTGOING';
