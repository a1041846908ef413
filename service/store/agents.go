package store

import (
	"context"
	"time"
)

// AgentTx is what the service keeps about what agents do: the quotes an
// agent created (an agent sees only its own) and its actions (quote
// executions), whose amounts count against the agent's spending limits. It
// is part of [Tx].
type AgentTx interface {
	// CreateAgentQuote records that q.AgentID created q.QuoteID.
	// ErrNotFound for an unknown agent or quote, ErrConflict when the
	// quote already has an agent.
	CreateAgentQuote(ctx context.Context, q *AgentQuote) error
	// GetAgentQuote is the record of a quote an agent created; ErrNotFound
	// for a quote no agent created.
	GetAgentQuote(ctx context.Context, quoteID string) (*AgentQuote, error)

	// CreateAgentAction stores an action. ErrConflict for a taken id,
	// ErrNotFound for an unknown agent, customer, quote or transaction.
	CreateAgentAction(ctx context.Context, a *AgentAction) error
	GetAgentAction(ctx context.Context, id string) (*AgentAction, error)
	// ListAgentActions pages an agent's actions by id, newest first.
	ListAgentActions(ctx context.Context, f AgentActionFilter) (Page[AgentAction], error)
	// AgentUsage counts the agent's APPROVED actions created at or after
	// since whose Spend is in currency, and sums that Spend (at most the
	// int64 maximum, however many actions add up past it).
	AgentUsage(ctx context.Context, agentID, currency string, since time.Time) (count, spend int64, err error)
}

// AgentQuote records the agent that created a quote.
type AgentQuote struct {
	QuoteID   string
	AgentID   string
	CreatedAt time.Time
}

// AgentAction is something an agent did that moves money (AgentAction on
// the wire): for now the execution of one of its quotes.
type AgentAction struct {
	ID            string // AgentAction:<uuid>
	AgentID       string
	CustomerID    string
	Type          string // EXECUTE_QUOTE
	Status        string // PENDING_APPROVAL, APPROVED, REJECTED, FAILED
	QuoteID       string // empty for actions without a quote
	TransactionID string // empty until the action has a transaction
	// Spend is the amount that counts against the agent's spending limits,
	// in the smallest unit of SpendCurrency (the policy's limit currency
	// when the action was taken).
	Spend         int64
	SpendCurrency string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// AgentActionFilter selects one agent's actions.
type AgentActionFilter struct {
	AgentID string // required
	Status  string // optional
	Limit   int
	Cursor  string
}
