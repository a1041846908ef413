package store

import (
	"context"
	"time"
)

// ExternalAccountTx is what the service keeps about external accounts
// (destinations outside the service) and about agents (user-scoped
// automated callers). It is part of [Tx].
type ExternalAccountTx interface {
	// CreateExternalAccount stores a. It fails with ErrConflict when the
	// same owner (customer, or the platform when CustomerID is empty)
	// already has an account with the same Fingerprint; nothing is stored
	// then. When a.DefaultUmaDepositAccount is set, the owner's previous
	// default (if any) loses the flag in the same statement sequence, so a
	// customer never has two defaults, even under concurrent creates.
	CreateExternalAccount(ctx context.Context, a *ExternalAccount) error
	GetExternalAccount(ctx context.Context, id string) (*ExternalAccount, error)
	ListExternalAccounts(ctx context.Context, f ExternalAccountFilter) (Page[ExternalAccount], error)
	// UpdateExternalAccountStatus sets the status and the verification
	// result, and UpdatedAt = at. Setting INACTIVE also clears
	// DefaultUmaDepositAccount: deposits then go to the customer's primary
	// internal account, as with no default. ErrNotFound for a missing id.
	UpdateExternalAccountStatus(ctx context.Context, id string, u ExternalAccountStatusUpdate, at time.Time) error
	// PendingExternalAccounts returns up to limit accounts in status
	// PENDING that no verification has looked at yet (empty
	// BeneficiaryVerificationStatus), oldest first, for the verifier. An
	// account whose verification is itself pending stays PENDING but leaves
	// the queue, so it cannot starve the others.
	PendingExternalAccounts(ctx context.Context, limit int) ([]ExternalAccount, error)

	// CreateAgent stores an agent of a customer.
	CreateAgent(ctx context.Context, a *Agent) error
	GetAgent(ctx context.Context, id string) (*Agent, error)
	// SetAgentPaused pauses or resumes an agent; UpdatedAt = at.
	SetAgentPaused(ctx context.Context, id string, paused bool, at time.Time) error
	// CreateDeviceCode stores a code and ends every earlier unredeemed code
	// of the same agent (their ExpiresAt becomes d.CreatedAt), so only the
	// newest code can be redeemed.
	CreateDeviceCode(ctx context.Context, d *DeviceCode) error
	GetDeviceCode(ctx context.Context, code string) (*DeviceCode, error)
	// RedeemDeviceCode marks the code redeemed at the given time if it is
	// unredeemed and not expired at that time, and reports whether this call
	// did it. ErrNotFound for an unknown code.
	RedeemDeviceCode(ctx context.Context, code string, at time.Time) (bool, error)
	// CreateAgentToken stores an access token by its hash only.
	CreateAgentToken(ctx context.Context, t *AgentToken) error
	// AgentByToken finds the agent whose unrevoked token has this hash.
	AgentByToken(ctx context.Context, tokenHash []byte) (*Agent, error)
	// AgentConnected reports whether the agent has an unrevoked token.
	AgentConnected(ctx context.Context, agentID string) (bool, error)
}

// ExternalAccount is a destination outside the service.
type ExternalAccount struct {
	ID                string // ExternalAccount:<uuid>
	CustomerID        string // empty for a platform account
	PlatformAccountID string
	Currency          string
	AccountType       string // accountInfo.accountType
	// AccountInfo is the validated accountInfo as canonical JSON (sorted
	// keys, no insignificant whitespace), stored as given by the client.
	AccountInfo              []byte
	Status                   string // PENDING, ACTIVE, UNDER_REVIEW, INACTIVE
	OwnershipType            string // FIRST_PARTY, THIRD_PARTY or empty
	DefaultUmaDepositAccount bool
	// BeneficiaryVerificationStatus is MATCHED, PARTIAL_MATCH, NOT_MATCHED,
	// UNSUPPORTED, CHECKED_BY_RECEIVING_FI, PENDING or empty.
	BeneficiaryVerificationStatus string
	// BeneficiaryVerifiedData is a JSON object such as {"fullName":"…"}, or nil.
	BeneficiaryVerifiedData []byte
	// Fingerprint identifies the destination for duplicate detection:
	// SHA-256 over the owner, the currency and the canonical accountInfo.
	Fingerprint []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ExternalAccountFilter selects external accounts. Exactly one scope is
// used: CustomerID (a customer's accounts), Platform (accounts with no
// customer) or AllCustomers (every customer's accounts, none of the
// platform's). Empty Currency does not filter.
type ExternalAccountFilter struct {
	CustomerID string
	Platform   bool
	Currency   string
	Limit      int
	Cursor     string

	AllCustomers bool
	// IDs, when not nil, keeps only these accounts (an agent's allow-list).
	IDs []string
}

// ExternalAccountStatusUpdate is the verifier's or an operator's decision.
type ExternalAccountStatusUpdate struct {
	Status                        string
	BeneficiaryVerificationStatus string
	BeneficiaryVerifiedData       []byte
}

// Agent is an automated caller acting for one customer under a policy.
type Agent struct {
	ID         string // Agent:<uuid>
	CustomerID string
	Name       string
	Policy     []byte // the AgentPolicy as canonical JSON
	IsPaused   bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// DeviceCode lets an agent obtain its access token once.
type DeviceCode struct {
	Code       string // e.g. AGENT-X7K9-M2P4
	AgentID    string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RedeemedAt time.Time
}

// AgentToken is an agent's bearer token, kept only as a hash.
type AgentToken struct {
	TokenHash []byte // SHA-256 of the token
	AgentID   string
	CreatedAt time.Time
	RevokedAt time.Time
}
