package payments

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Reading the books (our extension; README "The books"): a wallet's
// statement, every account's balance, one ledger transaction, and the
// chain's head signed with the webhook key so that a copy kept elsewhere
// proves later what the chain was. All of them only read.

// LedgerEntryFilter is the request of ListLedgerEntries, as the path and
// the query give it.
type LedgerEntryFilter struct {
	AccountID     string `path:"id"`             // the internal account, from the path
	CreatedAfter  string `query:"createdAfter"`  // RFC 3339, inclusive
	CreatedBefore string `query:"createdBefore"` // RFC 3339, exclusive
	SortOrder     string `query:"sortOrder"`     // desc (the default: newest first) or asc
	Page          PageRequest
}

// ListLedgerEntries is a page of an internal account's statement (GET
// /internal-accounts/{id}/entries): the entries on its available and held
// sides, newest first unless sortOrder=asc, between createdAfter
// (inclusive) and createdBefore (exclusive). An account of a deleted
// customer keeps its statement; an unknown or malformed id is 404.
func (s *Service) ListLedgerEntries(ctx context.Context, req LedgerEntryFilter) (wire.List[wire.LedgerEntry], error) {
	var fe fieldErrors
	f := store.LedgerEntryFilter{Wallet: req.AccountID}
	// The cursor is an entry id, not an id of one resource type: it is
	// checked here rather than by the page's check.
	f.Limit, _ = PageRequest{Limit: req.Page.Limit}.check("", &fe)
	if f.Cursor = req.Page.Cursor; f.Cursor != "" && !validEntryID(f.Cursor) {
		fe.add("cursor", "is not a cursor returned by this list")
	}
	f.CreatedAfter = dateTime(&fe, "createdAfter", req.CreatedAfter)
	f.CreatedBefore = dateTime(&fe, "createdBefore", req.CreatedBefore)
	f.Descending = descending(&fe, req.SortOrder, true)
	if e := fe.err(); e != nil {
		return wire.List[wire.LedgerEntry]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.LedgerEntry], error) {
		// The books are history: a CLOSED account keeps its statement.
		if _, err := internalAccount(ctx, tx, req.AccountID); err != nil {
			return store.Page[store.LedgerEntry]{}, err
		}
		return tx.ListLedgerEntries(ctx, f)
	}, ledgerEntryJSON)
}

// validEntryID reports whether s is a LedgerEntry:<uuid>-<n> id, n from 1
// to ledger.MaxEntries.
func validEntryID(s string) bool {
	i := strings.LastIndexByte(s, '-')
	if i < 0 || len(s)-i != 2 || s[i+1] < '1' || s[i+1] > '0'+ledger.MaxEntries {
		return false
	}
	return ids.Valid("LedgerEntry", s[:i])
}

// sideOf is the API's name of a wallet account's side.
func sideOf(a ledger.Account) string {
	if _, side, _ := a.Wallet(); side == ledger.Held {
		return wire.SideHeld
	}
	return wire.SideAvailable
}

func ledgerEntryJSON(e *store.LedgerEntry) wire.LedgerEntry {
	return wire.LedgerEntry{
		ID:                  e.ID,
		LedgerTransactionID: e.LedgerTransactionID,
		Kind:                string(e.Kind),
		TransactionID:       e.TransactionID,
		QuoteID:             e.QuoteID,
		Account:             string(e.Account),
		Side:                sideOf(e.Account),
		Amount:              e.Amount,
		Currency:            e.Currency,
		AvailableAfter:      e.AvailableAfter,
		HeldAfter:           e.HeldAfter,
		Description:         e.Description,
		CreatedAt:           timestamp(e.CreatedAt),
	}
}

// LedgerAccount is one account of the books in one currency, with its
// balance (the sum of its entries) and how many entries make it.
type LedgerAccount struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"` // ledger.AccountType
	Currency string `json:"currency"`
	Balance  int64  `json:"balance"`
	Entries  int64  `json:"entryCount"`
	// InternalAccountID is the wallet of a WALLET_AVAILABLE or WALLET_HELD
	// account.
	InternalAccountID string `json:"internalAccountId,omitempty"`
}

// LedgerTotal is the sum of every account's balance in one currency: zero,
// always, in books that balance.
type LedgerTotal struct {
	Currency string `json:"currency"`
	Balance  int64  `json:"balance"`
	Accounts int    `json:"accountCount"`
	Entries  int64  `json:"entryCount"`
}

// LedgerAccounts is the answer of GET /ledger/accounts.
type LedgerAccounts struct {
	Data   []LedgerAccount `json:"data"`
	Totals []LedgerTotal   `json:"totals"` // by currency
}

// LedgerAccounts is every account of the books that has entries, wallets'
// sides and system accounts, ordered by id and currency, with the totals
// per currency (GET /ledger/accounts). It is not paged: one read sums the
// journal, and the totals are only a proof when they cover every account.
func (s *Service) LedgerAccounts(ctx context.Context) (LedgerAccounts, error) {
	return read(ctx, s, func(tx store.Tx) (LedgerAccounts, error) {
		bals, err := tx.LedgerBalances(ctx)
		if err != nil {
			return LedgerAccounts{}, err
		}
		out := LedgerAccounts{Data: make([]LedgerAccount, 0, len(bals)), Totals: []LedgerTotal{}}
		at := map[string]int{}
		for _, b := range bals {
			a := LedgerAccount{ID: string(b.Account), Name: b.Account.Name(), Type: string(b.Account.Type()),
				Currency: b.Currency, Balance: b.Balance, Entries: b.Entries}
			a.InternalAccountID, _, _ = b.Account.Wallet()
			out.Data = append(out.Data, a)
			i, ok := at[b.Currency]
			if !ok {
				i = len(out.Totals)
				at[b.Currency] = i
				out.Totals = append(out.Totals, LedgerTotal{Currency: b.Currency})
			}
			out.Totals[i].Balance += b.Balance
			out.Totals[i].Accounts++
			out.Totals[i].Entries += b.Entries
		}
		slices.SortFunc(out.Totals, func(a, b LedgerTotal) int { return strings.Compare(a.Currency, b.Currency) })
		return out, nil
	})
}

// LedgerTransaction is one ledger transaction (GET
// /ledger/transactions/{id}) with its entries and, once sealed, its place
// in the chain: Sequence, Link (link n of the chain, hex) and the BodyHash
// that went into it.
type LedgerTransaction struct {
	ID            string                   `json:"id"`
	Kind          string                   `json:"kind"`
	TransactionID string                   `json:"transactionId,omitempty"`
	QuoteID       string                   `json:"quoteId,omitempty"`
	PendingID     string                   `json:"pendingId,omitempty"`
	Description   string                   `json:"description"`
	CreatedAt     string                   `json:"createdAt"`
	Entries       []LedgerTransactionEntry `json:"entries"`
	BodyHash      string                   `json:"bodyHash"`
	Sealed        bool                     `json:"sealed"`
	Sequence      int64                    `json:"sequence,omitempty"`
	Link          string                   `json:"link,omitempty"`
}

// LedgerTransactionEntry is one entry of a LedgerTransaction; a wallet's
// entry carries the wallet and its balances after the transaction.
type LedgerTransactionEntry struct {
	Account           string `json:"account"`
	Name              string `json:"name"`
	Type              string `json:"type"`
	Currency          string `json:"currency"`
	Amount            int64  `json:"amount"`
	InternalAccountID string `json:"internalAccountId,omitempty"`
	AvailableAfter    *int64 `json:"availableAfter,omitempty"`
	HeldAfter         *int64 `json:"heldAfter,omitempty"`
}

// GetLedgerTransaction is one ledger transaction; a malformed or unknown
// id is 404 NOT_FOUND.
func (s *Service) GetLedgerTransaction(ctx context.Context, id string) (LedgerTransaction, error) {
	notFound := errorf(CodeNotFound, "no ledger transaction with this id")
	if !ids.Valid("LedgerTransaction", id) {
		return LedgerTransaction{}, notFound
	}
	return read(ctx, s, func(tx store.Tx) (LedgerTransaction, error) {
		lt, err := tx.GetLedgerTransaction(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return LedgerTransaction{}, notFound
		}
		if err != nil {
			return LedgerTransaction{}, err
		}
		return ledgerTransactionJSON(lt), nil
	})
}

func ledgerTransactionJSON(lt *ledger.Transaction) LedgerTransaction {
	out := LedgerTransaction{ID: lt.ID, Kind: string(lt.Kind), TransactionID: lt.TransactionID, QuoteID: lt.QuoteID,
		PendingID: lt.PendingID, Description: lt.Description, CreatedAt: timestamp(lt.CreatedAt),
		Entries: make([]LedgerTransactionEntry, 0, len(lt.Entries)), BodyHash: ledger.BodyHash(lt).String(),
		Sealed: lt.Seq > 0}
	if out.Sealed {
		out.Sequence, out.Link = lt.Seq, lt.Link.String()
	}
	for _, e := range lt.Entries {
		je := LedgerTransactionEntry{Account: string(e.Account), Name: e.Account.Name(), Type: string(e.Account.Type()),
			Currency: e.Currency, Amount: e.Amount}
		if w, _, ok := e.Account.Wallet(); ok {
			avail, held := e.AvailableAfter, e.HeldAfter
			je.InternalAccountID, je.AvailableAfter, je.HeldAfter = w, &avail, &held
		}
		out.Entries = append(out.Entries, je)
	}
	return out
}

// LedgerHead is the chain's head (GET /ledger/head), signed: the JWS's
// payload is the head's own fields (wire.LedgerHeadPayload), signed by the
// active webhook key, so that anyone holding the JWKS can check a copy
// kept elsewhere, and the operator can later show that the chain still
// reaches the same link at the same sequence. Before the first seal the
// head is sequence 0 and link 0 (32 zero bytes), without a time.
func (s *Service) LedgerHead(ctx context.Context) (wire.LedgerHead, error) {
	h, err := read(ctx, s, func(tx store.Tx) (ledger.Head, error) { return tx.LedgerHead(ctx) })
	if err != nil {
		return wire.LedgerHead{}, err
	}
	p := wire.LedgerHeadPayload{Sequence: h.Seq, Hash: h.Hash.String()}
	if !h.At.IsZero() {
		p.At = timestamp(h.At)
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return wire.LedgerHead{}, err
	}
	keys, err := s.webhookKeys(ctx, false)
	if err != nil {
		return wire.LedgerHead{}, err
	}
	jws, err := keys.SignJWS(wire.LedgerHeadJWSType, payload)
	if err != nil {
		return wire.LedgerHead{}, err
	}
	return wire.LedgerHead{Sequence: p.Sequence, Hash: p.Hash, At: p.At, Signature: jws}, nil
}
