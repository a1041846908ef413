package store

import (
	"context"
	"crypto/rand"
	"strings"
	"time"
)

// MoneyTx is what the service keeps about money: balances of internal
// accounts, quotes, the transactions made from them, and the stored answers
// of requests made with an Idempotency-Key. It is part of [Tx].
//
// Balances move only through LedgerTx.PostLedger (the books).
type MoneyTx interface {
	// CreateQuote stores a quote; its transaction must exist.
	CreateQuote(ctx context.Context, q *Quote) error
	GetQuote(ctx context.Context, id string) (*Quote, error)

	CreateTransaction(ctx context.Context, t *Transaction) error
	GetTransaction(ctx context.Context, id string) (*Transaction, error)
	// ListTransactions pages by id in the filter's order.
	ListTransactions(ctx context.Context, f TransactionFilter) (Page[Transaction], error)
	// AdvanceTransaction writes Status, FailureReason, NextStepAt,
	// SettledAt, Reference and UpdatedAt of t if the stored status is
	// still from, and reports whether it did. This compare-and-set is what
	// makes a quote execute at most once and a payment settle once, even
	// when several instances of the worker run.
	AdvanceTransaction(ctx context.Context, t *Transaction, from string) (bool, error)
	// ConfirmReceipt sets ReceiptConfirmedAt (overwriting an earlier
	// value) and UpdatedAt.
	ConfirmReceipt(ctx context.Context, id string, confirmedAt, now time.Time) error
	// DueTransactions returns up to limit transactions whose NextStepAt is
	// set and not after now, earliest first.
	DueTransactions(ctx context.Context, now time.Time, limit int) ([]Transaction, error)
	// ClaimDueTransaction returns the transaction id if its NextStepAt is
	// set and not after now, holding a row lock on it until the store
	// transaction ends, and ErrNotFound when it is not due or another
	// transaction holds it. Workers on several instances take work with it:
	// on PostgreSQL (SELECT … FOR UPDATE SKIP LOCKED) a second worker skips
	// the row at once instead of queueing behind the first and then
	// failing its compare-and-set; on SQLite a write transaction already
	// excludes every other writer, so it is a plain read.
	ClaimDueTransaction(ctx context.Context, id string, now time.Time) (*Transaction, error)

	// InternalAccountByDepositReference finds the account whose
	// DepositReference is reference (exactly; see ParseDepositReference).
	InternalAccountByDepositReference(ctx context.Context, reference string) (*InternalAccount, error)
	// QuoteByFundingReference finds the quote whose FundingReference is
	// reference (exactly).
	QuoteByFundingReference(ctx context.Context, reference string) (*Quote, error)

	// GetIdempotencyRecord finds the stored answer for (scope, key).
	GetIdempotencyRecord(ctx context.Context, scope, key string) (*IdempotencyRecord, error)
	// PutIdempotencyRecord stores an answer; ErrConflict when the (scope,
	// key) pair already has one.
	PutIdempotencyRecord(ctx context.Context, r *IdempotencyRecord) error
	// DeleteIdempotencyRecords removes records created before the time and
	// reports how many.
	DeleteIdempotencyRecords(ctx context.Context, before time.Time) (int64, error)
}

// Quote is a locked offer to pay a destination from an internal account.
// It never changes; the state of the payment is its [Transaction].
type Quote struct {
	ID                   string // Quote:<uuid>
	TransactionID        string
	CustomerID           string
	SourceAccountID      string // InternalAccount:<uuid>
	DestinationAccountID string // ExternalAccount:<uuid>
	PaymentRail          string // empty for destinations without rails
	LockedSide           string // SENDING or RECEIVING
	LockedAmount         int64
	SendingCurrency      string
	ReceivingCurrency    string
	TotalSendingAmount   int64
	TotalReceivingAmount int64
	FeesIncluded         int64
	ExchangeRate         float64 // display only; amounts never derive from it
	RateDetails          []byte  // RateDetails as JSON
	// Payload is the payloadToSign of an embedded-wallet source, byte for
	// byte; executing needs a stamp over it.
	Payload     string
	Description string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// FundingReference is set on a just-in-time funded quote (source
	// REALTIME_FUNDING): the deposit reference (NewDepositReference) that
	// the incoming payment funding it quotes. Unique among quotes; empty
	// for a quote paid from an internal account. Such a quote's
	// SourceAccountID is an internal account of its customer that the
	// row needs, from which nothing is taken.
	FundingReference string
}

// Transaction is one payment: outgoing (from a quote) or incoming (a
// funding of an internal account).
type Transaction struct {
	ID                   string // Transaction:<uuid>
	QuoteID              string // empty for incoming payments
	Type                 string // OUTGOING or INCOMING
	Status               string
	CustomerID           string
	PlatformCustomerID   string
	SourceAccountID      string // empty for incoming payments
	DestinationAccountID string
	SendingCurrency      string
	ReceivingCurrency    string
	SentAmount           int64 // smallest unit of SendingCurrency
	ReceivedAmount       int64 // smallest unit of ReceivingCurrency
	Fees                 int64 // smallest unit of ReceivingCurrency
	ExchangeRate         float64
	RateDetails          []byte // nil for incoming payments
	PaymentRail          string
	Description          string
	FailureReason        string
	// Outcome is what the (simulated) payout network will answer, fixed
	// when the quote is made: "" for success, or a sandbox pattern such as
	// "004". See the service's settlement worker.
	Outcome      string
	Reference    string // reconciliation reference, set when it leaves CREATED
	Counterparty []byte // counterpartyInformation as JSON, or nil
	NextStepAt   time.Time
	SettledAt    time.Time
	// ReceiptConfirmedAt is when the platform delivered the receipt.
	ReceiptConfirmedAt time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// SenderUmaAddress and ReceiverUmaAddress are set on an incoming UMA
	// payment (empty otherwise).
	SenderUmaAddress   string
	ReceiverUmaAddress string
}

// TransactionFilter selects transactions; empty fields do not filter.
type TransactionFilter struct {
	CustomerID string
	// AccountID matches the source or the destination.
	AccountID string
	// AccountIDs, when not nil, keeps only transactions whose source or
	// destination is one of them (an agent's allow-list).
	AccountIDs    []string
	Status        string
	Type          string
	CreatedAfter  time.Time // inclusive
	CreatedBefore time.Time // exclusive
	Descending    bool      // newest first
	Limit         int
	Cursor        string
}

// IdempotencyRecord is the stored answer of a request made with an
// Idempotency-Key.
type IdempotencyRecord struct {
	Scope       string // operation and target, e.g. "quotes.execute Quote:…"
	Key         string
	RequestHash []byte // SHA-256 of what identifies the request
	Status      int
	Body        []byte
	CreatedAt   time.Time
}

// Deposit references. Every internal account has one: the code a bank
// transfer into the account quotes so that the operator can credit it
// (fundingPaymentInstructions; payments.RecordDeposit). A reference is
// DepositReferenceLength symbols of Crockford's base 32 (digits and
// upper-case letters without I, L, O and U, so it reads and types
// unambiguously): 8 random symbols (40 bits; sparse, so a mistyped
// reference almost never names another account) and a check symbol (Luhn
// mod 32), which catches every single wrong symbol and every swap of two
// neighbouring symbols (see NewDepositReference) before the reference is
// looked up.

// DepositReferenceLength is the length of a deposit reference.
const DepositReferenceLength = 9

const depositAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewDepositReference makes a random deposit reference. The store keeps
// references unique; a caller must still be ready for a taken one.
//
// Luhn mod 32 misses one kind of swap: 0 and Z (the first and last
// symbols) next to each other. References with that pair are not made, so
// every swap of two neighbouring symbols of a reference is caught.
func NewDepositReference() string {
	for {
		var b [DepositReferenceLength - 1]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("store: no randomness for a deposit reference: " + err.Error())
		}
		out := make([]byte, 0, DepositReferenceLength)
		for _, v := range b {
			out = append(out, depositAlphabet[v%32])
		}
		ref := string(append(out, depositCheck(out)))
		if !strings.Contains(ref, "0Z") && !strings.Contains(ref, "Z0") {
			return ref
		}
	}
}

// depositCheck is the Luhn mod 32 check symbol of payload.
func depositCheck(payload []byte) byte {
	const n = 32
	sum, factor := 0, 2
	for i := len(payload) - 1; i >= 0; i-- {
		add := factor * strings.IndexByte(depositAlphabet, payload[i])
		factor = 3 - factor
		sum += add/n + add%n
	}
	return depositAlphabet[(n-sum%n)%n]
}

// ParseDepositReference reads a reference as a person may type it: case,
// spaces and hyphens do not matter, and O, I and L are read as 0, 1 and 1.
// It returns the reference in its stored form, or false when s is not a
// well-formed reference (wrong length, a symbol outside the alphabet, or a
// check symbol that does not match: a typing mistake).
func ParseDepositReference(s string) (string, bool) {
	var out []byte
	for _, c := range strings.ToUpper(s) {
		switch {
		case c == ' ' || c == '-':
			continue
		case c == 'O':
			c = '0'
		case c == 'I' || c == 'L':
			c = '1'
		}
		if c > 0x7f || strings.IndexByte(depositAlphabet, byte(c)) < 0 || len(out) == DepositReferenceLength {
			return "", false
		}
		out = append(out, byte(c))
	}
	if len(out) != DepositReferenceLength || depositCheck(out[:len(out)-1]) != out[len(out)-1] {
		return "", false
	}
	return string(out), true
}
