-- Platform API tokens (SQLite): further platform credentials made with
-- POST /tokens. secret_hash is a keyed hash of the client secret (the
-- secret itself is never stored). Conventions as in 0001_init.sql.

CREATE TABLE api_tokens (
    id          TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    permissions TEXT    NOT NULL,
    client_id   TEXT    NOT NULL UNIQUE,
    secret_hash BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
