-- The customers' security logs (SQLite): every security event of a
-- customer (a sign-in, a failed code, a revoked session, a sign-in method
-- added or removed, …) is one row, never updated, hash-chained to the
-- customer's record before it (service/seclog says how: prev_hash and
-- hash are links n-1 and n in lower-case hex). seq counts a customer's
-- records from 1; the unique index makes two concurrent appends of one
-- customer collide instead of forking the chain. details is a JSON object
-- in canonical form (keys sorted, no spaces), kept as text: the hash
-- covers these exact bytes. account_id is the wallet concerned, NULL for
-- none. Conventions as in 0001_init.sql.
CREATE TABLE security_events (
    id          TEXT    PRIMARY KEY,
    customer_id TEXT    NOT NULL REFERENCES customers (id),
    account_id  TEXT,
    seq         INTEGER NOT NULL CHECK (seq > 0),
    type        TEXT    NOT NULL,
    details     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
) STRICT, WITHOUT ROWID;

-- A customer's chain in order: appends read its end, lists page it newest
-- first, the verifier walks it.
CREATE UNIQUE INDEX security_events_chain ON security_events (customer_id, seq);

-- The links of the security e-mails that sign every session of a
-- customer out (POST /auth/sign-out-everywhere): the token itself is
-- never stored, only its SHA-256; single use (used_at), until expires_at.
CREATE TABLE sign_out_links (
    token_hash  BLOB    PRIMARY KEY,
    customer_id TEXT    NOT NULL REFERENCES customers (id),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
) STRICT, WITHOUT ROWID;
