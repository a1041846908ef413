package ledger

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// world builds books the way the service writes them: payments, their
// ledger transactions (posted with the wallets' balances after each), the
// first ones sealed into the chain and the rest waiting in the queue.
type world struct {
	t       *testing.T
	opened  time.Time
	clock   time.Time
	n       int
	pays    []Payment
	txs     []*Transaction
	wallets map[string]*walletRow
	names   map[string]string // a name the tests use → the id
}

func newWorld(t *testing.T) *world {
	opened := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &world{t: t, opened: opened, clock: opened, wallets: map[string]*walletRow{}, names: map[string]string{}}
}

// id makes a "prefix:<uuid>" id; ids sort in the order they are made, as
// the service's time-ordered ones do.
func (w *world) id(prefix string) string {
	w.n++
	return fmt.Sprintf("%s:%08x-0000-7000-8000-%012x", prefix, w.n, w.n)
}

func (w *world) tick() time.Time {
	w.clock = w.clock.Add(time.Second)
	return w.clock
}

func (w *world) wallet(name string) string {
	id := w.id("InternalAccount")
	w.wallets[id] = &walletRow{id: id, currency: "USD"}
	w.names[name] = id
	return id
}

// post writes lt as PostLedger does: the wallets move and their entries
// carry the balances after.
func (w *world) post(name string, lt *Transaction) *Transaction {
	w.t.Helper()
	if err := lt.Check(); err != nil {
		w.t.Fatal(err)
	}
	for _, m := range lt.WalletMoves() {
		wr := w.wallets[m.Wallet]
		wr.available += m.Available
		wr.held += m.Held
		for i := range lt.Entries {
			if id, _, ok := lt.Entries[i].Account.Wallet(); ok && id == m.Wallet {
				lt.Entries[i].AvailableAfter, lt.Entries[i].HeldAfter = wr.available, wr.held
			}
		}
	}
	w.txs = append(w.txs, lt)
	if name != "" {
		w.names[name] = lt.ID
	}
	return lt
}

func (w *world) payment(name string, p Payment) *Payment {
	p.ID = w.id("Transaction")
	if p.CreatedAt.IsZero() {
		p.CreatedAt = w.tick()
	}
	w.pays = append(w.pays, p)
	w.names[name] = p.ID
	return &w.pays[len(w.pays)-1]
}

// quote is an executed quote's payment from wallet: sent USD, received
// MXN over SPEI, fee of it earned.
func (w *world) quote(name, wallet, status, outcome string) *Payment {
	return w.payment(name, Payment{QuoteID: w.id("Quote"), Type: "OUTGOING", Status: status, Outcome: outcome,
		SourceAccountID: wallet, DestinationAccountID: w.id("ExternalAccount"), SendingCurrency: "USD",
		ReceivingCurrency: "MXN", SentAmount: 3000, ReceivedAmount: 51000, PaymentRail: "SPEI"})
}

func (w *world) hold(name string, p *Payment) *Transaction {
	return w.post(name, HoldFor(w.id("LedgerTransaction"), w.tick(), "Payment on its way", p.SourceAccountID,
		p.SendingCurrency, p.SentAmount).For(p.ID, p.QuoteID))
}

func (w *world) payout(name string, p *Payment, hold *Transaction) *Transaction {
	lt := Payout(w.id("LedgerTransaction"), w.tick(), "Payment sent", p.SourceAccountID, p.SendingCurrency, p.SentAmount,
		100, p.PaymentRail, p.ReceivingCurrency, p.ReceivedAmount).For(p.ID, p.QuoteID)
	if hold != nil {
		lt.Resolving(hold.ID)
	}
	return w.post(name, lt)
}

func (w *world) void(name string, p *Payment, hold *Transaction) *Transaction {
	return w.post(name, VoidOf(w.id("LedgerTransaction"), w.tick(), "Payment failed, money back", p.SourceAccountID,
		p.SendingCurrency, p.SentAmount).For(p.ID, p.QuoteID).Resolving(hold.ID))
}

func (w *world) credit(name string, kind Kind, from Account, p *Payment) *Transaction {
	return w.post(name, New(w.id("LedgerTransaction"), kind, w.tick(), "Credit").For(p.ID, p.QuoteID).
		Move(from, p.SendingCurrency, p.SentAmount, WalletAccount(p.DestinationAccountID, Available), p.ReceivingCurrency, p.ReceivedAmount))
}

// standard is every kind of payment the service makes, each in the
// statuses that move money, on three wallets: w1 funded in the sandbox,
// w2 credited from outside, w3 with an opening balance and a payment made
// before the books opened.
func standard(t *testing.T) *world {
	w := newWorld(t)
	w1, w2, w3 := w.wallet("w1"), w.wallet("w2"), w.wallet("w3")

	// Before the books: w3 had 5000, 3000 of it held for a payment
	// executed then, which completes after the books opened.
	old := w.payment("old", Payment{QuoteID: w.id("Quote"), Type: "OUTGOING", Status: "COMPLETED",
		SourceAccountID: w3, DestinationAccountID: w.id("ExternalAccount"), SendingCurrency: "USD",
		ReceivingCurrency: "MXN", SentAmount: 3000, ReceivedAmount: 51000, PaymentRail: "SPEI",
		CreatedAt: w.opened.Add(-time.Hour)})
	w.post("opening", New(txPrefix+strings.TrimPrefix(w3, "InternalAccount:"), KindOpening, w.opened, "Opening balance").
		Add(Opening("USD"), "USD", -5000).Add(WalletAccount(w3, Available), "USD", 2000).Add(WalletAccount(w3, Held), "USD", 3000))

	fund := w.payment("funding", Payment{Type: "INCOMING", Status: "COMPLETED", DestinationAccountID: w1,
		SendingCurrency: "USD", ReceivingCurrency: "USD", SentAmount: 100000, ReceivedAmount: 100000})
	w.credit("funded", KindFunding, Sandbox("USD"), fund)

	done := w.quote("completed", w1, "COMPLETED", "")
	h := w.hold("completed.hold", done)
	w.payout("completed.post", done, h)

	failed := w.quote("failed", w1, "FAILED", "002")
	w.void("failed.void", failed, w.hold("failed.hold", failed))

	rejected := w.quote("rejected", w1, "REJECTED", "006")
	w.void("rejected.void", rejected, w.hold("rejected.hold", rejected))

	refunded := w.quote("refunded", w1, "REFUNDED", "005")
	post := w.payout("refunded.post", refunded, w.hold("refunded.hold", refunded))
	w.post("refunded.return", Reverse(w.id("LedgerTransaction"), w.tick(), "Payment returned", post))

	w.hold("processing.hold", w.quote("processing", w1, "PROCESSING", ""))
	w.hold("stuck.hold", w.quote("stuck", w1, "FAILED", "007"))
	w.quote("pending", w1, "PENDING", "")
	w.quote("expired", w1, "EXPIRED", "")

	w.payout("old.post", old, nil)

	out := w.payment("transfer-out", Payment{Type: "OUTGOING", Status: "COMPLETED", SourceAccountID: w1,
		DestinationAccountID: w.id("ExternalAccount"), SendingCurrency: "USD", ReceivingCurrency: "USD",
		SentAmount: 700, ReceivedAmount: 700, PaymentRail: "ACH"})
	w.payout("transfer-out.post", out, w.hold("transfer-out.hold", out))
	cancelled := w.payment("cancelled", Payment{Type: "OUTGOING", Status: "FAILED", SourceAccountID: w1,
		DestinationAccountID: w.id("ExternalAccount"), SendingCurrency: "USD", ReceivingCurrency: "USD",
		SentAmount: 900, ReceivedAmount: 900, PaymentRail: "ACH"})
	w.void("cancelled.void", cancelled, w.hold("cancelled.hold", cancelled))

	in := w.payment("transfer-in", Payment{Type: "INCOMING", Status: "COMPLETED", SourceAccountID: w.id("ExternalAccount"),
		DestinationAccountID: w2, SendingCurrency: "USD", ReceivingCurrency: "USD", SentAmount: 2500, ReceivedAmount: 2500,
		PaymentRail: "ACH"})
	w.credit("transfer-in.credit", KindIncoming, Clearing("ACH", "USD"), in)
	w.payment("transfer-in-failed", Payment{Type: "INCOMING", Status: "FAILED", SourceAccountID: w.id("ExternalAccount"),
		DestinationAccountID: w2, SendingCurrency: "USD", ReceivingCurrency: "USD", SentAmount: 2500, ReceivedAmount: 2500,
		PaymentRail: "ACH"})
	dep := w.payment("deposit", Payment{Type: "INCOMING", Status: "COMPLETED", DestinationAccountID: w2,
		SendingCurrency: "USD", ReceivingCurrency: "USD", SentAmount: 4000, ReceivedAmount: 4000, PaymentRail: "BANK_TRANSFER"})
	w.credit("deposit.credit", KindDeposit, Unmatched("USD"), dep)
	uma := w.payment("uma", Payment{Type: "INCOMING", Status: "COMPLETED", DestinationAccountID: w2,
		SendingCurrency: "EUR", ReceivingCurrency: "USD", ReceivedAmount: 1200, SenderUmaAddress: "$success.eur@sandbox.uma.money"})
	w.post("uma.credit", New(w.id("LedgerTransaction"), KindIncoming, w.tick(), "Payment received").For(uma.ID, "").
		Move(Clearing("", "USD"), "USD", 1200, WalletAccount(w2, Available), "USD", 1200))
	w.payment("uma-external", Payment{Type: "INCOMING", Status: "COMPLETED", DestinationAccountID: w.id("ExternalAccount"),
		SendingCurrency: "EUR", ReceivingCurrency: "USD", ReceivedAmount: 1200, SenderUmaAddress: "$success.eur@sandbox.uma.money"})

	jit := w.payment("funded-quote", Payment{QuoteID: w.id("Quote"), Type: "OUTGOING", Status: "COMPLETED",
		DestinationAccountID: w.id("ExternalAccount"), SendingCurrency: "USD", ReceivingCurrency: "MXN",
		SentAmount: 3000, ReceivedAmount: 51000, PaymentRail: "SPEI"})
	w.post("funded-quote.transit", New(w.id("LedgerTransaction"), KindTransit, w.tick(), "Payment passed through").
		For(jit.ID, jit.QuoteID).Add(Unmatched("USD"), "USD", -3000).Add(Fees("USD"), "USD", 100).
		Exchange("USD", 2900, "MXN", 51000).Add(Clearing("SPEI", "MXN"), "MXN", 51000))
	return w
}

type chainRow struct {
	seq  int64
	tx   string
	link Hash
	at   time.Time
}

// books is the rows of a database, as the store reads them.
type books struct {
	opts     VerifyOptions
	payments []Payment
	links    []chainRow
	queue    []string
	txs      []Transaction // headers, by id
	entries  []EntryRow    // by id
	wallets  []walletRow
}

// rows seals the first sealed transactions (in the order posted) at the
// clock's time and lays out every row.
func (w *world) rows(sealed int) *books {
	b := &books{opts: VerifyOptions{OpenedAt: w.opened}, payments: slices.Clone(w.pays)}
	var prev Hash
	for i, lt := range w.txs {
		if i >= sealed {
			b.queue = append(b.queue, lt.ID)
			continue
		}
		prev = Link(prev, int64(i+1), BodyHash(lt))
		b.links = append(b.links, chainRow{int64(i + 1), lt.ID, prev, w.clock})
	}
	for _, lt := range w.txs {
		b.add(lt)
	}
	for _, wr := range w.wallets {
		b.wallets = append(b.wallets, *wr)
	}
	b.sort()
	return b
}

func (b *books) sort() {
	slices.SortFunc(b.txs, func(x, y Transaction) int { return strings.Compare(x.ID, y.ID) })
	slices.SortFunc(b.entries, func(x, y EntryRow) int { return strings.Compare(x.ID, y.ID) })
}

// verify feeds the rows as a store reading chunk transactions at a time
// would (0: all of them, then all entries).
func (b *books) verify(chunk int) Report {
	v := NewVerifier(b.opts)
	for _, p := range b.payments {
		v.Payment(p)
	}
	for _, l := range b.links {
		v.Link(l.seq, l.tx, l.link, l.at)
	}
	for _, q := range b.queue {
		v.Queued(q)
	}
	if chunk <= 0 {
		chunk = len(b.txs) + 1
	}
	e := 0
	for i := 0; i < len(b.txs); i += chunk {
		last := b.txs[min(i+chunk, len(b.txs))-1].ID
		for j := i; j < min(i+chunk, len(b.txs)); j++ {
			v.Transaction(&b.txs[j])
		}
		bound := "LedgerEntry:" + strings.TrimPrefix(last, txPrefix) + "-\x7f"
		for ; e < len(b.entries) && b.entries[e].ID <= bound; e++ {
			v.Entry(&b.entries[e])
		}
	}
	for ; e < len(b.entries); e++ {
		v.Entry(&b.entries[e])
	}
	for _, wr := range b.wallets {
		v.Wallet(wr.id, wr.currency, wr.available, wr.held)
	}
	return v.Finish()
}

func (b *books) tx(id string) *Transaction {
	for i := range b.txs {
		if b.txs[i].ID == id {
			return &b.txs[i]
		}
	}
	panic("no transaction " + id)
}

func (b *books) entry(txID string, n int) *EntryRow {
	return &b.entries[b.entryAt(txID, n)]
}

func (b *books) entryAt(txID string, n int) int {
	id := "LedgerEntry:" + strings.TrimPrefix(txID, txPrefix) + "-" + fmt.Sprint(n)
	for i := range b.entries {
		if b.entries[i].ID == id {
			return i
		}
	}
	panic("no entry " + id)
}

func (b *books) wallet(id string) *walletRow {
	for i := range b.wallets {
		if b.wallets[i].id == id {
			return &b.wallets[i]
		}
	}
	panic("no wallet " + id)
}

func (b *books) payment(id string) *Payment {
	for i := range b.payments {
		if b.payments[i].ID == id {
			return &b.payments[i]
		}
	}
	panic("no payment " + id)
}

func (b *books) seqOf(txID string) int {
	for i, l := range b.links {
		if l.tx == txID {
			return i
		}
	}
	panic("not chained: " + txID)
}

// deleteTx removes a ledger transaction with its entries, its chain row
// and its queue row.
func (b *books) deleteTx(id string) {
	b.txs = slices.DeleteFunc(b.txs, func(t Transaction) bool { return t.ID == id })
	b.entries = slices.DeleteFunc(b.entries, func(e EntryRow) bool { return e.LedgerTransactionID == id })
	b.links = slices.DeleteFunc(b.links, func(l chainRow) bool { return l.tx == id })
	b.queue = slices.DeleteFunc(b.queue, func(q string) bool { return q == id })
}

// add lays out the rows of a ledger transaction and its entries.
func (b *books) add(lt *Transaction) {
	h := *lt
	h.Entries = nil
	b.txs = append(b.txs, h)
	for n, e := range lt.Entries {
		wallet, _, _ := e.Account.Wallet()
		b.entries = append(b.entries, EntryRow{Entry: e, ID: "LedgerEntry:" + strings.TrimPrefix(lt.ID, txPrefix) + "-" + fmt.Sprint(n+1),
			LedgerTransactionID: lt.ID, N: int64(n + 1), WalletID: wallet, CreatedAt: lt.CreatedAt})
	}
}

// insert adds a forged ledger transaction (its entries with it).
func (b *books) insert(lt *Transaction) {
	b.add(lt)
	b.sort()
}

const sealedCount = 14 // of the standard world's 24 transactions

func TestVerifyClean(t *testing.T) {
	w := standard(t)
	for _, chunk := range []int{0, 1, 2, 5} {
		for _, sealed := range []int{0, sealedCount, len(w.txs)} {
			r := w.rows(sealed).verify(chunk)
			if err := r.Err(); err != nil {
				t.Fatalf("chunk %d, sealed %d: %v (%d problems: %v)", chunk, sealed, err, r.ProblemCount, r.Problems)
			}
			entries := 0
			for _, lt := range w.txs {
				entries += len(lt.Entries)
			}
			if r.Transactions != int64(len(w.txs)) || r.Entries != int64(entries) || r.Sealed != int64(sealed) ||
				r.Unsealed != int64(len(w.txs)-sealed) || r.Wallets != 3 || r.Payments+r.Exempt != int64(len(w.pays)) || r.Exempt != 1 {
				t.Fatalf("chunk %d, sealed %d: report %+v", chunk, sealed, r)
			}
			if sealed > 0 && (r.Head.Seq != int64(sealed) || r.Head.Hash != w.rows(sealed).links[sealed-1].link) {
				t.Fatalf("head %+v", r.Head)
			}
		}
	}
}

// TestVerifyTampered changes the books of the standard world as someone
// with access to the database could, one way per case, and wants the
// first problem to name the row.
func TestVerifyTampered(t *testing.T) {
	w := standard(t)
	id := func(name string) string {
		if s, ok := w.names[name]; ok {
			return s
		}
		panic("no " + name)
	}
	forged := func(kind Kind, at time.Time, payment string) *Transaction {
		lt := New("LedgerTransaction:ffffffff-0000-7000-8000-000000000001", kind, at, "Forged").
			Move(Sandbox("USD"), "USD", 50000, WalletAccount(id("w2"), Available), "USD", 50000)
		lt.TransactionID = payment
		lt.Entries[1].AvailableAfter = w.wallets[id("w2")].available + 50000
		return lt
	}
	cases := []struct {
		name        string
		tamper      func(b *books)
		table, row  string // the first problem's
		what        string // in its text
		alsoChunked bool
	}{
		{"amount changed in a sealed transaction's system legs", func(b *books) {
			// 100 more in fees, 100 less exchanged: balanced, the wallet's
			// move unchanged; only the chain sees it.
			post := id("completed.post")
			for i := range b.entries {
				if b.entries[i].LedgerTransactionID == post && b.entries[i].Account == Fees("USD") {
					b.entries[i].Amount += 100
				}
				if b.entries[i].LedgerTransactionID == post && b.entries[i].Account == FX("USD") {
					b.entries[i].Amount -= 100
				}
			}
		}, "ledger_transactions", id("completed.post"), "changed after it was sealed", true},
		{"amount changed on a wallet, balance fixed to match", func(b *books) {
			e := b.entry(id("funded"), 2)
			e.Amount += 50000
			b.entry(id("funded"), 1).Amount -= 50000
			b.wallet(id("w1")).available += 50000
		}, "ledger_transactions", id("funded"), "should move", false},
		{"amount changed on one leg", func(b *books) { b.entry(id("deposit.credit"), 2).Amount++ },
			"ledger_transactions", id("deposit.credit"), "sums to 1", false},
		{"entry deleted", func(b *books) {
			i := b.entryAt(id("completed.post"), 2)
			b.entries = slices.Delete(b.entries, i, i+1)
		}, "ledger_entries", "LedgerEntry:" + strings.TrimPrefix(id("completed.post"), txPrefix) + "-2", "missing", true},
		{"last entry deleted", func(b *books) {
			i := b.entryAt(id("completed.post"), 5) // the payout's clearing
			b.entries = slices.Delete(b.entries, i, i+1)
		}, "ledger_transactions", id("completed.post"), "MXN sums to -51000", false},
		{"sealed transaction deleted with its chain row", func(b *books) { b.deleteTx(id("failed.void")) },
			"ledger_chain", fmt.Sprintf("seq %d", w.rows(sealedCount).seqOf(id("failed.void"))+1), "missing", true},
		{"sealed transaction deleted, chain row kept", func(b *books) {
			tx := id("failed.void")
			b.txs = slices.DeleteFunc(b.txs, func(t Transaction) bool { return t.ID == tx })
			b.entries = slices.DeleteFunc(b.entries, func(e EntryRow) bool { return e.LedgerTransactionID == tx })
		}, "ledger_chain", fmt.Sprintf("seq %d", w.rows(sealedCount).seqOf(id("failed.void"))+1), "does not exist", false},
		{"unsealed transaction deleted, queue row kept", func(b *books) {
			tx := id("uma.credit")
			b.txs = slices.DeleteFunc(b.txs, func(t Transaction) bool { return t.ID == tx })
			b.entries = slices.DeleteFunc(b.entries, func(e EntryRow) bool { return e.LedgerTransactionID == tx })
		}, "ledger_unsealed", id("uma.credit"), "does not exist", false},
		{"forged transaction inserted, neither chained nor queued", func(b *books) {
			b.insert(forged(KindFunding, w.clock, id("funding")))
			b.wallet(id("w2")).available += 50000
		}, "ledger_transactions", "LedgerTransaction:ffffffff-0000-7000-8000-000000000001", "neither chained nor waiting", true},
		{"forged transaction queued, naming no payment", func(b *books) {
			b.insert(forged(KindFunding, w.clock, ""))
			b.queue = append(b.queue, "LedgerTransaction:ffffffff-0000-7000-8000-000000000001")
			b.wallet(id("w2")).available += 50000
		}, "ledger_transactions", "LedgerTransaction:ffffffff-0000-7000-8000-000000000001", "names no payment", false},
		{"forged transaction queued, naming a payment that does not exist", func(b *books) {
			b.insert(forged(KindFunding, w.clock, "Transaction:ffffffff-0000-7000-8000-000000000009"))
			b.queue = append(b.queue, "LedgerTransaction:ffffffff-0000-7000-8000-000000000001")
			b.wallet(id("w2")).available += 50000
		}, "ledger_transactions", "LedgerTransaction:ffffffff-0000-7000-8000-000000000001", "does not exist", false},
		{"forged transaction queued long after the last seal", func(b *books) {
			b.insert(forged(KindFunding, w.clock.Add(-time.Hour), id("funding")))
			b.queue = append(b.queue, "LedgerTransaction:ffffffff-0000-7000-8000-000000000001")
		}, "ledger_unsealed", "LedgerTransaction:ffffffff-0000-7000-8000-000000000001", "queued by hand", false},
		{"forged second credit of a funding, queued, balance fixed", func(b *books) {
			p := b.payment(id("funding"))
			lt := New("LedgerTransaction:ffffffff-0000-7000-8000-000000000001", KindFunding, w.clock, "Forged").For(p.ID, "").
				Move(Sandbox("USD"), "USD", p.ReceivedAmount, WalletAccount(p.DestinationAccountID, Available), "USD", p.ReceivedAmount)
			b.insert(lt)
			b.queue = append(b.queue, lt.ID)
			b.wallet(p.DestinationAccountID).available += p.ReceivedAmount
		}, "transactions", id("funding"), "has FUNDING, FUNDING", false},
		{"forged transaction with a forged chain row", func(b *books) {
			// A second credit of the funding, chained after the head.
			p := b.payment(id("funding"))
			lt := New("LedgerTransaction:ffffffff-0000-7000-8000-000000000001", KindFunding, w.clock, "Forged").For(p.ID, "").
				Move(Sandbox("USD"), "USD", p.ReceivedAmount, WalletAccount(p.DestinationAccountID, Available), "USD", p.ReceivedAmount)
			b.insert(lt)
			last := b.links[len(b.links)-1]
			last.seq++
			last.tx = lt.ID
			last.link[0] ^= 1
			b.links = append(b.links, last)
			b.wallet(p.DestinationAccountID).available += p.ReceivedAmount
		}, "ledger_chain", fmt.Sprintf("seq %d", sealedCount+1), "last link does not follow", false},
		{"cached balance changed", func(b *books) { b.wallet(id("w2")).available += 1 },
			"internal_accounts", id("w2"), "caches 7701 available", true},
		{"cached held balance changed", func(b *books) { b.wallet(id("w1")).held = 0 },
			"internal_accounts", id("w1"), "0 held", false},
		{"chain link changed", func(b *books) { b.links[3].link[5] ^= 0x80 },
			"ledger_chain", "seq 4", "the link was changed", true},
		{"chain link changed at the head", func(b *books) { b.links[len(b.links)-1].link[0] ^= 1 },
			"ledger_chain", fmt.Sprintf("seq %d", sealedCount), "last link does not follow", false},
		{"chain row deleted", func(b *books) { b.links = slices.Delete(b.links, 5, 6) },
			"ledger_chain", "seq 6", "missing", false},
		{"chained transaction queued again", func(b *books) { b.queue = append(b.queue, id("funded")) },
			"ledger_unsealed", id("funded"), "chained already", false},
		{"completed payout without its POST", func(b *books) { b.deleteTx(id("transfer-out.post")) },
			"transactions", id("transfer-out"), "needs HOLD, POST in the books; it has HOLD", false},
		{"completed status set by hand", func(b *books) { b.payment(id("processing")).Status = "COMPLETED" },
			"transactions", id("processing"), "needs HOLD, POST in the books; it has HOLD", false},
		{"failed with its hold left", func(b *books) { b.payment(id("stuck")).Outcome = "" },
			"transactions", id("stuck"), "needs HOLD, VOID in the books; it has HOLD", false},
		{"POST resolving no HOLD", func(b *books) { b.tx(id("transfer-out.post")).PendingID = "" },
			"ledger_transactions", id("transfer-out.post"), "resolves no HOLD", false},
		{"POST resolving another payment's HOLD", func(b *books) {
			b.tx(id("transfer-out.post")).PendingID = id("processing.hold")
		}, "ledger_transactions", id("transfer-out.post"), "not a HOLD of its payment", false},
		{"entry moved to another transaction", func(b *books) { b.entry(id("funded"), 1).LedgerTransactionID = id("opening") },
			"ledger_entries", b0(w).entry(id("funded"), 1).ID, "says it belongs to", false},
		{"entry's wallet changed", func(b *books) { b.entry(id("funded"), 2).WalletID = id("w2") },
			"ledger_entries", b0(w).entry(id("funded"), 2).ID, "names wallet", false},
		{"entry's date changed", func(b *books) { b.entry(id("funded"), 2).CreatedAt = w.opened },
			"ledger_entries", b0(w).entry(id("funded"), 2).ID, "dated", false},
		{"entry without its transaction", func(b *books) { b.txs = slices.Delete(b.txs, 0, 1) },
			"ledger_entries", b0(w).entries[0].ID, "does not exist", false},
		{"opening balance after the books opened", func(b *books) {
			b.insert(New("LedgerTransaction:ffffffff-0000-7000-8000-000000000001", KindOpening, w.clock, "Opening balance").
				Add(Opening("USD"), "USD", -10).Add(WalletAccount(id("w2"), Available), "USD", 10))
			b.queue = append(b.queue, "LedgerTransaction:ffffffff-0000-7000-8000-000000000001")
			b.wallet(id("w2")).available += 10
		}, "ledger_transactions", "LedgerTransaction:ffffffff-0000-7000-8000-000000000001", "the books opened at", false},
		{"opening balance of another wallet", func(b *books) {
			b.insert(New(txPrefix+strings.TrimPrefix(id("w3"), "InternalAccount:")[:35]+"f", KindOpening, w.opened, "Opening balance").
				Add(Opening("USD"), "USD", -10).Add(WalletAccount(id("w2"), Available), "USD", 10))
			b.queue = append(b.queue, txPrefix+strings.TrimPrefix(id("w3"), "InternalAccount:")[:35]+"f")
			b.wallet(id("w2")).available += 10
		}, "ledger_transactions", txPrefix + strings.TrimPrefix(w.names["w3"], "InternalAccount:")[:35] + "f", "an opening balance's id is its wallet's", false},
		{"books never opened", func(b *books) { b.opts.OpenedAt = time.Time{} },
			"settings", "ledger.opened_at", "missing", false},
		{"anchor differs", func(b *books) {
			b.opts.Anchor = &Anchor{Seq: 3, Hash: b.links[3].link}
		}, "ledger_chain", "seq 3", "differs from the anchor", false},
		{"anchor beyond the chain", func(b *books) {
			b.opts.Anchor = &Anchor{Seq: sealedCount + 1, Hash: b.links[0].link}
		}, "ledger_chain", fmt.Sprintf("seq %d", sealedCount+1), "the chain ends at seq 14", false},
		{"wallet side below zero", func(b *books) {
			// The funding is unsealed here: gone with its payment, and
			// the cached balance made to match, w1's spending leaves its
			// available side negative.
			b.deleteTx(id("funded"))
			b.payments = slices.DeleteFunc(b.payments, func(p Payment) bool { return p.ID == id("funding") })
			b.wallet(id("w1")).available -= 100000
		}, "ledger_entries", string(WalletAccount(id("w1"), Available)), "below zero", false},
		{"entries of a wallet that does not exist", func(b *books) {
			b.wallets = slices.DeleteFunc(b.wallets, func(r walletRow) bool { return r.id == id("w2") })
		}, "ledger_entries", string(WalletAccount(id("w2"), Available)), "does not exist", false},
		{"system account in another currency", func(b *books) {
			b.entry(id("funded"), 1).Account = Sandbox("EUR")
		}, "ledger_transactions", id("funded"), "is in EUR, not USD", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sealed := sealedCount
			if strings.Contains(c.name, "below zero") {
				sealed = 1 // the funding must be unsealed
			}
			chunks := []int{0}
			if c.alsoChunked {
				chunks = append(chunks, 1, 3)
			}
			for _, chunk := range chunks {
				b := w.rows(sealed)
				if sealed == 1 && strings.Contains(c.name, "below zero") {
					b.links = b.links[:1]
				}
				c.tamper(b)
				r := b.verify(chunk)
				err := r.Err()
				if err == nil {
					t.Fatalf("chunk %d: verified", chunk)
				}
				p := r.Problems[0]
				if p.Table != c.table || p.ID != c.row || !strings.Contains(p.What, c.what) {
					t.Fatalf("chunk %d: first problem %q (of %d: %v), want %s %s: …%s…", chunk, err, r.ProblemCount, r.Problems, c.table, c.row, c.what)
				}
			}
		})
	}
}

// b0 is the standard world's rows, untouched, for naming rows in cases.
func b0(w *world) *books { return w.rows(sealedCount) }

// TestVerifyAnchor: the head's own link and an earlier one both verify.
func TestVerifyAnchor(t *testing.T) {
	w := standard(t)
	for _, seq := range []int{1, 7, sealedCount} {
		b := w.rows(sealedCount)
		b.opts.Anchor = &Anchor{Seq: int64(seq), Hash: b.links[seq-1].link}
		if r := b.verify(0); r.Err() != nil {
			t.Fatalf("anchor at %d: %v", seq, r.Err())
		}
	}
}

// TestRules: each payment class has a rule for every status it can be in,
// and the classes come out of the payments the way the service makes them.
func TestRules(t *testing.T) {
	statuses := map[paymentClass][]string{
		classQuote:       {"PENDING", "EXPIRED", "PROCESSING", "COMPLETED", "REFUNDED", "FAILED", "REJECTED"},
		classFunded:      {"PENDING", "EXPIRED", "PROCESSING", "COMPLETED", "REFUNDED", "FAILED", "REJECTED"},
		classTransferOut: {"PENDING", "PROCESSING", "COMPLETED", "FAILED"},
		classTransferIn:  {"PENDING", "PROCESSING", "COMPLETED", "FAILED"},
		classDeposit:     {"COMPLETED"},
		classFunding:     {"COMPLETED"},
		classUMA:         {"PENDING", "PROCESSING", "COMPLETED", "FAILED", "REJECTED"},
		classUMAExternal: {"PENDING", "PROCESSING", "COMPLETED", "FAILED", "REJECTED"},
	}
	for c, ss := range statuses {
		for _, s := range ss {
			found := false
			for _, r := range rules {
				found = found || r.class == c && r.status == s && r.outcome == ""
			}
			if !found {
				t.Errorf("%s %s: no rule", c, s)
			}
		}
	}
	for _, c := range []struct {
		p    Payment
		want paymentClass
	}{
		{Payment{QuoteID: "Quote:1", Type: "OUTGOING", SourceAccountID: "InternalAccount:1"}, classQuote},
		{Payment{QuoteID: "Quote:1", Type: "OUTGOING"}, classFunded},
		{Payment{Type: "OUTGOING", SourceAccountID: "InternalAccount:1"}, classTransferOut},
		{Payment{Type: "INCOMING", SourceAccountID: "ExternalAccount:1", PaymentRail: "ACH"}, classTransferIn},
		{Payment{Type: "INCOMING", PaymentRail: "BANK_TRANSFER"}, classDeposit},
		{Payment{Type: "INCOMING"}, classFunding},
		{Payment{Type: "INCOMING", SenderUmaAddress: "$a@b", DestinationAccountID: "InternalAccount:1"}, classUMA},
		{Payment{Type: "INCOMING", SenderUmaAddress: "$a@b", DestinationAccountID: "ExternalAccount:1"}, classUMAExternal},
	} {
		if got := classOf(&c.p); got != c.want {
			t.Errorf("%+v: %s, want %s", c.p, got, c.want)
		}
	}
	for _, c := range []struct {
		status, outcome string
		want            []Kind
	}{
		{"FAILED", "007", hold}, {"FAILED", "002", holdVoid}, {"FAILED", "004", holdVoid}, {"REFUNDED", "005", holdPostReturn},
		{"COMPLETED", "005", holdPost}, {"COMPLETED", "003", holdPost}, {"REJECTED", "006", holdVoid},
	} {
		r, ok := ruleFor(&Payment{QuoteID: "Quote:1", SourceAccountID: "InternalAccount:1", Status: c.status, Outcome: c.outcome})
		if !ok || !slices.Equal(r.needs, c.want) {
			t.Errorf("%s %s: %v, want %v", c.status, c.outcome, r.needs, c.want)
		}
	}
}

// TestVerifierMisuse: a step fed after a later one is a programming error.
func TestVerifierMisuse(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	v := NewVerifier(VerifyOptions{OpenedAt: time.Now()})
	v.Wallet("InternalAccount:1", "USD", 0, 0)
	v.Payment(Payment{ID: "Transaction:1"})
}

// TestAppendCanonical: the verifier's reused buffer hashes as BodyHash
// does, and what was in the buffer before stays.
func TestAppendCanonical(t *testing.T) {
	w := standard(t)
	var buf []byte
	for _, lt := range w.txs {
		buf = AppendCanonical(append(buf[:0], "before"...), lt)
		if string(buf[:6]) != "before" || Hash(sha256.Sum256(buf[6:])) != BodyHash(lt) {
			t.Fatalf("%s: canonical form %q", lt.ID, buf)
		}
	}
}
