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

-- An attempt is counted before its proof is checked, and its row is
-- deleted only when the proof was good: parallel guesses cannot pass the
-- lock, and an attempt whose outcome cannot be written stays counted.
CREATE TABLE step_up_attempts (
    id           TEXT    PRIMARY KEY,
    account_id   TEXT    NOT NULL,
    attempted_at INTEGER NOT NULL
) STRICT;
CREATE INDEX step_up_attempts_account ON step_up_attempts (account_id, attempted_at);

CREATE TABLE account_locks (
    account_id      TEXT    PRIMARY KEY,
    locked_until    INTEGER NOT NULL,
    failed_attempts INTEGER NOT NULL
) STRICT;
