-- Step-ups: an action held until the person confirms it (a passkey
-- assertion or an e-mailed code bound to the action's payloadToSign), and
-- the failed proofs that lock a wallet's money actions (see
-- service/store/stepup.go and service/payments/stepup.go).
CREATE TABLE step_ups (
    id            TEXT    PRIMARY KEY,
    account_id    TEXT    NOT NULL REFERENCES internal_accounts (id),
    customer_id   TEXT    NOT NULL,
    action        TEXT    NOT NULL,
    target_id     TEXT    NOT NULL,
    payload_hash  BLOB    NOT NULL,
    reasons       TEXT    NOT NULL,
    factor        TEXT    NOT NULL,
    code_hash     BLOB,
    codes_sent    INTEGER NOT NULL DEFAULT 0,
    payment       BLOB,
    status        TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    authorized_at INTEGER,
    used_at       INTEGER
) STRICT;
CREATE INDEX step_ups_target ON step_ups (target_id, created_at);

CREATE TABLE step_up_failures (
    account_id TEXT    NOT NULL,
    failed_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX step_up_failures_account ON step_up_failures (account_id, failed_at);

CREATE TABLE account_locks (
    account_id      TEXT    PRIMARY KEY,
    locked_until    INTEGER NOT NULL,
    failed_attempts INTEGER NOT NULL
) STRICT;
