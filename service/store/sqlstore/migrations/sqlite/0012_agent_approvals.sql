-- Agent management and approvals (SQLite).
--
-- agents.deleted_at: DELETE /agents/{agentId} keeps the row (its actions,
-- quotes and transactions name it) and hides it; NULL for a live agent.
--
-- agent_actions: an action that waits for the platform's approval
-- (PENDING_APPROVAL) keeps in request what is needed to run it later (the
-- domain's JSON: the wallet signature of an execute, the body of a
-- transfer); rejection_reason is the platform's text of a REJECTED one,
-- failure_reason why an approved one FAILED; executed_at is when the
-- action moved money (its approval, or its creation for one that needed
-- none), the time the spending limits count it at.
ALTER TABLE agents ADD COLUMN deleted_at INTEGER;
ALTER TABLE agent_actions ADD COLUMN request BLOB;
ALTER TABLE agent_actions ADD COLUMN rejection_reason TEXT;
ALTER TABLE agent_actions ADD COLUMN failure_reason TEXT;
ALTER TABLE agent_actions ADD COLUMN executed_at INTEGER;

-- A quote waits for approval at most once at a time.
CREATE UNIQUE INDEX agent_actions_pending_quote ON agent_actions (quote_id) WHERE status = 'PENDING_APPROVAL';
-- Serves GET /agents/approvals.
CREATE INDEX agent_actions_pending ON agent_actions (status, id);
-- Serves the usage sums by the time an action moved money.
CREATE INDEX agent_actions_executed ON agent_actions (agent_id, executed_at);
