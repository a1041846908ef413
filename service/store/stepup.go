package store

import (
	"context"
	"time"
)

// StepUpTx keeps step-ups (a person's second yes to one exact action,
// see payments/stepup.go) and the failures that lock a wallet's money
// actions. It is part of [Tx].
type StepUpTx interface {
	// CreateStepUp stores a step-up. ErrConflict for a taken id.
	CreateStepUp(ctx context.Context, s *StepUp) error
	// GetStepUp is the step-up with the id; ErrNotFound when none.
	GetStepUp(ctx context.Context, id string) (*StepUp, error)
	// StepUpOf is the newest step-up of the target (a quote or a signed
	// retry's Request id); ErrNotFound when none.
	StepUpOf(ctx context.Context, targetID string) (*StepUp, error)
	// AdvanceStepUp sets the step-up's status to to, and AuthorizedAt
	// (AUTHORIZED) or UsedAt (USED) to at, if its status is from; it
	// reports whether it did (a compare-and-set: a proof is accepted once);
	// ErrNotFound when there is no such step-up.
	AdvanceStepUp(ctx context.Context, id, from, to string, at time.Time) (bool, error)
	// SetStepUpCode replaces the hash of the e-mailed code (a code sent
	// again) and counts the sending.
	SetStepUpCode(ctx context.Context, id string, codeHash []byte, at time.Time) error

	// AddStepUpAttempt counts a proof of the account before it is
	// checked (see payments.authorizeIn).
	AddStepUpAttempt(ctx context.Context, id, accountID string, at time.Time) error
	// DeleteStepUpAttempt uncounts an attempt whose proof was good (or was
	// never checked); no error when it is gone.
	DeleteStepUpAttempt(ctx context.Context, id string) error
	// StepUpAttempts counts the account's attempts at or after since.
	StepUpAttempts(ctx context.Context, accountID string, since time.Time) (int, error)
	// LockAccount sets (or moves) the account's lock.
	LockAccount(ctx context.Context, accountID string, until time.Time, failures int) error
	// AccountLock is the account's lock: the zero time when it has none.
	AccountLock(ctx context.Context, accountID string) (until time.Time, failures int, err error)

	// HasPaid reports whether the wallet ever paid the external account:
	// an outgoing transaction between them that was executed (PROCESSING,
	// COMPLETED or REFUNDED).
	HasPaid(ctx context.Context, walletID, externalAccountID string) (bool, error)
}

// StepUp is a step-up: an action held until the person confirms it with
// a proof (a passkey assertion, or a code sent by e-mail) that is bound to
// the action's payloadToSign.
type StepUp struct {
	ID         string // ScaChallenge:<uuid>
	AccountID  string // the wallet
	CustomerID string
	// Action is what is held: PAYMENT, TRANSFER, RECOVERY_PHRASE_EXPORT,
	// SIGN_IN_METHOD_ADD, SIGN_IN_METHOD_REMOVE, EMAIL_CHANGE,
	// LIMITS_LOOSEN.
	Action string
	// TargetID is the quote (a payment) or the signed retry's Request id.
	TargetID string
	// PayloadHash is the SHA-256 of the action's payloadToSign: the
	// WebAuthn challenge, and what an e-mailed code is bound to.
	PayloadHash []byte
	// Reasons are the policy's reasons, in the order the policy checks
	// them (AMOUNT_OVER_THRESHOLD, …).
	Reasons []string
	// Factor is PASSKEY or EMAIL_OTP.
	Factor string
	// CodeHash is the keyed hash of the e-mailed code (EMAIL_OTP).
	CodeHash []byte
	// CodesSent counts the e-mails of the code.
	CodesSent int
	// Payment is the JSON of what a payment's Secure Payment
	// Confirmation must show (payee, total); nil for other actions.
	Payment []byte
	// Status is PENDING, AUTHORIZED (a proof was accepted; a signed
	// retry may now complete) or USED.
	Status       string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	AuthorizedAt time.Time
	UsedAt       time.Time
}
