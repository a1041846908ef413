package soak

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
)

// The checks after a round, on the quiet database. What the service
// answered (the world) against what the books say:
//
//   - every request repeated under one Idempotency-Key got the same answer;
//   - no quote was executed by two requests;
//   - every transaction in the books was made by an acknowledged request
//     (fundings and deposits, whose answers name no transaction or may
//     have been lost, by count, amount and bank reference), and every
//     acknowledged one is there exactly once;
//   - each has the status its outcome and acknowledgements call for, and
//     exactly the ledger transactions that status requires (a HOLD and its
//     POST for a payment that left, a VOID for one that did not, a RETURN
//     for one that came back, a HOLD alone for money stuck in flight, …),
//     each moving the acknowledged amount;
//   - every ledger transaction balances, and the chain over all of them
//     (seq 1 … head, every one sealed, none unaccounted for) links up to
//     the head;
//   - the balances: every currency sums to zero over all accounts; each
//     wallet's available and held columns equal its ledger accounts and
//     its statement, and are not negative; and every account of the books
//     is at what the acknowledged requests and their outcomes put there:
//     money in (the sandbox's fundings, the deposits received, the rails'
//     transfers-in) equals, per currency, the wallets' balances plus money
//     out (the rails' clearing of completed payments and transfers-out,
//     the fees, the exchange), account by account. Each wallet holds what
//     came in minus what left, and holds back exactly the payments stuck
//     in flight.
func (w *world) check(ctx context.Context, st *sqlstore.DB, rep *Report) {
	for _, err := range w.c.inconsistentKeys() {
		w.problem("%v", err)
	}
	books, err := readBooks(ctx, st)
	if err != nil {
		w.problem("read the books: %v", err)
		return
	}
	rep.LedgerTransactions = len(books.ledger)
	rep.Payments, rep.Transfers, rep.Fundings, rep.Deposits = len(w.payments), len(w.transfers), len(w.fundings), len(w.deposits)

	wallets := map[string]*walletExpect{}
	walletOf := func(id string) *walletExpect {
		if wallets[id] == nil {
			wallets[id] = &walletExpect{}
		}
		return wallets[id]
	}
	for _, c := range w.customers {
		walletOf(c.wallet)
	}
	seen := map[string]bool{} // transactions accounted for
	flows := balances{}

	for _, p := range w.payments {
		if len(p.winners) > 0 {
			rep.Executed++
		}
		seen[p.txID] = true
		w.checkPayment(p, books, walletOf, flows)
	}
	for _, t := range w.transfers {
		if seen[t.txID] {
			w.problem("transfer %s was answered to two requests", t.txID)
		}
		seen[t.txID] = true
		w.checkTransfer(t, books, walletOf(t.wallet), flows)
	}

	// Fundings and deposits: the answers name no transaction (or were
	// lost), so they are matched by wallet, amount and bank reference.
	fundings := map[string][]int64{}
	for _, f := range w.fundings {
		fundings[f.wallet] = append(fundings[f.wallet], f.amount)
		walletOf(f.wallet).total += f.amount
		flows.add(ledger.Sandbox("USD"), "USD", -f.amount)
	}
	deposits := map[string]*deposit{}
	for _, d := range w.deposits {
		deposits[d.bankRef] = d
		walletOf(d.wallet).total += d.amount
		flows.add(ledger.Unmatched("USD"), "USD", -d.amount)
	}
	foundFundings := map[string][]int64{}
	foundDeposits := map[string]int{}
	for _, x := range books.txs {
		if seen[x.ID] {
			continue
		}
		switch d := deposits[x.Reference]; {
		case x.Description == "Sandbox funding" && x.Type == "INCOMING":
			foundFundings[x.DestinationAccountID] = append(foundFundings[x.DestinationAccountID], x.SentAmount)
			w.expectLedger(x.ID, "funding", books, moves(ledger.KindFunding, x.DestinationAccountID, x.SentAmount, 0))
		case d != nil:
			foundDeposits[x.Reference]++
			if d.txID != "" && d.txID != x.ID {
				w.problem("deposit %s: answered as %s, but %s is in the books too", d.bankRef, d.txID, x.ID)
			}
			if x.DestinationAccountID != d.wallet || x.SentAmount != d.amount || x.Status != "COMPLETED" {
				w.problem("deposit %s: %s to %s of %d, status %s; sent %d to %s", d.bankRef, x.ID, x.DestinationAccountID, x.SentAmount, x.Status, d.amount, d.wallet)
			}
			w.expectLedger(x.ID, "deposit "+d.bankRef, books, moves(ledger.KindDeposit, d.wallet, d.amount, 0))
		default:
			w.problem("transaction %s (%s %s %d %s, %q) is in the books, but no acknowledged request made it", x.ID, x.Type, x.Status, x.SentAmount, x.SendingCurrency, x.Description)
		}
	}
	for wallet, want := range fundings {
		got := foundFundings[wallet]
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			w.problem("wallet %s: %d fundings acknowledged %v, %d in the books %v", wallet, len(want), want, len(got), got)
		}
	}
	for wallet, got := range foundFundings {
		if _, ok := fundings[wallet]; !ok {
			w.problem("wallet %s: fundings %v in the books, none acknowledged", wallet, got)
		}
	}
	for ref, d := range deposits {
		if n := foundDeposits[ref]; n != 1 {
			w.problem("deposit %s (%d to %s) is in the books %d times", ref, d.amount, d.wallet, n)
		}
	}

	w.checkChain(books)
	w.checkBalances(books, wallets, flows)
}

// books is everything the checks read, in one snapshot.
type books struct {
	txs      []store.Transaction
	byID     map[string]*store.Transaction
	ledger   map[string]*ledger.Transaction   // by id, with its place in the chain
	of       map[string][]*ledger.Transaction // by payment, oldest first
	head     ledger.Head
	balances []store.LedgerBalance
	accounts map[string]*store.InternalAccount
	entries  map[string][]store.LedgerEntry // by wallet
}

func readBooks(ctx context.Context, st *sqlstore.DB) (*books, error) {
	b := &books{byID: map[string]*store.Transaction{}, ledger: map[string]*ledger.Transaction{},
		of: map[string][]*ledger.Transaction{}, accounts: map[string]*store.InternalAccount{}, entries: map[string][]store.LedgerEntry{}}
	err := st.Tx(ctx, func(tx store.Tx) error {
		var err error
		if b.txs, err = store.AllPages(func(cursor string) (store.Page[store.Transaction], error) {
			return tx.ListTransactions(ctx, store.TransactionFilter{Limit: 200, Cursor: cursor})
		}); err != nil {
			return err
		}
		for i := range b.txs {
			x := &b.txs[i]
			b.byID[x.ID] = x
			lts, err := tx.LedgerTransactionsOf(ctx, x.ID)
			if err != nil {
				return err
			}
			for j := range lts {
				// Read again for the place in the chain.
				lt, err := tx.GetLedgerTransaction(ctx, lts[j].ID)
				if err != nil {
					return err
				}
				b.ledger[lt.ID] = lt
				b.of[x.ID] = append(b.of[x.ID], lt)
			}
		}
		if b.head, err = tx.LedgerHead(ctx); err != nil {
			return err
		}
		if b.balances, err = tx.LedgerBalances(ctx); err != nil {
			return err
		}
		accounts, err := store.AllPages(func(cursor string) (store.Page[store.InternalAccount], error) {
			return tx.ListInternalAccounts(ctx, store.InternalAccountFilter{Limit: 200, Cursor: cursor})
		})
		if err != nil {
			return err
		}
		for i := range accounts {
			a := &accounts[i]
			b.accounts[a.ID] = a
			if b.entries[a.ID], err = store.AllPages(func(cursor string) (store.Page[store.LedgerEntry], error) {
				return tx.ListLedgerEntries(ctx, store.LedgerEntryFilter{Wallet: a.ID, Limit: 500, Cursor: cursor})
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return b, err
}

// walletExpect is what a wallet must hold at the end.
type walletExpect struct {
	total, held int64
}

// move is a ledger transaction a payment must have: its kind, and what it
// moves on the wallet (none for a payment that touches no wallet).
type move struct {
	kind            ledger.Kind
	wallet          string
	available, held int64
}

func moves(kind ledger.Kind, wallet string, available, held int64) []move {
	return []move{{kind: kind, wallet: wallet, available: available, held: held}}
}

// paymentFinal is the status and ledger transactions of a payment of
// amount from wallet, executed once, whose destination has the outcome.
func paymentFinal(outcome, wallet string, amount int64) (status, reason string, ms []move) {
	hold := move{kind: ledger.KindHold, wallet: wallet, available: -amount, held: amount}
	post := move{kind: ledger.KindPost, wallet: wallet, held: -amount}
	void := move{kind: ledger.KindVoid, wallet: wallet, available: amount, held: -amount}
	switch outcome {
	case failed2:
		return "FAILED", "QUOTE_EXECUTION_FAILED", []move{hold, void}
	case failed4:
		return "FAILED", "OFFRAMP_FAILED", []move{hold, void}
	case return5:
		return "REFUNDED", "OFFRAMP_FAILED", []move{hold, post, {kind: ledger.KindReturn, wallet: wallet, available: amount}}
	case reject6:
		return "REJECTED", "", []move{hold, void}
	case stuck7:
		return "FAILED", "OFFRAMP_FAILED", []move{hold}
	}
	return "COMPLETED", "", []move{hold, post}
}

func (w *world) checkPayment(p *payment, b *books, walletOf func(string) *walletExpect, flows balances) {
	what := fmt.Sprintf("payment %s (quote %s, %s, outcome %q, %d USD)", p.txID, p.quoteID, p.by, p.outcome, p.total)
	x := b.byID[p.txID]
	if x == nil {
		w.problem("%s: not in the books", what)
		return
	}
	switch len(p.winners) {
	case 0:
		if x.Status != "PENDING" && x.Status != "EXPIRED" {
			w.problem("%s: no execute was acknowledged (refusals: %s), yet it is %s", what, strings.Join(p.refusals, "; "), x.Status)
		}
		w.expectLedger(p.txID, what, b, nil)
		return
	case 1:
	default:
		w.problem("%s: executed by %d requests: %s", what, len(p.winners), strings.Join(p.winners, "; "))
	}
	status, reason, ms := paymentFinal(p.outcome, p.wallet, p.total)
	if p.realtime {
		// No wallet moves: a payment that left passed through (TRANSIT)
		// with the money that came in for it.
		ms = nil
		if status == "COMPLETED" || status == "REFUNDED" {
			ms = []move{{kind: ledger.KindTransit}}
			flows.add(ledger.Unmatched("USD"), "USD", -p.total)
			flows.payout("USD", p.total, p.fee, p.rail, p.receiving, p.received)
		}
	}
	if x.Status != status || x.FailureReason != reason {
		w.problem("%s: executed (%s), ends %s %q, want %s %q", what, p.winners[0], x.Status, x.FailureReason, status, reason)
	}
	if x.SentAmount != p.total || x.ReceivedAmount != p.received || x.ReceivingCurrency != p.receiving {
		w.problem("%s: the books say %d USD -> %d %s, the quote said %d -> %d %s", what, x.SentAmount, x.ReceivedAmount, x.ReceivingCurrency, p.total, p.received, p.receiving)
	}
	w.expectLedger(p.txID, what, b, ms)
	if p.realtime {
		return
	}
	e := walletOf(p.wallet)
	switch status {
	case "COMPLETED":
		e.total -= p.total
		flows.payout("USD", p.total, p.fee, p.rail, p.receiving, p.received)
	case "FAILED":
		if p.outcome == stuck7 {
			e.held += p.total
		}
	}
}

// transferFinal is the status and failure reason of a transfer to or from
// an account with the outcome, when nothing cancelled it.
func transferFinal(in bool, outcome string) (string, string) {
	switch {
	case outcome == ok || outcome == reject6:
		return "COMPLETED", ""
	case in && outcome == failed4:
		return "FAILED", "COMPLIANCE_REJECTED"
	case in:
		return "FAILED", "COLLECTION_FAILED"
	case outcome == failed2:
		return "FAILED", "QUOTE_EXECUTION_FAILED"
	case outcome == closed3:
		return "FAILED", "ACCOUNT_INVALID"
	}
	return "FAILED", "COMPLIANCE_REJECTED"
}

func (w *world) checkTransfer(t *transfer, b *books, e *walletExpect, flows balances) {
	dir := "out"
	if t.in {
		dir = "in"
	}
	what := fmt.Sprintf("transfer-%s %s (outcome %q, %d USD, cancel tried %v, cancelled %v)", dir, t.txID, t.outcome, t.amount, t.cancelTried, t.cancelled)
	x := b.byID[t.txID]
	if x == nil {
		w.problem("%s: not in the books", what)
		return
	}
	status, reason := transferFinal(t.in, t.outcome)
	// A cancel acknowledged, or one whose answer was lost and whose retry
	// found the transfer cancelled, ends it FAILED without a reason.
	cancelled := x.Status == "FAILED" && x.FailureReason == ""
	switch {
	case t.cancelled && !cancelled:
		w.problem("%s: the cancel was acknowledged, yet it is %s %q", what, x.Status, x.FailureReason)
	case cancelled && !t.cancelTried:
		w.problem("%s: nobody cancelled it, yet it is FAILED without a reason", what)
	case !cancelled && (x.Status != status || x.FailureReason != reason):
		w.problem("%s: ends %s %q, want %s %q", what, x.Status, x.FailureReason, status, reason)
	}
	if x.SentAmount != t.amount || (t.in && x.DestinationAccountID != t.wallet) || (!t.in && x.SourceAccountID != t.wallet) {
		w.problem("%s: the books say %d between %s and %s", what, x.SentAmount, x.SourceAccountID, x.DestinationAccountID)
	}
	completed := x.Status == "COMPLETED"
	var ms []move
	switch {
	case t.in && completed:
		ms = moves(ledger.KindIncoming, t.wallet, t.amount, 0)
		e.total += t.amount
		flows.add(ledger.Clearing(t.rail, "USD"), "USD", -t.amount)
	case t.in:
	case completed:
		ms = []move{{kind: ledger.KindHold, wallet: t.wallet, available: -t.amount, held: t.amount}, {kind: ledger.KindPost, wallet: t.wallet, held: -t.amount}}
		e.total -= t.amount
		flows.payout("USD", t.amount, 0, t.rail, "USD", t.amount)
	default:
		ms = []move{{kind: ledger.KindHold, wallet: t.wallet, available: -t.amount, held: t.amount}, {kind: ledger.KindVoid, wallet: t.wallet, available: t.amount, held: -t.amount}}
	}
	w.expectLedger(t.txID, what, b, ms)
}

// expectLedger checks that the payment id has exactly the ledger
// transactions ms, in order, each balanced and moving what it says on the
// wallet, and a POST or VOID resolving the payment's HOLD.
func (w *world) expectLedger(id, what string, b *books, ms []move) {
	lts := b.of[id]
	var kinds, want []string
	for _, lt := range lts {
		kinds = append(kinds, string(lt.Kind))
	}
	for _, m := range ms {
		want = append(want, string(m.kind))
	}
	if !slices.Equal(kinds, want) {
		w.problem("%s: ledger transactions %v, want %v", what, kinds, want)
		return
	}
	var hold string
	for i, lt := range lts {
		if err := lt.Check(); err != nil {
			w.problem("%s: %v", what, err)
		}
		var got ledger.WalletMove
		for _, mv := range lt.WalletMoves() {
			got = mv
		}
		m := ms[i]
		if len(lt.WalletMoves()) > 1 || (m.wallet == "" && got.Wallet != "") || (m.wallet != "" &&
			(got.Wallet != m.wallet || got.Available != m.available || got.Held != m.held)) {
			w.problem("%s: %s %s moves %+v, want %s available %+d held %+d", what, lt.Kind, lt.ID, lt.WalletMoves(), m.wallet, m.available, m.held)
		}
		switch lt.Kind {
		case ledger.KindHold:
			hold = lt.ID
		case ledger.KindPost, ledger.KindVoid:
			if lt.PendingID != hold {
				w.problem("%s: %s %s resolves %q, not its HOLD %s", what, lt.Kind, lt.ID, lt.PendingID, hold)
			}
		}
	}
}

// checkChain recomputes the chain over every ledger transaction of the
// books' transactions: they must be all of the chain, every one sealed,
// with links that lead to the head.
func (w *world) checkChain(b *books) {
	bySeq := make([]*ledger.Transaction, len(b.ledger))
	for _, lt := range b.ledger {
		switch {
		case lt.Seq < 1 || lt.Seq > int64(len(bySeq)):
			w.problem("ledger transaction %s has seq %d, outside 1…%d (every one of the round's, and only those, must be sealed)", lt.ID, lt.Seq, len(bySeq))
			return
		case bySeq[lt.Seq-1] != nil:
			w.problem("ledger transactions %s and %s both have seq %d", bySeq[lt.Seq-1].ID, lt.ID, lt.Seq)
			return
		}
		bySeq[lt.Seq-1] = lt
	}
	if b.head.Seq != int64(len(bySeq)) {
		w.problem("the chain's head is at seq %d, the round's transactions have %d ledger transactions", b.head.Seq, len(bySeq))
	}
	var link ledger.Hash
	for i, lt := range bySeq {
		link = ledger.Link(link, int64(i+1), ledger.BodyHash(lt))
		if link != lt.Link {
			w.problem("the chain breaks at seq %d (%s): link %s, recomputed %s from %+v", i+1, lt.ID, lt.Link, link, *lt)
			return
		}
	}
	if len(bySeq) > 0 && link != b.head.Hash {
		w.problem("the chain's head %s is not its last link %s", b.head.Hash, link)
	}
}

// balances are expected balances of the books' accounts.
type balances map[balanceKey]int64

type balanceKey struct {
	account  ledger.Account
	currency string
}

func (b balances) add(a ledger.Account, currency string, amount int64) {
	b[balanceKey{a, currency}] += amount
}

// payout is where a payment's money goes once it has left: the fee is
// earned, the rest exchanged into what the destination receives on the
// rail.
func (b balances) payout(currency string, sent, fee int64, rail, receiving string, received int64) {
	b.add(ledger.Fees(currency), currency, fee)
	b.add(ledger.FX(currency), currency, sent-fee)
	b.add(ledger.FX(receiving), receiving, -received)
	b.add(ledger.Clearing(rail, receiving), receiving, received)
}

// checkBalances compares the balances with the money the world saw come
// and go: the wallets' in detail, then every account of the books.
func (w *world) checkBalances(b *books, wallets map[string]*walletExpect, flows balances) {
	sums := map[string]int64{}
	side := map[ledger.Account]int64{}
	got := balances{}
	for _, bal := range b.balances {
		sums[bal.Currency] += bal.Balance
		side[bal.Account] = bal.Balance
		got.add(bal.Account, bal.Currency, bal.Balance)
	}
	for cur, s := range sums {
		if s != 0 {
			w.problem("the books' accounts sum to %d in %s, not zero", s, cur)
		}
	}
	for id, a := range b.accounts {
		avail, held := side[ledger.WalletAccount(id, ledger.Available)], side[ledger.WalletAccount(id, ledger.Held)]
		if a.Available != avail || a.Held != held {
			w.problem("wallet %s: available %d held %d, its ledger accounts %d and %d", id, a.Available, a.Held, avail, held)
		}
		if a.Available < 0 || a.Held < 0 {
			w.problem("wallet %s is overdrawn: available %d held %d", id, a.Available, a.Held)
		}
		var entries [2]int64
		for _, e := range b.entries[id] {
			if b.ledger[e.LedgerTransactionID] == nil {
				w.problem("wallet %s: entry %s belongs to ledger transaction %s of no transaction in the books", id, e.ID, e.LedgerTransactionID)
			}
			if _, s, _ := e.Account.Wallet(); s == ledger.Held {
				entries[1] += e.Amount
			} else {
				entries[0] += e.Amount
			}
		}
		if entries != [2]int64{a.Available, a.Held} {
			w.problem("wallet %s: its statement sums to available %d held %d, its balances are %d and %d", id, entries[0], entries[1], a.Available, a.Held)
		}
		e := wallets[id]
		if e == nil {
			e = &walletExpect{} // not the round's (a platform account): nothing moved it
		}
		if a.Available+a.Held != e.total || a.Held != e.held {
			w.problem("wallet %s: holds %d (held %d); in minus out says %d (held %d)", id, a.Available+a.Held, a.Held, e.total, e.held)
		}
		flows.add(ledger.WalletAccount(id, ledger.Available), a.Currency, e.total-e.held)
		flows.add(ledger.WalletAccount(id, ledger.Held), a.Currency, e.held)
	}
	for k := range got {
		flows[k] += 0 // every account of the books is compared, expected or not
	}
	for k, want := range flows {
		if got[k] != want {
			w.problem("account %s is at %d %s; the acknowledged requests put %d there", k.account, got[k], k.currency, want)
		}
	}
}
