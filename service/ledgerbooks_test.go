package service

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

// The books of each money operation, through the HTTP API on both stores:
// which ledger transactions a payment writes at each step, with which
// entries, and that the books as a whole still balance afterwards
// (storetest.CheckBooks: every transaction sums to zero per currency, the
// wallets equal their entries, nothing negative, the chain recomputes).

// leg is an entry a ledger transaction must have.
type leg struct {
	account  ledger.Account
	currency string
	amount   int64
}

// posting is a ledger transaction a payment must have: its kind, the
// payment's HOLD it resolves (its place among the payment's ledger
// transactions; -1 for none) and its entries, in any order.
type posting struct {
	kind     ledger.Kind
	resolves int
	legs     []leg
}

// wantBooks fails the test unless the ledger transactions of payment id
// are want, oldest first, each naming the payment and its quote, and the
// books balance.
func (e *env) wantBooks(id string, want ...posting) {
	e.t.Helper()
	x := e.transaction(id)
	var got []ledger.Transaction
	err := e.store.Tx(context.Background(), func(tx store.Tx) (err error) {
		got, err = tx.LedgerTransactionsOf(context.Background(), id)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(got) != len(want) {
		e.t.Fatalf("payment %s (%s) has %d ledger transactions %s, want %d", id, x.Status, len(got), kinds(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		pending := ""
		if w.resolves >= 0 {
			pending = got[w.resolves].ID
		}
		if g.Kind != w.kind || g.TransactionID != id || g.QuoteID != x.QuoteID || g.PendingID != pending {
			e.t.Errorf("payment %s, ledger transaction %d: %s of %s quote %q resolving %q; want %s of %s quote %q resolving %q",
				id, i+1, g.Kind, g.TransactionID, g.QuoteID, g.PendingID, w.kind, id, x.QuoteID, pending)
		}
		var legs []leg
		for _, en := range g.Entries {
			legs = append(legs, leg{en.Account, en.Currency, en.Amount})
		}
		if !sameLegs(legs, w.legs) {
			e.t.Errorf("payment %s, %s: entries\n got %v\nwant %v", id, g.Kind, legs, w.legs)
		}
	}
	storetest.CheckBooks(e.t, e.store)
}

func kinds(lts []ledger.Transaction) []ledger.Kind {
	var out []ledger.Kind
	for _, lt := range lts {
		out = append(out, lt.Kind)
	}
	return out
}

func sameLegs(a, b []leg) bool {
	order := func(x, y leg) int {
		if c := strings.Compare(string(x.account), string(y.account)); c != 0 {
			return c
		}
		return strings.Compare(x.currency, y.currency)
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	return slices.Equal(a, b)
}

func available(wallet string) ledger.Account { return ledger.WalletAccount(wallet, ledger.Available) }
func held(wallet string) ledger.Account      { return ledger.WalletAccount(wallet, ledger.Held) }

// creditOf is money that came into wallet's available side from the
// system account from: a FUNDING, DEPOSIT or INCOMING.
func creditOf(kind ledger.Kind, from ledger.Account, wallet, currency string, amount int64) posting {
	return posting{kind, -1, []leg{{from, currency, -amount}, {available(wallet), currency, amount}}}
}

func holdOf(wallet, currency string, amount int64) posting {
	return posting{ledger.KindHold, -1, []leg{{available(wallet), currency, -amount}, {held(wallet), currency, amount}}}
}

func voidOf(wallet, currency string, amount int64, hold int) posting {
	return posting{ledger.KindVoid, hold, []leg{{held(wallet), currency, -amount}, {available(wallet), currency, amount}}}
}

// leftFor is where payment x's money goes once it leaves: fee (the
// quote's feesIncluded, in sending units; a transaction's fees are in
// receiving units) to the fees of the sending currency, the rest through
// the exchange when the currencies differ, and what is received to the
// rail's clearing.
func leftFor(x wire.Transaction, fee int64) []leg {
	send, recv := x.SentAmount.Currency.Code, x.ReceivedAmount.Currency.Code
	sent, received := x.SentAmount.Amount, x.ReceivedAmount.Amount
	var legs []leg
	if fee != 0 {
		legs = append(legs, leg{ledger.Fees(send), send, fee})
	}
	if send != recv {
		legs = append(legs, leg{ledger.FX(send), send, sent - fee}, leg{ledger.FX(recv), recv, -received})
	}
	return append(legs, leg{ledger.Clearing(x.PaymentRail, recv), recv, received})
}

// postOf is the POST of payment x from wallet, resolving its HOLD.
func postOf(wallet string, x wire.Transaction, fee int64, hold int) posting {
	return posting{ledger.KindPost, hold, append(leftFor(x, fee), leg{held(wallet), x.SentAmount.Currency.Code, -x.SentAmount.Amount})}
}

// returnOf is the RETURN of payment x's POST: all of it back to the
// wallet's available side.
func returnOf(wallet string, x wire.Transaction, fee int64) posting {
	legs := []leg{{available(wallet), x.SentAmount.Currency.Code, x.SentAmount.Amount}}
	for _, l := range leftFor(x, fee) {
		legs = append(legs, leg{l.account, l.currency, -l.amount})
	}
	return posting{ledger.KindReturn, -1, legs}
}

// transitOf is the TRANSIT of just-in-time funded payment x: from the
// deposits received, out as a POST would take it, touching no wallet.
func transitOf(x wire.Transaction, fee int64) posting {
	send := x.SentAmount.Currency.Code
	return posting{ledger.KindTransit, -1, append(leftFor(x, fee), leg{ledger.Unmatched(send), send, -x.SentAmount.Amount})}
}

// newestIncoming is the newest INCOMING transaction of an account: the
// payment a sandbox funding or a deposit made.
func (e *env) newestIncoming(accountID string) wire.Transaction {
	e.t.Helper()
	var list wire.List[wire.Transaction]
	r := e.do("GET", "/transactions?type=INCOMING&limit=1&accountId="+accountID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(e.t, &list)
	if len(list.Data) != 1 {
		e.t.Fatalf("no incoming transaction of %s", accountID)
	}
	return list.Data[0]
}

// TestBooksOfQuotePayments: a sandbox funding is a FUNDING from
// sandbox:USD; an execute is the HOLD; the sandbox outcome then resolves
// it once: a payment that leaves is the POST (the fee earned, the exchange
// when the currencies differ, the rail's clearing), 002, 004 and 006 are a
// VOID, 005 a POST and then its RETURN, and 007 leaves the HOLD pending
// with the money held.
func TestBooksOfQuotePayments(t *testing.T) { onBothStores(t, testBooksOfQuotePayments) }

func testBooksOfQuotePayments(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox, func(c *Config) { c.SettlementDelay = time.Second })...)
	p := e.newPayer("books-pay@example.com", 20_000)
	w := p.account.ID
	e.wantBooks(e.newestIncoming(w).ID, creditOf(ledger.KindFunding, ledger.Sandbox("USD"), w, "USD", 20_000))

	eur := e.createAccount(map[string]any{"customerId": p.customer.ID, "currency": "EUR", "accountInfo": map[string]any{
		"accountType": "EUR_ACCOUNT", "iban": "DE89370400440532013000", "beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL",
			"fullName": "Ana Diaz", "birthDate": "1990-01-01", "nationality": "DE",
			"address": map[string]any{"line1": "Hauptstr. 1", "city": "Berlin", "postalCode": "10115", "country": "DE"}}}})
	e.verify()
	cases := []struct {
		name   string
		dest   func() string
		rounds []string // the status after each settlement round
		books  func(x wire.Transaction, fee int64) []posting
	}{
		{"completed", func() string { return e.destination(p, "12345").ID }, []string{"COMPLETED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), postOf(w, x, fee, 0)}
			}},
		{"completed in euros", func() string { return eur.ID }, []string{"COMPLETED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), postOf(w, x, fee, 0)}
			}},
		{"002 execution failed", func() string { return e.destination(p, "12002").ID }, []string{"FAILED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), voidOf(w, "USD", 1_000, 0)}
			}},
		{"004 delivery failed", func() string { return e.destination(p, "12004").ID }, []string{"FAILED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), voidOf(w, "USD", 1_000, 0)}
			}},
		{"005 returned", func() string { return e.destination(p, "12005").ID }, []string{"COMPLETED", "REFUNDED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), postOf(w, x, fee, 0), returnOf(w, x, fee)}
			}},
		{"006 rejected", func() string { return e.destination(p, "12006").ID }, []string{"REJECTED"},
			func(x wire.Transaction, fee int64) []posting {
				return []posting{holdOf(w, "USD", 1_000), voidOf(w, "USD", 1_000, 0)}
			}},
		{"007 refund failed too", func() string { return e.destination(p, "12007").ID }, []string{"FAILED"},
			func(x wire.Transaction, fee int64) []posting { return []posting{holdOf(w, "USD", 1_000)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := e.on(t)
			q := e.quote(quoteBody(p, c.dest(), "SENDING", 1_000))
			e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
			e.wantBooks(q.TransactionID, holdOf(w, "USD", 1_000))
			var x wire.Transaction
			for i, status := range c.rounds {
				e.clock.Advance(time.Second)
				e.settle()
				if x = e.transaction(q.TransactionID); x.Status != status {
					t.Fatalf("status %s, want %s", x.Status, status)
				}
				books := c.books(x, q.FeesIncluded)
				e.wantBooks(q.TransactionID, books[:min(i+2, len(books))]...)
			}
		})
	}
	// 007: the money stays held.
	if a := e.account(w); a.TotalBalance.Amount-a.Balance.Amount != 1_000 {
		t.Errorf("held %d after the 007 payment, want 1000", a.TotalBalance.Amount-a.Balance.Amount)
	}
}

// on is the env for a subtest: its helpers fail t.
func (e *env) on(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// TestBooksOfTransfers: a recorded deposit is a DEPOSIT from
// unmatched:USD; a transfer-in is credited from the rail's clearing when it
// completes and writes nothing when it fails; a transfer-out holds at once,
// and its HOLD is posted to the rail's clearing when it completes or voided
// when it fails or is cancelled.
func TestBooksOfTransfers(t *testing.T) { onBothStores(t, testBooksOfTransfers) }

func testBooksOfTransfers(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("books-transfer@example.com", 0)
	w := p.account.ID
	dests := map[string]string{}
	destination := func(suffix string) string {
		if dests[suffix] == "" {
			dests[suffix] = e.destination(p, suffix).ID
		}
		return dests[suffix]
	}
	d := e.deposit(p.account, 12_550)
	e.wantBooks(d.ID, creditOf(ledger.KindDeposit, ledger.Unmatched("USD"), w, "USD", 12_550))

	for _, c := range []struct {
		suffix string
		books  []posting
	}{
		{"12345", []posting{creditOf(ledger.KindIncoming, ledger.Clearing("ACH", "USD"), w, "USD", 2_500)}},
		{"12004", nil},
	} {
		var x wire.Transaction
		r := e.do("POST", "/transfer-in", transferInBody(destination(c.suffix), w, 2_500), nil)
		e.mustStatus(r, http.StatusCreated)
		r.decode(t, &x)
		e.settle()
		e.wantBooks(x.ID)
		e.clock.Advance(time.Minute)
		e.settle()
		if got := e.transaction(x.ID); got.PaymentRail != "ACH" {
			t.Fatalf("transfer-in %+v", got)
		}
		e.wantBooks(x.ID, c.books...)
	}

	fiat := e.fiatAccount(p)
	e.fund(fiat, 50_000)
	e.wantBooks(e.newestIncoming(fiat).ID, creditOf(ledger.KindFunding, ledger.Sandbox("USD"), fiat, "USD", 50_000))
	out := func(suffix string) wire.Transaction {
		t.Helper()
		r := e.do("POST", "/transfer-out", transferOutBody(fiat, destination(suffix), 4_000), nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		e.wantBooks(x.ID, holdOf(fiat, "USD", 4_000))
		return x
	}
	for _, c := range []struct {
		suffix, status string
		books          func(x wire.Transaction) []posting
	}{
		{"12345", "COMPLETED", func(x wire.Transaction) []posting {
			return []posting{holdOf(fiat, "USD", 4_000), postOf(fiat, x, 0, 0)}
		}},
		{"12002", "FAILED", func(wire.Transaction) []posting {
			return []posting{holdOf(fiat, "USD", 4_000), voidOf(fiat, "USD", 4_000, 0)}
		}},
	} {
		x := out(c.suffix)
		e.settle()
		e.clock.Advance(time.Minute)
		e.settle()
		if x = e.transaction(x.ID); x.Status != c.status {
			t.Fatalf("transfer-out to %s: %s", c.suffix, x.Status)
		}
		e.wantBooks(x.ID, c.books(x)...)
	}
	for _, processing := range []bool{false, true} {
		x := out("12345")
		if processing {
			e.settle()
		}
		e.mustStatus(e.cancel(x.ID, nil), http.StatusOK)
		e.wantBooks(x.ID, holdOf(fiat, "USD", 4_000), voidOf(fiat, "USD", 4_000, 0))
	}
	balances(t, e.account(fiat), 46_000, 46_000)
}

// TestBooksOfIncomingUma: an approved incoming UMA payment is credited
// from the network's clearing in the received currency, when it completes;
// a rejected one, and one paid to an external account, write nothing.
func TestBooksOfIncomingUma(t *testing.T) { onBothStores(t, testBooksOfIncomingUma) }

func testBooksOfIncomingUma(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("books-uma@example.com", 0)
	w := p.account.ID
	credit := func(x wire.Transaction) posting {
		return creditOf(ledger.KindIncoming, ledger.Clearing(x.PaymentRail, "USD"), w, "USD", x.ReceivedAmount.Amount)
	}

	x := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 1_500))
	e.wantBooks(x.ID)
	e.mustStatus(e.do("POST", "/transactions/"+x.ID+"/approve", nil, nil), http.StatusOK)
	e.wantBooks(x.ID, credit(e.transaction(x.ID)))

	long := e.umaIn(umaReceive(p.customer.ID, "$pending.long.usd@sandbox.uma.money", 300))
	e.mustStatus(e.do("POST", "/transactions/"+long.ID+"/approve", nil, nil), http.StatusOK)
	e.wantBooks(long.ID)
	e.clock.Advance(e.cfg.LongPaymentDelay)
	e.settle()
	if got := e.transaction(long.ID); got.Status != "COMPLETED" {
		t.Fatalf("long payment %s", got.Status)
	}
	e.wantBooks(long.ID, credit(e.transaction(long.ID)))

	rejected := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 900))
	e.mustStatus(e.do("POST", "/transactions/"+rejected.ID+"/reject", nil, nil), http.StatusOK)
	e.wantBooks(rejected.ID)

	body := usdBody(p.customer.ID, "000000000001")
	body["defaultUmaDepositAccount"] = true
	e.createAccount(body)
	e.verify()
	outside := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 400))
	e.mustStatus(e.do("POST", "/transactions/"+outside.ID+"/approve", nil, nil), http.StatusOK)
	e.wantBooks(outside.ID)
	balances(t, e.account(w), 1_800, 1_800)
}

// TestBooksOfRealtimeFunding: a just-in-time funded quote moves no wallet:
// nothing when its funds arrive (sandbox send or a recorded deposit), the
// TRANSIT from the deposits received to the rail's clearing when its
// payout completes, nothing when the payout fails.
func TestBooksOfRealtimeFunding(t *testing.T) { onBothStores(t, testBooksOfRealtimeFunding) }

func testBooksOfRealtimeFunding(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox, func(c *Config) { c.SettlementDelay = time.Second })...)
	p := e.newPayer("books-rt@example.com", 0)
	paid := func(dest string, fund func(q wire.Quote)) (wire.Transaction, int64) {
		t.Helper()
		q := e.quote(realtimeBody(p, "USD", dest, "SENDING", 10_000))
		fund(q)
		e.wantBooks(q.TransactionID)
		e.clock.Advance(time.Second)
		e.settle()
		return e.transaction(q.TransactionID), q.FeesIncluded
	}
	send := func(q wire.Quote) {
		e.mustStatus(e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"}), http.StatusOK)
	}
	x, fee := paid(e.destination(p, "12345").ID, send)
	if x.Status != "COMPLETED" {
		t.Fatalf("payout %s", x.Status)
	}
	e.wantBooks(x.ID, transitOf(x, fee))

	deposited := 0
	x, fee = paid(e.destination(p, "23456").ID, func(q wire.Quote) {
		deposited++
		amount := q.TotalSendingAmount
		if _, err := e.svc.RecordDeposit(context.Background(), payments.DepositRequest{Reference: fundingReferenceOf(t, q),
			Amount: &amount, Currency: "USD", BankReference: fmt.Sprintf("RT-BOOKS-%d", deposited)}); err != nil {
			t.Fatal(err)
		}
	})
	e.wantBooks(x.ID, transitOf(x, fee))

	x, _ = paid(e.destination(p, "12002").ID, send)
	if x.Status != "FAILED" {
		t.Fatalf("failed payout %s", x.Status)
	}
	e.wantBooks(x.ID)
	balances(t, e.account(p.account.ID), 0, 0)
}
