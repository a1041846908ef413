package store

import (
	"context"
	"time"

	"paywallet/service/ledger"
)

// LedgerTx is the service's books (package ledger): an append-only journal
// of balanced ledger transactions. It is part of [Tx].
//
// Wallet balances (InternalAccount.Available and Held) are kept as columns
// beside the journal and move only through PostLedger, in the same
// statement sequence that writes the entries, so they always equal the sum
// of the wallet's entries. Nothing updates or deletes a journal row; the
// database refuses it too.
type LedgerTx interface {
	// PostLedger writes t and moves the balances of the wallets it
	// touches. It checks t (ledger.Transaction.Check), fills in the
	// wallet entries' AvailableAfter and HeldAfter, and queues t for
	// sealing. It reports false, having written nothing, when a wallet's
	// available or held balance would go below zero: that is how a payment
	// finds that the money is not there, even when concurrent requests
	// race for it. A wallet entry in another currency than the wallet's is
	// an error, as is a PendingID that names no ledger transaction
	// (ErrNotFound) or one already resolved (ErrConflict; the store
	// does not check that it names a HOLD: `ledger verify` does).
	// A post refused or failed writes nothing, not even the balances or
	// updated_at of a wallet it moved before another failed, also when
	// the caller commits (on PostgreSQL a failed statement may instead
	// abort the caller's transaction, which then commits nothing).
	PostLedger(ctx context.Context, t *ledger.Transaction) (bool, error)
	// LedgerTransactionsOf lists the ledger transactions of a payment (a
	// Transaction id), oldest first, with their entries.
	LedgerTransactionsOf(ctx context.Context, transactionID string) ([]ledger.Transaction, error)
	// GetLedgerTransaction reads one with its entries and, once sealed,
	// its place in the chain.
	GetLedgerTransaction(ctx context.Context, id string) (*ledger.Transaction, error)
	// ListLedgerEntries pages through a wallet's entries by entry id (in
	// the filter's order): its statement.
	ListLedgerEntries(ctx context.Context, f LedgerEntryFilter) (Page[LedgerEntry], error)
	// LedgerBalances is every account's balance per currency, wallets
	// and system accounts, ordered by account and currency.
	LedgerBalances(ctx context.Context) ([]LedgerBalance, error)
	// LedgerHead is the chain's last link (the zero Head before the
	// first seal).
	LedgerHead(ctx context.Context) (ledger.Head, error)
}

// LedgerSealer appends posted ledger transactions to the chain. It is part
// of [Store]: it runs its own database transaction, one sealer at a time
// across every process using the database.
type LedgerSealer interface {
	// SealLedger chains up to limit waiting ledger transactions (oldest
	// id first) and reports how many it sealed and the head after them.
	SealLedger(ctx context.Context, limit int, at time.Time) (int, ledger.Head, error)
}

// LedgerOpenedSetting is the setting that holds when the books opened
// (RFC 3339): the migration that created them wrote the wallets' opening
// balances then. Payments made before have no HOLD of their own.
const LedgerOpenedSetting = "ledger.opened_at"

// LedgerEntry is one line of a wallet's statement: an entry on one side of
// the wallet, with what it belongs to.
type LedgerEntry struct {
	// ID is "LedgerEntry:<uuid of the ledger transaction>-<n>", n the
	// entry's place in it from 1; ids sort like the transactions.
	ID                  string
	LedgerTransactionID string
	Kind                ledger.Kind
	TransactionID       string
	QuoteID             string
	Description         string
	Wallet              string // InternalAccount id
	ledger.Entry
	CreatedAt time.Time
}

// LedgerEntryFilter selects a wallet's entries.
type LedgerEntryFilter struct {
	Wallet        string // InternalAccount id; required
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Descending    bool
	Limit         int
	Cursor        string
}

// LedgerBalance is an account's balance in one currency.
type LedgerBalance struct {
	Account  ledger.Account
	Currency string
	Balance  int64
	Entries  int64 // how many entries make it
}
