-- Step-ups: an action held until the person confirms it (a passkey
-- assertion or an e-mailed code bound to the action's payloadToSign), and
-- the failed proofs that lock a wallet's money actions (see
-- service/store/stepup.go and service/payments/stepup.go).
CREATE TABLE step_ups (
    id            text COLLATE "C" PRIMARY KEY,
    account_id    text COLLATE "C" NOT NULL REFERENCES internal_accounts (id),
    customer_id   text COLLATE "C" NOT NULL,
    action        text        NOT NULL,
    target_id     text COLLATE "C" NOT NULL,
    payload_hash  bytea       NOT NULL,
    reasons       text        NOT NULL,
    factor        text        NOT NULL,
    code_hash     bytea,
    codes_sent    integer     NOT NULL DEFAULT 0,
    payment       bytea,
    status        text        NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    authorized_at timestamptz,
    used_at       timestamptz
);
CREATE INDEX step_ups_target ON step_ups (target_id, created_at);

-- An attempt is counted before its proof is checked, and its row is
-- deleted only when the proof was good: parallel guesses cannot pass the
-- lock, and an attempt whose outcome cannot be written stays counted.
CREATE TABLE step_up_attempts (
    id           text COLLATE "C" PRIMARY KEY,
    account_id   text COLLATE "C" NOT NULL,
    attempted_at timestamptz NOT NULL
);
CREATE INDEX step_up_attempts_account ON step_up_attempts (account_id, attempted_at);

CREATE TABLE account_locks (
    account_id      text COLLATE "C" PRIMARY KEY,
    locked_until    timestamptz NOT NULL,
    failed_attempts integer     NOT NULL
);
