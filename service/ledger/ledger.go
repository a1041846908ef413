// Package ledger is the service's books: every movement of money is one
// ledger [Transaction] of two or more [Entry] values whose amounts sum to
// zero in each currency, written once and never changed.
//
// # Chart of accounts
//
// Each wallet (internal account) has two ledger accounts, its available and
// its held side; their balances are the wallet's available and held
// balances. Every other account is a system account of one currency, for a
// place money comes from or goes to:
//
//	LedgerAccount:<wallet uuid>:available   what the wallet can spend
//	LedgerAccount:<wallet uuid>:held        reserved for payments in flight
//	LedgerAccount:clearing:<RAIL>:<CUR>     money that left or arrived through a rail (ACH, SEPA, SPEI, PIX, …; NETWORK without one)
//	LedgerAccount:fees:<CUR>                fees earned
//	LedgerAccount:fx:<CUR>                  the exchange: one leg per currency of a conversion
//	LedgerAccount:unmatched:<CUR>           deposits received and credited by an operator (paymentsd deposit)
//	LedgerAccount:sandbox:<CUR>             sandbox funding
//	LedgerAccount:opening:<CUR>             balances that existed before the books did
//
// A balance is the sum of the account's entries, so a wallet's balances are
// positive and the system accounts money came from are negative: the sum of
// all accounts is zero in every currency, always.
//
// # Two-phase holds
//
// Executing a payment writes a pending transaction (kind HOLD) from the
// wallet's available side to its held side. The payment's outcome resolves
// it exactly once, by a transaction that names it in PendingID (the
// database refuses a second): POST when the money leaves (held → the fee,
// the exchange and the rail's clearing) or VOID when it does not (held →
// available). A payment that comes back after it left is a RETURN: the
// POST's entries negated, credited to the available side.
//
// # The chain
//
// Ledger transactions are hash-chained, one chain per database, in the
// order they are sealed (see [Link] and [BodyHash] for the exact bytes). The
// chain head can be published and kept elsewhere; `paymentsd ledger verify`
// recomputes the chain and every invariant.
package ledger

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Prefix starts every ledger account id.
const Prefix = "LedgerAccount:"

// Account is a ledger account id.
type Account string

// Side is a wallet's side.
type Side string

const (
	Available Side = "available"
	Held      Side = "held"
)

// NoRail is the clearing of payouts without a rail (BTC to a Spark wallet,
// Lightning).
const NoRail = "NETWORK"

// uuidOf returns the uuid of a "Type:<uuid>" id.
func uuidOf(id string) string {
	if _, u, ok := strings.Cut(id, ":"); ok {
		return u
	}
	return id
}

// WalletAccount is the side of the wallet (an internal account id).
func WalletAccount(internalAccountID string, side Side) Account {
	return Account(Prefix + uuidOf(internalAccountID) + ":" + string(side))
}

// Clearing is the rail's clearing account in currency; an empty rail is
// [NoRail].
func Clearing(rail, currency string) Account {
	if rail == "" {
		rail = NoRail
	}
	return Account(Prefix + "clearing:" + rail + ":" + currency)
}

// Fees is where fees earned in currency go.
func Fees(currency string) Account { return Account(Prefix + "fees:" + currency) }

// FX is the exchange's account in currency.
func FX(currency string) Account { return Account(Prefix + "fx:" + currency) }

// Unmatched is where deposits an operator credits come from.
func Unmatched(currency string) Account { return Account(Prefix + "unmatched:" + currency) }

// Sandbox is where sandbox funding comes from.
func Sandbox(currency string) Account { return Account(Prefix + "sandbox:" + currency) }

// Opening is where the balances that existed before the books come from.
func Opening(currency string) Account { return Account(Prefix + "opening:" + currency) }

// Wallet reports the wallet (its internal account id) and side of a, when
// a is a wallet's account.
func (a Account) Wallet() (internalAccountID string, side Side, ok bool) {
	rest, found := strings.CutPrefix(string(a), Prefix)
	if !found {
		return "", "", false
	}
	u, s, found := strings.Cut(rest, ":")
	if !found || strings.Contains(s, ":") || (Side(s) != Available && Side(s) != Held) || len(u) != 36 {
		return "", "", false
	}
	return "InternalAccount:" + u, Side(s), true
}

// system splits a system account into its kind, rail (clearing only) and
// currency.
func (a Account) system() (kind, rail, currency string, ok bool) {
	rest, found := strings.CutPrefix(string(a), Prefix)
	if !found {
		return "", "", "", false
	}
	// kind:CUR, or clearing:RAIL:CUR (strings.Split would allocate, and
	// the verifier asks for every entry).
	kind, rest, found = strings.Cut(rest, ":")
	if !found {
		return "", "", "", false
	}
	if kind == "clearing" {
		rail, currency, found = strings.Cut(rest, ":")
		if !found || rail == "" || !isCurrency(currency) {
			return "", "", "", false
		}
		return kind, rail, currency, true
	}
	switch kind {
	case "fees", "fx", "unmatched", "sandbox", "opening":
		if isCurrency(rest) {
			return kind, "", rest, true
		}
	}
	return "", "", "", false
}

func isCurrency(s string) bool {
	if len(s) < 3 || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Valid reports whether a is an account of the chart.
func (a Account) Valid() bool {
	if _, _, ok := a.Wallet(); ok {
		return true
	}
	_, _, _, ok := a.system()
	return ok
}

// Name is the account's name for a person.
func (a Account) Name() string {
	if _, side, ok := a.Wallet(); ok {
		if side == Held {
			return "Wallet, held for payments in flight"
		}
		return "Wallet, available"
	}
	kind, rail, cur, ok := a.system()
	if !ok {
		return string(a)
	}
	switch kind {
	case "clearing":
		if rail == NoRail {
			return "Network payouts clearing (" + cur + ")"
		}
		return rail + " clearing (" + cur + ")"
	case "fees":
		return "Fees earned (" + cur + ")"
	case "fx":
		return "Currency exchange (" + cur + ")"
	case "unmatched":
		return "Deposits received (" + cur + ")"
	case "sandbox":
		return "Sandbox funding (" + cur + ")"
	default:
		return "Opening balances (" + cur + ")"
	}
}

// Kind is what a ledger transaction records.
type Kind string

const (
	KindOpening  Kind = "OPENING"  // a balance that existed before the books
	KindFunding  Kind = "FUNDING"  // sandbox funding
	KindDeposit  Kind = "DEPOSIT"  // a deposit an operator matched to a wallet
	KindIncoming Kind = "INCOMING" // money that arrived through a rail (transfer-in, UMA)
	KindHold     Kind = "HOLD"     // pending: available → held while a payment is in flight
	KindPost     Kind = "POST"     // the payment left: held → fees, exchange, clearing
	KindVoid     Kind = "VOID"     // the payment did not leave: held → available
	KindReturn   Kind = "RETURN"   // a payment that left came back: a POST reversed
	KindTransit  Kind = "TRANSIT"  // money that passed through without touching a wallet (real-time funding)
)

func (k Kind) valid() bool {
	switch k {
	case KindOpening, KindFunding, KindDeposit, KindIncoming, KindHold, KindPost, KindVoid, KindReturn, KindTransit:
		return true
	}
	return false
}

// MaxEntries bounds the entries of one transaction (entry ids carry one
// digit).
const MaxEntries = 9

// Entry is one line of a ledger transaction.
type Entry struct {
	Account  Account
	Currency string
	Amount   int64 // signed, smallest unit of Currency
	// AvailableAfter and HeldAfter are the wallet's balances after the
	// transaction, on a wallet's entries (set by the store when it
	// writes them); zero elsewhere.
	AvailableAfter, HeldAfter int64
}

// Transaction is one ledger transaction.
type Transaction struct {
	ID   string // LedgerTransaction:<uuid>
	Kind Kind
	// TransactionID and QuoteID are the payment it belongs to, when it
	// belongs to one.
	TransactionID, QuoteID string
	// PendingID is the HOLD a POST or VOID resolves.
	PendingID   string
	Description string
	CreatedAt   time.Time
	Entries     []Entry

	// Seq and Link are the transaction's place in the chain once it is
	// sealed (Seq 0 before); they are not part of its canonical form.
	Seq  int64
	Link Hash

	// bad is what a builder found wrong (an amount that is not
	// positive), reported by Check.
	bad string
}

// ErrUnbalanced reports a transaction that does not sum to zero.
var ErrUnbalanced = errors.New("ledger: entries do not sum to zero")

// Check reports what is wrong with t's shape: its kind, its entries (two
// to MaxEntries, non-zero, accounts of the chart, a system account's
// currency its own) and their sums per currency.
func (t *Transaction) Check() error {
	if t.bad != "" {
		return fmt.Errorf("ledger: %s: %s", t.ID, t.bad)
	}
	if !strings.HasPrefix(t.ID, "LedgerTransaction:") {
		return fmt.Errorf("ledger: transaction id %q is not a LedgerTransaction id", t.ID)
	}
	if !t.Kind.valid() {
		return fmt.Errorf("ledger: %s: unknown kind %q", t.ID, t.Kind)
	}
	// A POST or VOID names its HOLD, except for a payment executed before
	// the books existed: its held money came with the opening balance.
	if t.PendingID != "" && t.Kind != KindPost && t.Kind != KindVoid {
		return fmt.Errorf("ledger: %s: only a POST or a VOID resolves a pending transaction, not a %s", t.ID, t.Kind)
	}
	if t.CreatedAt.IsZero() {
		return fmt.Errorf("ledger: %s: no time", t.ID)
	}
	if len(t.Entries) < 2 || len(t.Entries) > MaxEntries {
		return fmt.Errorf("ledger: %s: %d entries (2 to %d)", t.ID, len(t.Entries), MaxEntries)
	}
	// The sums per currency, in the order the currencies first appear: a
	// transaction has at most MaxEntries of them, and the verifier checks
	// every transaction, so no map.
	var curs [MaxEntries]string
	var sums [MaxEntries]int64
	n := 0
	for i, e := range t.Entries {
		if e.Amount == 0 {
			return fmt.Errorf("ledger: %s: entry %d has no amount", t.ID, i+1)
		}
		if _, _, wallet := e.Account.Wallet(); !wallet {
			_, _, cur, ok := e.Account.system()
			if !ok {
				return fmt.Errorf("ledger: %s: entry %d: %q is not an account of the chart", t.ID, i+1, e.Account)
			}
			if cur != e.Currency {
				return fmt.Errorf("ledger: %s: entry %d: %s is in %s, not %s", t.ID, i+1, e.Account, cur, e.Currency)
			}
		}
		if !isCurrency(e.Currency) {
			return fmt.Errorf("ledger: %s: entry %d: currency %q", t.ID, i+1, e.Currency)
		}
		// A wallet holds one currency: WalletMoves sums its entries
		// as one move in the currency of its first.
		if w, _, ok := e.Account.Wallet(); ok {
			for j, p := range t.Entries[:i] {
				if pw, _, ok := p.Account.Wallet(); ok && pw == w && p.Currency != e.Currency {
					return fmt.Errorf("ledger: %s: entries %d and %d move wallet %s in %s and in %s; a wallet holds one currency",
						t.ID, j+1, i+1, w, p.Currency, e.Currency)
				}
			}
		}
		j := 0
		for j < n && curs[j] != e.Currency {
			j++
		}
		if j == n {
			curs[j], n = e.Currency, n+1
		}
		s := sums[j] + e.Amount
		if (e.Amount > 0 && s < sums[j]) || (e.Amount < 0 && s > sums[j]) {
			return fmt.Errorf("ledger: %s: entries overflow in %s", t.ID, e.Currency)
		}
		sums[j] = s
	}
	// The first currency in alphabetical order that does not balance.
	bad := -1
	for j := range n {
		if sums[j] != 0 && (bad < 0 || curs[j] < curs[bad]) {
			bad = j
		}
	}
	if bad >= 0 {
		return fmt.Errorf("%w: %s: %s sums to %d", ErrUnbalanced, t.ID, curs[bad], sums[bad])
	}
	return nil
}

// WalletMoves sums t's entries per wallet: the change of each wallet's
// available and held balances, in the order the wallets first appear.
func (t *Transaction) WalletMoves() []WalletMove {
	var out []WalletMove
	for _, e := range t.Entries {
		w, side, ok := e.Account.Wallet()
		if !ok {
			continue
		}
		i := 0
		for i < len(out) && out[i].Wallet != w {
			i++
		}
		if i == len(out) {
			out = append(out, WalletMove{Wallet: w, Currency: e.Currency})
		}
		if side == Held {
			out[i].Held += e.Amount
		} else {
			out[i].Available += e.Amount
		}
	}
	return out
}

// WalletMove is the change a transaction makes to one wallet.
type WalletMove struct {
	Wallet          string // InternalAccount:<uuid>
	Currency        string
	Available, Held int64
}
