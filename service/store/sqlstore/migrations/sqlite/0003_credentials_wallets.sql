-- Passkey and OAuth credentials, used registration challenges and wallet
-- secrets (SQLite). Conventions as in 0001_init.sql.

-- passkey is the WebAuthn credential record (public key, AAGUID, flags,
-- transports) as JSON, PASSKEY only; sign_count is kept apart so the last
-- accepted counter is a plain column. oidc_* name the identity of an OAUTH
-- credential: the token's iss, sub and aud at registration.
ALTER TABLE credentials ADD COLUMN passkey BLOB;
ALTER TABLE credentials ADD COLUMN sign_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credentials ADD COLUMN oidc_issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE credentials ADD COLUMN oidc_subject TEXT NOT NULL DEFAULT '';
ALTER TABLE credentials ADD COLUMN oidc_audience TEXT NOT NULL DEFAULT '';

-- A WebAuthn credential id belongs to one credential anywhere: an
-- authenticator cannot be registered twice. One OAuth identity per account.
CREATE UNIQUE INDEX credentials_passkey_id ON credentials (credential_id) WHERE type = 'PASSKEY';
CREATE UNIQUE INDEX credentials_oauth_identity ON credentials (account_id, oidc_issuer, oidc_subject) WHERE type = 'OAUTH';

-- Registration challenges are minted by the platform's backend; the service
-- records the SHA-256 of each one it accepted so none is accepted twice.
CREATE TABLE registration_challenges (
    challenge_hash BLOB    PRIMARY KEY,
    used_at        INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The wallet's secret (its BIP-39 mnemonic), sealed with the service's
-- at-rest key and bound to the account id. NULL for accounts made before
-- this migration until their first export.
ALTER TABLE internal_accounts ADD COLUMN wallet_secret BLOB;

-- Serves LatestChallenge (re-challenge rate limits).
CREATE INDEX challenges_target ON challenges (target_id, operation, created_at);
