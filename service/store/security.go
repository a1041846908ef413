package store

import (
	"context"
	"time"
)

// SecurityTx keeps the customers' security logs (table security_events):
// every sign-in, failed attempt, revoked session, changed sign-in method…
// of a customer, one record each, hash-chained per customer (package
// service/seclog says how). It is part of [Tx].
type SecurityTx interface {
	// AppendSecurityEvent adds e at the end of its customer's chain, in
	// the caller's transaction: it reads the customer's last record and
	// sets e.Seq (one more), e.PrevHash (the last one's hash, or
	// seclog.Zero) and e.Hash. Two transactions appending for one
	// customer at once would take the same seq: UNIQUE(customer_id, seq)
	// refuses the second, and the store runs its transaction again
	// (a lost race, like a serialization failure). ErrNotFound when the
	// customer does not exist.
	AppendSecurityEvent(ctx context.Context, e *SecurityEvent) error
	// ListSecurityEvents pages a customer's records newest first (by
	// seq); the cursor is the Seq (decimal) after which, older, the page
	// starts.
	ListSecurityEvents(ctx context.Context, f SecurityEventFilter) (Page[SecurityEvent], error)
}

// SecurityEvent is one record of a customer's security log.
type SecurityEvent struct {
	ID         string // SecurityEvent:<uuid>
	CustomerID string
	AccountID  string // the wallet the event concerns; "" for none
	Seq        int64  // 1, 2, … per customer
	Type       string // SIGNED_IN, SESSION_REVOKED, … (service/payments)
	// Details is a JSON object in canonical form (keys sorted, no
	// spaces): the bytes the hash covers.
	Details   []byte
	CreatedAt time.Time
	// PrevHash and Hash are the links n-1 and n of the customer's chain,
	// lower-case hex.
	PrevHash, Hash string
}

// SecurityEventFilter selects one customer's records; Type, when set,
// keeps those of one type.
type SecurityEventFilter struct {
	CustomerID string
	Type       string
	Limit      int
	Cursor     string
}

// SignOutLinkTx keeps the tokens of the security e-mails' links that sign
// every session of a customer out. It is part of [Tx].
type SignOutLinkTx interface {
	// CreateSignOutLink stores a link. ErrConflict for a taken hash.
	CreateSignOutLink(ctx context.Context, l *SignOutLink) error
	// UseSignOutLink marks the link whose token hashes to hash used at
	// at, if it is unused and not expired then, and answers its
	// customer; ErrNotFound when no such link can be used (unknown, used
	// or expired). Of two concurrent uses one wins.
	UseSignOutLink(ctx context.Context, hash []byte, at time.Time) (customerID string, err error)
}

// SignOutLink is a sign-out-everywhere token, stored as its hash.
type SignOutLink struct {
	TokenHash  []byte // SHA-256 of the token
	CustomerID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     time.Time // zero while unused
}
