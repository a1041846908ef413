-- External accounts and agents (SQLite). Conventions as in 0001_init.sql.
--
-- JSON documents (account_info, beneficiary_verified_data, policy) are BLOBs
-- holding the bytes the service gave, byte for byte; NULL is a nil slice and
-- a zero-length BLOB an empty one, so the two stay apart.

-- owner is the customer id, or '' for an account of the platform (customer_id
-- NULL). Customer ids are never empty, so '' cannot stand for a customer.
-- Uniqueness rules are stated per owner, which makes them apply to platform
-- accounts too: a unique index over customer_id alone would let any number of
-- NULLs through.
CREATE TABLE external_accounts (
    id                              TEXT    PRIMARY KEY,
    customer_id                     TEXT    REFERENCES customers (id),
    owner                           TEXT    NOT NULL GENERATED ALWAYS AS (coalesce(customer_id, '')) STORED,
    platform_account_id             TEXT    NOT NULL,
    currency                        TEXT    NOT NULL,
    account_type                    TEXT    NOT NULL,
    account_info                    BLOB,
    status                          TEXT    NOT NULL,
    ownership_type                  TEXT    NOT NULL,
    default_uma_deposit_account     INTEGER NOT NULL CHECK (default_uma_deposit_account IN (0, 1)),
    beneficiary_verification_status TEXT    NOT NULL,
    beneficiary_verified_data       BLOB,
    fingerprint                     BLOB    NOT NULL,
    created_at                      INTEGER NOT NULL,
    updated_at                      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- One destination per owner: a second create with the same fingerprint is a
-- conflict (409), also when two requests race.
CREATE UNIQUE INDEX external_accounts_owner_fingerprint ON external_accounts (owner, fingerprint);
-- At most one default UMA deposit account per owner, enforced by the
-- database whatever the code does.
CREATE UNIQUE INDEX external_accounts_owner_default ON external_accounts (owner) WHERE default_uma_deposit_account;
-- ListExternalAccounts: one owner, paged by id, optionally one currency.
CREATE INDEX external_accounts_owner ON external_accounts (owner, id);
CREATE INDEX external_accounts_owner_currency ON external_accounts (owner, currency, id);
-- PendingExternalAccounts: by status, oldest first.
CREATE INDEX external_accounts_status ON external_accounts (status, created_at, id);

CREATE TABLE agents (
    id          TEXT    PRIMARY KEY,
    customer_id TEXT    NOT NULL REFERENCES customers (id),
    name        TEXT    NOT NULL,
    policy      BLOB,
    is_paused   INTEGER NOT NULL CHECK (is_paused IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX agents_customer ON agents (customer_id, id);

CREATE TABLE device_codes (
    code        TEXT    PRIMARY KEY,
    agent_id    TEXT    NOT NULL REFERENCES agents (id),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    redeemed_at INTEGER
) STRICT, WITHOUT ROWID;

-- Serves the UPDATE of CreateDeviceCode that ends the agent's earlier codes.
CREATE INDEX device_codes_agent ON device_codes (agent_id, redeemed_at);

CREATE TABLE agent_tokens (
    token_hash BLOB    PRIMARY KEY,
    agent_id   TEXT    NOT NULL REFERENCES agents (id),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT, WITHOUT ROWID;

CREATE INDEX agent_tokens_agent ON agent_tokens (agent_id);
