package store

import (
	"context"
	"time"
)

// APITokenTx keeps the platform's API tokens (POST /tokens): further
// platform credentials beside the configured one. It is part of [Tx].
type APITokenTx interface {
	// CreateAPIToken stores a token. ErrConflict for a taken id or
	// ClientID.
	CreateAPIToken(ctx context.Context, t *APIToken) error
	GetAPIToken(ctx context.Context, id string) (*APIToken, error)
	// GetAPITokenByClientID is the token whose ClientID is clientID (the
	// user name of its HTTP Basic credential); ErrNotFound when none.
	GetAPITokenByClientID(ctx context.Context, clientID string) (*APIToken, error)
	// ListAPITokens pages the tokens f selects by id, oldest first.
	ListAPITokens(ctx context.Context, f APITokenFilter) (Page[APIToken], error)
	// DeleteAPIToken removes the token; ErrNotFound when there is none.
	DeleteAPIToken(ctx context.Context, id string) error
}

// APIToken is a platform API token. The secret itself is never stored:
// SecretHash is a keyed hash of it (the service's business).
type APIToken struct {
	ID          string   // Token:<uuid>
	Name        string   // not unique
	Permissions []string // VIEW, TRANSACT, MANAGE; at least one
	ClientID    string   // unique
	SecretHash  []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// APITokenFilter selects tokens: Name exactly, and times inclusive at both
// ends (zero: no bound).
type APITokenFilter struct {
	Name                        string
	CreatedAfter, CreatedBefore time.Time
	UpdatedAfter, UpdatedBefore time.Time
	Limit                       int
	Cursor                      string
}
