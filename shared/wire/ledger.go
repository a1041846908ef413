package wire

// The books, read (our extension; README "The books").

// LedgerEntry is one line of a wallet's statement (GET
// /internal-accounts/{id}/entries): an entry on its available or held
// side, with the ledger transaction it is part of and the wallet's
// balances after that transaction. A HOLD or a VOID moves money between
// the two sides, so it is two lines of one ledger transaction.
type LedgerEntry struct {
	ID                  string `json:"id"` // LedgerEntry:<uuid of the ledger transaction>-<n>
	LedgerTransactionID string `json:"ledgerTransactionId"`
	// Kind is the ledger transaction's: OPENING, FUNDING, DEPOSIT,
	// INCOMING, HOLD, POST, VOID, RETURN or TRANSIT.
	Kind string `json:"kind"`
	// TransactionID and QuoteID are the payment the entry belongs to, when
	// it belongs to one.
	TransactionID string `json:"transactionId,omitempty"`
	QuoteID       string `json:"quoteId,omitempty"`
	Account       string `json:"account"` // LedgerAccount:<wallet uuid>:available|held
	Side          string `json:"side"`    // AVAILABLE or HELD
	// Amount is signed, in the smallest unit of Currency: positive when
	// money came to this side.
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	AvailableAfter int64  `json:"availableAfter"`
	HeldAfter      int64  `json:"heldAfter"`
	Description    string `json:"description"`
	CreatedAt      string `json:"createdAt"`
}

// Sides of a LedgerEntry.
const (
	SideAvailable = "AVAILABLE"
	SideHeld      = "HELD"
)

// LedgerHead is the chain's head (GET /ledger/head): how many ledger
// transactions are chained, the last link in hex, when it was sealed (absent
// while nothing is), and Signature, a compact JWS (ES256, the kid of a key
// of GET /webhooks/jwks.json) whose payload is LedgerHeadPayload.
type LedgerHead struct {
	Sequence  int64  `json:"sequence"`
	Hash      string `json:"hash"`
	At        string `json:"at,omitempty"`
	Signature string `json:"signature"`
}

// LedgerHeadPayload is what the head's JWS signs: the head's own fields,
// as JSON in this order.
type LedgerHeadPayload struct {
	Sequence int64  `json:"sequence"`
	Hash     string `json:"hash"`
	At       string `json:"at,omitempty"`
}

// LedgerHeadJWSType is the typ of the head's JWS header.
const LedgerHeadJWSType = "paywallet-ledger-head"
