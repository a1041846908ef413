package store

import (
	"context"
	"time"
)

// LimitsTx keeps the limits a person sets on their embedded wallet
// (perPayment, daily, the cooling-off of new recipients) and reads what
// enforcing them needs. It is part of [Tx].
//
// The store keeps what it is given: which change tightens and applies at
// once, and which loosens and waits, is the service's decision.
type LimitsTx interface {
	// GetWalletLimits is the account's limits; ErrNotFound when none were
	// ever set (no limits, no pending change).
	GetWalletLimits(ctx context.Context, accountID string) (*WalletLimits, error)
	// PutWalletLimits stores l as the account's limits, replacing what
	// was there. ErrNotFound when the account does not exist.
	PutWalletLimits(ctx context.Context, l *WalletLimits) error
	// OutgoingSince is the total (SentAmount, in the account's currency;
	// at most the int64 maximum) of the account's OUTGOING transactions
	// created at or after since that took or take money from it: status
	// PROCESSING or COMPLETED, or PENDING without a quote (a transfer-out,
	// held at once). A quote's PENDING transaction (not executed) and a
	// FAILED, REJECTED, EXPIRED or REFUNDED one (the money stayed or came
	// back) do not count.
	OutgoingSince(ctx context.Context, accountID string, since time.Time) (int64, error)
	// NewestOutgoingOver answers when a payment refused by the daily
	// limit would fit: among the transactions OutgoingSince counts, the
	// creation time of the newest one that, with every newer one, sums to
	// more than budget (the limit less the payment). Once it has left the
	// window, what is left of it is within budget. The zero time when
	// they all sum to at most budget.
	NewestOutgoingOver(ctx context.Context, accountID string, since time.Time, budget int64) (time.Time, error)
}

// WalletLimits are an embedded wallet's limits, in the smallest unit of
// its currency.
type WalletLimits struct {
	AccountID string
	// PerPayment and Daily are nil when there is no such limit.
	PerPayment, Daily *int64
	// CoolingOffHours is how long after a recipient (external account)
	// is added no payment may go to it; 0 is off.
	CoolingOffHours int
	// Pending is a loosening that waits for its EffectiveAt; nil when none.
	Pending   *PendingLimits
	UpdatedAt time.Time
}

// PendingLimits is a change of limits that takes effect at EffectiveAt.
// Each field changes only when its Set flag is true; PerPayment and Daily
// may then be nil (the limit is removed).
type PendingLimits struct {
	PerPaymentSet   bool
	PerPayment      *int64
	DailySet        bool
	Daily           *int64
	CoolingOffSet   bool
	CoolingOffHours int
	EffectiveAt     time.Time
}
