-- Passkey and OAuth credentials, used registration challenges and wallet
-- secrets (PostgreSQL). Same columns and indexes as
-- migrations/sqlite/0003_credentials_wallets.sql; only the types differ.

ALTER TABLE credentials ADD COLUMN passkey bytea;
ALTER TABLE credentials ADD COLUMN sign_count bigint NOT NULL DEFAULT 0;
ALTER TABLE credentials ADD COLUMN oidc_issuer text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE credentials ADD COLUMN oidc_subject text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE credentials ADD COLUMN oidc_audience text COLLATE "C" NOT NULL DEFAULT '';

CREATE UNIQUE INDEX credentials_passkey_id ON credentials (credential_id) WHERE type = 'PASSKEY';
CREATE UNIQUE INDEX credentials_oauth_identity ON credentials (account_id, oidc_issuer, oidc_subject) WHERE type = 'OAUTH';

CREATE TABLE registration_challenges (
    challenge_hash bytea       PRIMARY KEY,
    used_at        timestamptz NOT NULL
);

ALTER TABLE internal_accounts ADD COLUMN wallet_secret bytea;

-- Serves LatestChallenge (re-challenge rate limits).
CREATE INDEX challenges_target ON challenges (target_id, operation, created_at);
