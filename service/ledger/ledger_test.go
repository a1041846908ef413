package ledger

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const wallet = "InternalAccount:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

var at = time.Date(2026, 12, 5, 19, 0, 0, 123456000, time.UTC)

// TestChainVectors checks BodyHash and Link against known answers computed
// by an independent implementation (testdata/chain.json, Python's hashlib
// from the documentation in chain.go).
func TestChainVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/chain.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Transaction struct {
				ID, Kind, TransactionID, QuoteID, PendingID, Description string
				CreatedAtMicros                                          int64
				Entries                                                  []struct {
					Account, Currency                 string
					Amount, AvailableAfter, HeldAfter int64
				}
			}
			BodyHash, Link string
			Seq            int64
		}
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	var prev Hash
	for _, v := range file.Vectors {
		x := v.Transaction
		lt := &Transaction{ID: x.ID, Kind: Kind(x.Kind), TransactionID: x.TransactionID, QuoteID: x.QuoteID,
			PendingID: x.PendingID, Description: x.Description, CreatedAt: time.UnixMicro(x.CreatedAtMicros).UTC()}
		for _, e := range x.Entries {
			lt.Entries = append(lt.Entries, Entry{Account: Account(e.Account), Currency: e.Currency, Amount: e.Amount,
				AvailableAfter: e.AvailableAfter, HeldAfter: e.HeldAfter})
		}
		if err := lt.Check(); err != nil {
			t.Errorf("vector %d: %v", v.Seq, err)
		}
		if got := BodyHash(lt).String(); got != v.BodyHash {
			t.Errorf("vector %d: body hash %s, want %s", v.Seq, got, v.BodyHash)
		}
		want, ok := ParseHash(v.Link)
		if !ok {
			t.Fatalf("vector %d: bad link %q", v.Seq, v.Link)
		}
		if got := Link(prev, v.Seq, BodyHash(lt)); got != want {
			t.Errorf("vector %d: link %s, want %s", v.Seq, got, want)
		}
		prev = want
	}
}

// TestBodyHashCoversEveryField: changing any field of the canonical form
// changes the hash (a tampered row cannot keep its link).
func TestBodyHashCoversEveryField(t *testing.T) {
	base := func() *Transaction {
		return Payout("LedgerTransaction:1", at, "Payment sent", wallet, "USD", 2500, 100, "SPEI", "MXN", 41280).
			For("Transaction:1", "Quote:1").Resolving("LedgerTransaction:0")
	}
	h := BodyHash(base())
	changes := map[string]func(*Transaction){
		"id":          func(x *Transaction) { x.ID += "x" },
		"kind":        func(x *Transaction) { x.Kind = KindVoid },
		"transaction": func(x *Transaction) { x.TransactionID += "x" },
		"quote":       func(x *Transaction) { x.QuoteID = "" },
		"pending":     func(x *Transaction) { x.PendingID = "" },
		"description": func(x *Transaction) { x.Description += "." },
		"time":        func(x *Transaction) { x.CreatedAt = x.CreatedAt.Add(time.Microsecond) },
		"account":     func(x *Transaction) { x.Entries[1].Account = Fees("MXN") },
		"currency":    func(x *Transaction) { x.Entries[1].Currency = "EUR" },
		"amount":      func(x *Transaction) { x.Entries[0].Amount-- },
		"available":   func(x *Transaction) { x.Entries[0].AvailableAfter = 1 },
		"held":        func(x *Transaction) { x.Entries[0].HeldAfter = 1 },
		"an entry":    func(x *Transaction) { x.Entries = x.Entries[:len(x.Entries)-1] },
		"order":       func(x *Transaction) { x.Entries[0], x.Entries[1] = x.Entries[1], x.Entries[0] },
		// Moving bytes between two fields keeps their concatenation.
		"boundary": func(x *Transaction) { x.TransactionID, x.QuoteID = "Transaction:1Q", "uote:1" },
	}
	for name, change := range changes {
		x := base()
		change(x)
		if BodyHash(x) == h {
			t.Errorf("changing the %s kept the body hash", name)
		}
	}
	// Seal state is not part of the form.
	x := base()
	x.Seq, x.Link = 7, Hash{1}
	if BodyHash(x) != h {
		t.Error("the chain position changed the body hash")
	}
}

func TestLinkDependsOnEverything(t *testing.T) {
	body := Hash{9}
	l := Link(Hash{}, 1, body)
	for name, other := range map[string]Hash{
		"prev": Link(Hash{1}, 1, body),
		"seq":  Link(Hash{}, 2, body),
		"body": Link(Hash{}, 1, Hash{8}),
	} {
		if other == l {
			t.Errorf("a different %s gave the same link", name)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := func() *Transaction { return HoldFor("LedgerTransaction:1", at, "hold", wallet, "USD", 10) }
	cases := []struct {
		name string
		tx   *Transaction
		want string // "" = valid
	}{
		{"hold", ok(), ""},
		{"payout with exchange", Payout("LedgerTransaction:1", at, "sent", wallet, "USD", 2500, 100, "SPEI", "MXN", 41280), ""},
		{"payout same currency", Payout("LedgerTransaction:1", at, "sent", wallet, "USD", 2500, 100, "ACH", "USD", 2400), ""},
		{"payout same currency, other amount", Payout("LedgerTransaction:1", at, "sent", wallet, "USD", 2500, 0, "ACH", "USD", 2400), ""},
		{"unbalanced", func() *Transaction { x := ok(); x.Entries[1].Amount = 11; return x }(), "USD sums to 1"},
		{"one entry", func() *Transaction { x := ok(); x.Entries = x.Entries[:1]; return x }(), "1 entries"},
		{"zero entry", func() *Transaction {
			x := ok()
			x.Entries = append(x.Entries, Entry{Account: Fees("USD"), Currency: "USD"})
			return x
		}(), "has no amount"},
		{"not an id", func() *Transaction { x := ok(); x.ID = "Transaction:1"; return x }(), "not a LedgerTransaction id"},
		{"unknown kind", func() *Transaction { x := ok(); x.Kind = "GIFT"; return x }(), "unknown kind"},
		{"no time", func() *Transaction { x := ok(); x.CreatedAt = time.Time{}; return x }(), "no time"},
		{"pending on a hold", ok().Resolving("LedgerTransaction:0"), "only a POST or a VOID"},
		{"unknown account", New("LedgerTransaction:1", KindFunding, at, "x").
			Add("LedgerAccount:bank:USD", "USD", -1).Add(WalletAccount(wallet, Available), "USD", 1), "not an account of the chart"},
		{"system account in another currency", New("LedgerTransaction:1", KindFunding, at, "x").
			Add(Sandbox("EUR"), "USD", -1).Add(WalletAccount(wallet, Available), "USD", 1), "is in EUR, not USD"},
		{"negative hold", HoldFor("LedgerTransaction:1", at, "hold", wallet, "USD", -10), "amount held -10 is not positive"},
		{"zero void", VoidOf("LedgerTransaction:1", at, "void", wallet, "USD", 0), "is not positive"},
		{"fee over the amount", Payout("LedgerTransaction:1", at, "sent", wallet, "USD", 100, 100, "ACH", "USD", 1), "fee 100"},
		{"negative move", New("LedgerTransaction:1", KindFunding, at, "x").
			Move(Sandbox("USD"), "USD", -5, WalletAccount(wallet, Available), "USD", -5), "not positive"},
		// A wallet holds one currency (WalletMoves sums its entries as one
		// move in the first's): before, a USD entry on a USDC wallet's held
		// side passed, and the store took it.
		{"one wallet's sides in two currencies", New("LedgerTransaction:1", KindHold, at, "x").
			Add(WalletAccount(wallet, Available), "USDC", -10).Add(FX("USDC"), "USDC", 10).
			Add(FX("USD"), "USD", -10).Add(WalletAccount(wallet, Held), "USD", 10), "a wallet holds one currency"},
		{"one side in two currencies", New("LedgerTransaction:1", KindFunding, at, "x").
			Move(Sandbox("USDC"), "USDC", 5, WalletAccount(wallet, Available), "USDC", 5).
			Move(Sandbox("USD"), "USD", 5, WalletAccount(wallet, Available), "USD", 5), "a wallet holds one currency"},
		{"two wallets in their own currencies", New("LedgerTransaction:1", KindIncoming, at, "x").
			Move(Sandbox("USD"), "USD", 5, WalletAccount("InternalAccount:019aa5d2-7c10-7000-8000-0000000000ff", Available), "USD", 5).
			Move(Sandbox("USDC"), "USDC", 5, WalletAccount(wallet, Available), "USDC", 5), ""},
		{"too many entries", func() *Transaction {
			x := New("LedgerTransaction:1", KindFunding, at, "x")
			for _, c := range []string{"AAA", "BBB", "CCC", "DDD", "EEE"} {
				x.Add(Sandbox(c), c, -1).Add(FX(c), c, 1)
			}
			return x
		}(), "10 entries"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.tx.Check()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Check = %v, want an error with %q", err, c.want)
			}
		})
	}
	if err := func() *Transaction { x := ok(); x.Entries[1].Amount = 11; return x }().Check(); !errors.Is(err, ErrUnbalanced) {
		t.Errorf("unbalanced: %v is not ErrUnbalanced", err)
	}
}

func TestPayoutAndReverse(t *testing.T) {
	p := Payout("LedgerTransaction:2", at, "sent", wallet, "USD", 2500, 100, "SPEI", "MXN", 41280).For("Transaction:1", "Quote:1")
	want := map[Account]int64{
		WalletAccount(wallet, Held): -2500, Fees("USD"): 100, FX("USD"): 2400, FX("MXN"): -41280, Clearing("SPEI", "MXN"): 41280,
	}
	if len(p.Entries) != len(want) {
		t.Fatalf("entries %+v", p.Entries)
	}
	for _, e := range p.Entries {
		if want[e.Account] != e.Amount {
			t.Errorf("%s: %d, want %d", e.Account, e.Amount, want[e.Account])
		}
	}
	r := Reverse("LedgerTransaction:3", at, "returned", p)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindReturn || r.TransactionID != "Transaction:1" || r.QuoteID != "Quote:1" || r.PendingID != "" {
		t.Errorf("reverse %+v", r)
	}
	for _, e := range r.Entries {
		a := e.Account
		if a == WalletAccount(wallet, Available) {
			a = WalletAccount(wallet, Held)
		}
		if want[a] != -e.Amount {
			t.Errorf("reverse %s: %d, want %d", e.Account, e.Amount, -want[a])
		}
	}
	moves := r.WalletMoves()
	if len(moves) != 1 || moves[0] != (WalletMove{Wallet: wallet, Currency: "USD", Available: 2500}) {
		t.Errorf("reverse moves %+v", moves)
	}
	// Same currency and amounts: no exchange legs.
	if m := New("LedgerTransaction:4", KindFunding, at, "x").
		Move(Sandbox("USD"), "USD", 5, WalletAccount(wallet, Available), "USD", 5); len(m.Entries) != 2 {
		t.Errorf("plain move %+v", m.Entries)
	}
}

func TestAccounts(t *testing.T) {
	cases := []struct {
		a      Account
		valid  bool
		wallet string
		side   Side
		name   string
	}{
		{WalletAccount(wallet, Available), true, wallet, Available, "Wallet, available"},
		{WalletAccount(wallet, Held), true, wallet, Held, "Wallet, held for payments in flight"},
		{Clearing("ACH", "USD"), true, "", "", "ACH clearing (USD)"},
		{Clearing("", "BTC"), true, "", "", "Network payouts clearing (BTC)"},
		{Fees("EUR"), true, "", "", "Fees earned (EUR)"},
		{FX("MXN"), true, "", "", "Currency exchange (MXN)"},
		{Unmatched("USD"), true, "", "", "Deposits received (USD)"},
		{Sandbox("USD"), true, "", "", "Sandbox funding (USD)"},
		{Opening("USD"), true, "", "", "Opening balances (USD)"},
		{"LedgerAccount:short:available", false, "", "", ""},
		{"LedgerAccount:fees:usd", false, "", "", ""},
		{"LedgerAccount:clearing::USD", false, "", "", ""},
		{"Account:fees:USD", false, "", "", ""},
	}
	for _, c := range cases {
		if c.a.Valid() != c.valid {
			t.Errorf("%s: valid %v", c.a, !c.valid)
		}
		w, side, ok := c.a.Wallet()
		if ok != (c.wallet != "") || w != c.wallet || side != c.side {
			t.Errorf("%s: wallet %q %q %v", c.a, w, side, ok)
		}
		if c.valid && c.a.Name() != c.name {
			t.Errorf("%s: name %q, want %q", c.a, c.a.Name(), c.name)
		}
	}
}
