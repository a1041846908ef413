-- External accounts and agents (PostgreSQL). Same tables, columns and
-- indexes as migrations/sqlite/0002_external_accounts.sql; only the types
-- differ, as in 0001_init.sql.
--
-- JSON documents (account_info, beneficiary_verified_data, policy) are bytea,
-- not text or jsonb: they come back byte for byte (jsonb would reformat them,
-- text refuses NUL and invalid UTF-8). NULL is a nil slice, an empty bytea an
-- empty one.

-- owner is the customer id, or '' for an account of the platform
-- (customer_id NULL); see the SQLite migration.
CREATE TABLE external_accounts (
    id                              text COLLATE "C" PRIMARY KEY,
    customer_id                     text COLLATE "C" REFERENCES customers (id),
    owner                           text COLLATE "C" NOT NULL GENERATED ALWAYS AS (coalesce(customer_id, '')) STORED,
    platform_account_id             text NOT NULL,
    currency                        text NOT NULL,
    account_type                    text NOT NULL,
    account_info                    bytea,
    status                          text NOT NULL,
    ownership_type                  text NOT NULL,
    default_uma_deposit_account     boolean NOT NULL,
    beneficiary_verification_status text NOT NULL,
    beneficiary_verified_data       bytea,
    fingerprint                     bytea NOT NULL,
    created_at                      timestamptz NOT NULL,
    updated_at                      timestamptz NOT NULL
);

CREATE UNIQUE INDEX external_accounts_owner_fingerprint ON external_accounts (owner, fingerprint);
CREATE UNIQUE INDEX external_accounts_owner_default ON external_accounts (owner) WHERE default_uma_deposit_account;
CREATE INDEX external_accounts_owner ON external_accounts (owner, id);
CREATE INDEX external_accounts_owner_currency ON external_accounts (owner, currency, id);
CREATE INDEX external_accounts_status ON external_accounts (status, created_at, id);

CREATE TABLE agents (
    id          text COLLATE "C" PRIMARY KEY,
    customer_id text COLLATE "C" NOT NULL REFERENCES customers (id),
    name        text NOT NULL,
    policy      bytea,
    is_paused   boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);

CREATE INDEX agents_customer ON agents (customer_id, id);

CREATE TABLE device_codes (
    code        text COLLATE "C" PRIMARY KEY,
    agent_id    text COLLATE "C" NOT NULL REFERENCES agents (id),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    redeemed_at timestamptz
);

CREATE INDEX device_codes_agent ON device_codes (agent_id, redeemed_at);

CREATE TABLE agent_tokens (
    token_hash bytea PRIMARY KEY,
    agent_id   text COLLATE "C" NOT NULL REFERENCES agents (id),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE INDEX agent_tokens_agent ON agent_tokens (agent_id);
