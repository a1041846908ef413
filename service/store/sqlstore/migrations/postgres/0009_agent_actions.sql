-- What agents do (PostgreSQL). Same tables, columns and indexes as
-- migrations/sqlite/0009_agent_actions.sql; only the types differ.

CREATE TABLE agent_quotes (
    quote_id   text COLLATE "C" PRIMARY KEY REFERENCES quotes (id),
    agent_id   text COLLATE "C" NOT NULL REFERENCES agents (id),
    created_at timestamptz NOT NULL
);

CREATE TABLE agent_actions (
    id             text COLLATE "C" PRIMARY KEY,
    agent_id       text COLLATE "C" NOT NULL REFERENCES agents (id),
    customer_id    text COLLATE "C" NOT NULL REFERENCES customers (id),
    type           text NOT NULL,
    status         text NOT NULL,
    quote_id       text COLLATE "C" REFERENCES quotes (id),
    transaction_id text COLLATE "C" REFERENCES transactions (id),
    spend          bigint NOT NULL CHECK (spend >= 0),
    spend_currency text NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

CREATE INDEX agent_actions_agent ON agent_actions (agent_id, id);
CREATE INDEX agent_actions_usage ON agent_actions (agent_id, created_at);
