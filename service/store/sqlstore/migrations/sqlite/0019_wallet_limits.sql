-- Personal limits of embedded wallets (SQLite): see store.LimitsTx. One
-- row per wallet that ever had limits set; no row is no limits. Amounts
-- are in the smallest unit of the wallet's currency; NULL per_payment or
-- daily is no such limit. A pending loosening waits in the pending_
-- columns until pending_effective_at (NULL: none pending); each
-- pending_*_set says whether that field changes, since a pending NULL
-- amount (the limit removed) is a change too.

CREATE TABLE wallet_limits (
    account_id              TEXT    PRIMARY KEY REFERENCES internal_accounts (id),
    per_payment             INTEGER CHECK (per_payment > 0),
    daily                   INTEGER CHECK (daily > 0),
    cooling_off_hours       INTEGER NOT NULL CHECK (cooling_off_hours >= 0),
    pending_per_payment_set INTEGER NOT NULL CHECK (pending_per_payment_set IN (0, 1)),
    pending_per_payment     INTEGER CHECK (pending_per_payment > 0),
    pending_daily_set       INTEGER NOT NULL CHECK (pending_daily_set IN (0, 1)),
    pending_daily           INTEGER CHECK (pending_daily > 0),
    pending_cooling_off_set INTEGER NOT NULL CHECK (pending_cooling_off_set IN (0, 1)),
    pending_cooling_off     INTEGER NOT NULL CHECK (pending_cooling_off >= 0),
    pending_effective_at    INTEGER,
    updated_at              INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The rolling daily total reads a wallet's recent outgoing payments by
-- time (store.LimitsTx.OutgoingSince).
CREATE INDEX transactions_source_created ON transactions (source_account_id, created_at) WHERE type = 'OUTGOING';
