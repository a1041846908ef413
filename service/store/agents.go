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
	// AgentUsage counts the agent's APPROVED actions executed (ExecutedAt,
	// or CreatedAt when it is zero) at or after since whose Spend is in
	// currency, and sums that Spend (at most the int64 maximum, however
	// many actions add up past it).
	AgentUsage(ctx context.Context, agentID, currency string, since time.Time) (count, spend int64, err error)

	// ListAgents pages the live (not deleted) agents by id.
	ListAgents(ctx context.Context, f AgentFilter) (Page[Agent], error)
	// UpdateAgentPolicy replaces a live agent's policy; UpdatedAt = at.
	// ErrNotFound for a missing or deleted agent.
	UpdateAgentPolicy(ctx context.Context, id string, policy []byte, at time.Time) error
	// DeleteAgent marks a live agent deleted at at, revokes its tokens and
	// ends its unredeemed device codes; false when it already was deleted,
	// ErrNotFound for an unknown id. GetAgent no longer finds it.
	DeleteAgent(ctx context.Context, id string, at time.Time) (bool, error)
	// ListAgentApprovals pages the actions in PENDING_APPROVAL by id.
	ListAgentApprovals(ctx context.Context, f AgentApprovalFilter) (Page[AgentAction], error)
	// DecideAgentAction writes a's Status, TransactionID, Spend,
	// SpendCurrency, RejectionReason, FailureReason, ExecutedAt and
	// UpdatedAt if the action's status is still from, and reports whether
	// it did (compare-and-set). ErrNotFound for an unknown id.
	DecideAgentAction(ctx context.Context, a *AgentAction, from string) (bool, error)
}

// AgentFilter selects agents (GET /agents). Zero values select all;
// the time bounds are inclusive.
type AgentFilter struct {
	CustomerID    string
	IsPaused      *bool
	IsConnected   *bool
	CreatedAfter  time.Time
	CreatedBefore time.Time
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	Limit         int
	Cursor        string
}

// AgentApprovalFilter selects actions waiting for approval (GET
// /agents/approvals). The time bounds (on CreatedAt) are inclusive.
type AgentApprovalFilter struct {
	AgentID       string
	CustomerID    string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Descending    bool
	Limit         int
	Cursor        string
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
	// Request is what a PENDING_APPROVAL action needs to run when it is
	// approved (the domain's JSON; nil when none).
	Request         []byte
	RejectionReason string
	FailureReason   string
	// ExecutedAt is when the action moved money: zero for one that did
	// not (yet); the limits count an action at ExecutedAt.
	ExecutedAt time.Time
}

// AgentActionFilter selects one agent's actions.
type AgentActionFilter struct {
	AgentID string // required
	Status  string // optional
	Limit   int
	Cursor  string
}
