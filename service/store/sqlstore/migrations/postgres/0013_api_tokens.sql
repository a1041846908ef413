-- Platform API tokens (PostgreSQL). Same table, columns and constraints as
-- migrations/sqlite/0013_api_tokens.sql; only the types differ.

CREATE TABLE api_tokens (
    id          text COLLATE "C" PRIMARY KEY,
    name        text NOT NULL,
    permissions text NOT NULL,
    client_id   text COLLATE "C" NOT NULL UNIQUE,
    secret_hash bytea NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
