-- What agents do (SQLite): the quotes an agent created, and its actions
-- (quote executions), whose spend counts against its spending limits.
-- Conventions as in 0001_init.sql.

CREATE TABLE agent_quotes (
    quote_id   TEXT    PRIMARY KEY REFERENCES quotes (id),
    agent_id   TEXT    NOT NULL REFERENCES agents (id),
    created_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE agent_actions (
    id             TEXT    PRIMARY KEY,
    agent_id       TEXT    NOT NULL REFERENCES agents (id),
    customer_id    TEXT    NOT NULL REFERENCES customers (id),
    type           TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    quote_id       TEXT    REFERENCES quotes (id),
    transaction_id TEXT    REFERENCES transactions (id),
    spend          INTEGER NOT NULL CHECK (spend >= 0),
    spend_currency TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Serves the agent's list of actions and the usage sums of its limits.
CREATE INDEX agent_actions_agent ON agent_actions (agent_id, id);
CREATE INDEX agent_actions_usage ON agent_actions (agent_id, created_at);
