-- Agent management and approvals (PostgreSQL). Same columns and indexes as
-- migrations/sqlite/0012_agent_approvals.sql; only the types differ.
ALTER TABLE agents ADD COLUMN deleted_at timestamptz;
ALTER TABLE agent_actions ADD COLUMN request bytea;
ALTER TABLE agent_actions ADD COLUMN rejection_reason text;
ALTER TABLE agent_actions ADD COLUMN failure_reason text;
ALTER TABLE agent_actions ADD COLUMN executed_at timestamptz;

CREATE UNIQUE INDEX agent_actions_pending_quote ON agent_actions (quote_id) WHERE status = 'PENDING_APPROVAL';
CREATE INDEX agent_actions_pending ON agent_actions (status, id);
CREATE INDEX agent_actions_executed ON agent_actions (agent_id, executed_at);
