package load

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Service operations, in report order.
var serviceOps = []string{"create-external-account", "create-quote", "execute", "execute-hot-wallet", "settle", "get-transaction"}

// fundedAmount is what every wallet starts with (cents): far more than any
// run spends, so no execute is refused for funds.
const fundedAmount = 1_000_000_000_000

// quoteAmount is the SENDING amount of every quote (USD 10.00).
const quoteAmount = 1000

// RunService measures the service's throughput and latency, on SQLite and
// (when o.PostgresURL is set) on PostgreSQL, at each of o.Clients. Every
// request goes over loopback TCP with the platform Basic credential to a
// production-mode service whose workers run (the verifier, the settlement
// worker). Per store, after setting up one wallet per client plus one hot
// wallet (a real OTP login each, funded, with an ACTIVE USD destination):
//
//   - create-quote: POST /quotes {source: the client's wallet, destination:
//     its ACTIVE USD account, lockedCurrencySide SENDING, lockedCurrencyAmount
//     1000}; 201 with a PENDING quote carrying a payloadToSign.
//   - execute: POST /quotes/{id}/execute, no body, with
//     Service-Wallet-Signature (a stamp over the quote's payloadToSign by
//     the wallet's session key) and a fresh Idempotency-Key, as the wallet
//     page sends them; 200 with status PROCESSING. Each client executes the
//     quotes its own wallet got in the create-quote cell (topped up by half
//     again, untimed), each once; a client that runs out stops.
//   - execute-hot-wallet: the same, all clients executing quotes of one
//     wallet (made beforehand, untimed), so every execute updates one row.
//   - get-transaction: GET /transactions/{id} over the transactions just
//     executed; 200.
//   - create-external-account: POST /customers/external-accounts with a
//     valid USD or EUR account (alternating), each request a new account of
//     the client's customer; 201 (PENDING). Run last, because the verifier
//     then has thousands of accounts to work through in the background.
//
// After each execute cell the store is checked: every executed quote's
// transaction is PROCESSING (or COMPLETED, if the worker already settled
// it), every other one is still PENDING, and each wallet's available
// balance is exactly what was funded minus the executed amounts, which it
// would not be if a quote had been executed twice. A failed check counts
// as an error of the cell.
func RunService(ctx context.Context, o Options) ([]ServiceCell, error) {
	p, err := o.plan()
	if err != nil {
		return nil, err
	}
	if err := checkAccountBodies(); err != nil {
		return nil, err
	}
	var cells []ServiceCell
	for _, kind := range p.stores() {
		c, err := runService(ctx, p, kind)
		cells = append(cells, c...)
		if err != nil {
			return cells, fmt.Errorf("load: service on %s: %w", kind, err)
		}
	}
	return cells, nil
}

// payer is a funded wallet with a session key and an ACTIVE destination.
type payer struct {
	customer
	key       *walletcrypto.PrivateKey
	dest      string
	quoteBody []byte
	// spent is the total of the executes answered 200, which the
	// available balance must reflect exactly.
	spent atomic.Int64
}

// quoteItem is a quote made for an execute cell, with what the client
// prepared to execute it.
type quoteItem struct {
	payer          *payer
	id, tx         string
	payload        string
	amount         int64
	stamp, idemKey string
	executed       bool
}

func runService(ctx context.Context, p plan, kind string) (cells []ServiceCell, err error) {
	s, err := startStack(ctx, p, kind, "service")
	if err != nil {
		return nil, err
	}
	defer s.close()

	t0 := time.Now()
	maxC := slices.Max(p.clients)
	payers := make([]*payer, maxC+1)
	if err := parallel(ctx, len(payers), 8, func(ctx context.Context, i int) error {
		py, err := s.newPayer(ctx, fmt.Sprintf("payer%d", i))
		payers[i] = py
		return err
	}); err != nil {
		return nil, err
	}
	hot := payers[maxC]
	dests := make([]string, len(payers))
	for i, py := range payers {
		dests[i] = py.dest
	}
	if err := s.waitActive(ctx, dests); err != nil {
		return nil, err
	}
	p.log("%s: %d wallets logged in, funded, with ACTIVE destinations in %.1fs", kind, len(payers), time.Since(t0).Seconds())

	measure := func(op string, clients, maxRequests int, fn func(ctx context.Context, client, seq int) error) ServiceCell {
		tx0, retry0 := s.store.counts()
		conns0 := s.sessions(ctx)
		st := Run(ctx, clients, p.dur, maxRequests, fn)
		tx1, retry1 := s.store.counts()
		c := ServiceCell{Store: kind, Op: op, Stats: st, Txs: tx1 - tx0, TxRetries: retry1 - retry0, Connections: s.sessions(ctx) - conns0}
		logCell(p, kind, op, st, fmt.Sprintf(" tx=%d retries=%d conns=%d", c.Txs, c.TxRetries, c.Connections))
		return c
	}

	for _, clients := range p.clients {
		// create-quote: each client quotes from its own wallet; the quotes
		// become that client's work in the execute cell.
		pools := make([][]*quoteItem, clients)
		cell := measure("create-quote", clients, p.cap, func(ctx context.Context, client, _ int) error {
			it, err := s.createQuote(ctx, payers[client])
			if err == nil {
				pools[client] = append(pools[client], it)
			}
			return err
		})
		cells = append(cells, cell)
		if err := ctx.Err(); err != nil {
			return cells, err
		}

		// execute: one wallet per client. Executing may go faster than
		// quoting did, so each client's quotes are topped up by half
		// (untimed) unless the cell is bounded by count.
		if p.cap == 0 {
			t0 := time.Now()
			var owner []int
			for c, pool := range pools {
				for range (len(pool) + 1) / 2 {
					owner = append(owner, c)
				}
			}
			extra := make([]*quoteItem, len(owner))
			if err := parallel(ctx, len(extra), 8, func(ctx context.Context, i int) error {
				var err error
				extra[i], err = s.createQuote(ctx, payers[owner[i]])
				return err
			}); err != nil {
				return cells, err
			}
			for i, it := range extra {
				pools[owner[i]] = append(pools[owner[i]], it)
			}
			p.log("%s: %d more quotes for the execute cell made in %.1fs", kind, len(extra), time.Since(t0).Seconds())
		}
		var items []*quoteItem
		for _, pool := range pools {
			items = append(items, pool...)
		}
		if err := prepareExecutes(items); err != nil {
			return cells, err
		}
		cell = measure("execute", clients, p.cap, func(ctx context.Context, client, seq int) error {
			if seq >= len(pools[client]) {
				return ErrStop
			}
			return s.execute(ctx, pools[client][seq])
		})
		cell.Stats.addProblems(p, kind, "execute", s.checkExecutes(ctx, items, payers[:clients]))
		cells = append(cells, cell)
		executed := executedOf(items)

		// execute-hot-wallet: every client on one wallet, with half as many
		// quotes again as the per-wallet cell's rate would get through.
		n := p.cap + clients*WarmupCalls
		if p.cap == 0 {
			n = int(math.Ceil(1.5*cell.Stats.RPS*p.dur.Seconds())) + clients*WarmupCalls
		}
		t0 := time.Now()
		hotItems := make([]*quoteItem, max(n, 3*clients*WarmupCalls))
		if err := parallel(ctx, len(hotItems), 8, func(ctx context.Context, i int) error {
			var err error
			hotItems[i], err = s.createQuote(ctx, hot)
			return err
		}); err != nil {
			return cells, err
		}
		if err := prepareExecutes(hotItems); err != nil {
			return cells, err
		}
		p.log("%s: %d quotes of the hot wallet made in %.1fs", kind, len(hotItems), time.Since(t0).Seconds())
		var next atomic.Int64
		cell = measure("execute-hot-wallet", clients, p.cap, func(ctx context.Context, _, _ int) error {
			i := int(next.Add(1)) - 1
			if i >= len(hotItems) {
				return ErrStop
			}
			return s.execute(ctx, hotItems[i])
		})
		cell.Stats.addProblems(p, kind, "execute-hot-wallet", s.checkExecutes(ctx, hotItems, []*payer{hot}))
		cells = append(cells, cell)
		executed = append(executed, executedOf(hotItems)...)

		// get-transaction over the transactions just executed.
		if len(executed) == 0 {
			return cells, errors.New("no quote was executed; nothing to read")
		}
		cells = append(cells, measure("get-transaction", clients, p.cap, func(ctx context.Context, client, seq int) error {
			id := executed[(seq*clients+client)%len(executed)].tx
			status, body, err := s.api.do(ctx, "GET", "/transactions/"+id, nil)
			switch {
			case err != nil:
				return err
			case status != http.StatusOK || !bytes.Contains(body, []byte(id)):
				return fmt.Errorf("GET /transactions/%s: status %d: %s", id, status, clip(body))
			}
			return nil
		}))
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}

	for _, clients := range p.clients {
		cells = append(cells, measure("create-external-account", clients, p.cap, func(ctx context.Context, client, _ int) error {
			body := accountBody(payers[client].id, s.accountNumber(false))
			status, b, err := s.api.do(ctx, "POST", "/customers/external-accounts", body)
			switch {
			case err != nil:
				return err
			case status != http.StatusCreated:
				return fmt.Errorf("POST /customers/external-accounts: status %d: %s", status, clip(b))
			}
			return nil
		}))
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}

	// settle: the settlement step of executed payments (the POST of each
	// payment's HOLD through the books, its status and events), one
	// payment per call, with the workers stopped and the service's clock
	// moved past the rails' settlement time. Last, since the workers do
	// not start again.
	// The payments of every settle cell are executed first: moving the
	// clock ends the wallets' sessions too.
	s.haltWorkers()
	t0 = time.Now()
	settleItems := make([][]*quoteItem, len(p.clients))
	for k, clients := range p.clients {
		n := p.cap + clients*WarmupCalls
		if p.cap == 0 {
			n = 3000 + clients*WarmupCalls
		}
		items := make([]*quoteItem, n)
		if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error {
			var err error
			items[i], err = s.createQuote(ctx, payers[i%clients])
			return err
		}); err != nil {
			return cells, err
		}
		if err := prepareExecutes(items); err != nil {
			return cells, err
		}
		if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error { return s.execute(ctx, items[i]) }); err != nil {
			return cells, err
		}
		settleItems[k] = items
	}
	s.skew.Add(int64(time.Hour))
	p.log("%s: payments for the settle cells executed in %.1fs", kind, time.Since(t0).Seconds())
	for k, clients := range p.clients {
		items := settleItems[k]
		var next atomic.Int64
		cells = append(cells, measure("settle", clients, p.cap, func(ctx context.Context, _, _ int) error {
			i := int(next.Add(1)) - 1
			if i >= len(items) {
				return ErrStop
			}
			ok, err := s.svc.SettleTransaction(ctx, items[i].tx)
			if err == nil && !ok {
				err = fmt.Errorf("payment %s was not due for settlement", items[i].tx)
			}
			return err
		}))
		if err := ctx.Err(); err != nil {
			return cells, err
		}
	}

	slices.SortStableFunc(cells, func(a, b ServiceCell) int {
		if d := slices.Index(serviceOps, a.Op) - slices.Index(serviceOps, b.Op); d != 0 {
			return d
		}
		return a.Stats.Clients - b.Stats.Clients
	})
	return cells, nil
}

// newPayer makes a customer, logs its wallet in through the OTP login,
// funds it and gives it a destination account (not yet verified).
func (s *stack) newPayer(ctx context.Context, prefix string) (*payer, error) {
	c, err := s.newCustomer(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return s.payerOf(ctx, c)
}

// payerOf makes a payer of a customer: its wallet logged in through the
// OTP login, funded, with a destination account (not yet verified).
func (s *stack) payerOf(ctx context.Context, c customer) (*payer, error) {
	var err error
	py := &payer{customer: c}
	if py.key, err = s.login(ctx, c); err != nil {
		return nil, err
	}
	if err := s.fund(ctx, c, fundedAmount); err != nil {
		return nil, err
	}
	if py.dest, err = s.createAccount(ctx, c.id); err != nil {
		return nil, err
	}
	py.quoteBody = mustJSON(map[string]any{
		"source":               map[string]any{"sourceType": "ACCOUNT", "accountId": c.account},
		"destination":          map[string]any{"destinationType": "ACCOUNT", "accountId": py.dest},
		"lockedCurrencySide":   "SENDING",
		"lockedCurrencyAmount": quoteAmount,
	})
	return py, nil
}

// createQuote asks for a quote from the payer's wallet to its destination.
func (s *stack) createQuote(ctx context.Context, py *payer) (*quoteItem, error) {
	var q wire.Quote
	if err := s.api.expect(ctx, http.StatusCreated, &q, "POST", "/quotes", py.quoteBody); err != nil {
		return nil, err
	}
	it := &quoteItem{payer: py, id: q.ID, tx: q.TransactionID, amount: q.TotalSendingAmount}
	for _, pi := range q.PaymentInstructions {
		if pl, ok := pi.AccountOrWalletInfo["payloadToSign"].(string); ok {
			it.payload = pl
		}
	}
	if q.Status != "PENDING" || it.payload == "" || it.amount != quoteAmount {
		return nil, fmt.Errorf("quote %s: status %s, totalSendingAmount %d, payloadToSign %q", q.ID, q.Status, q.TotalSendingAmount, it.payload)
	}
	return it, nil
}

// prepareExecutes does the wallet's part of each execute before the timed
// run: the stamp over payloadToSign and an Idempotency-Key.
func prepareExecutes(items []*quoteItem) error {
	for _, it := range items {
		stamp, err := walletcrypto.SignStamp(it.payer.key, []byte(it.payload))
		if err != nil {
			return err
		}
		var k [16]byte
		_, _ = rand.Read(k[:])
		it.stamp, it.idemKey = stamp, hex.EncodeToString(k[:])
	}
	return nil
}

// execute sends one prepared execute and checks that it moved the quote to
// PROCESSING.
func (s *stack) execute(ctx context.Context, it *quoteItem) error {
	status, body, err := s.api.do(ctx, "POST", "/quotes/"+it.id+"/execute", nil,
		wire.HeaderWalletSignature, it.stamp, wire.HeaderIdempotencyKey, it.idemKey)
	if err != nil {
		return err
	}
	var q struct {
		ID, Status string
	}
	if status != http.StatusOK || json.Unmarshal(body, &q) != nil || q.ID != it.id || q.Status != "PROCESSING" {
		return fmt.Errorf("execute %s: status %d: %s", it.id, status, clip(body))
	}
	it.executed = true
	it.payer.spent.Add(it.amount)
	return nil
}

func executedOf(items []*quoteItem) []*quoteItem {
	var out []*quoteItem
	for _, it := range items {
		if it.executed {
			out = append(out, it)
		}
	}
	return out
}

// checkExecutes reads back from the store what the execute cell did: each
// executed quote's transaction left PENDING for PROCESSING (or, settled by
// the worker since, COMPLETED), each other quote's is still PENDING, and
// each payer's available balance is its funding minus exactly the executed
// amounts.
func (s *stack) checkExecutes(ctx context.Context, items []*quoteItem, payers []*payer) []error {
	var problems []error
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		problems = problems[:0]
		for _, it := range items {
			x, err := tx.GetTransaction(ctx, it.tx)
			if err != nil {
				return err
			}
			ok := x.Status == "PENDING"
			if it.executed {
				ok = x.Status == "PROCESSING" || x.Status == "COMPLETED"
			}
			if !ok {
				problems = append(problems, fmt.Errorf("quote %s (executed: %v) has transaction status %s", it.id, it.executed, x.Status))
			}
		}
		for _, py := range payers {
			a, err := tx.GetInternalAccount(ctx, py.account)
			if err != nil {
				return err
			}
			if want := fundedAmount - py.spent.Load(); a.Available != want {
				problems = append(problems, fmt.Errorf("wallet %s: available %d, want %d", py.account, a.Available, want))
			}
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err)
	}
	return problems
}

// addProblems counts failed checks as errors of the cell and logs them.
func (st *Stats) addProblems(p plan, kind, op string, problems []error) {
	if len(problems) == 0 {
		return
	}
	st.Errors += len(problems)
	err := errorsJoin(problems, 5)
	if st.FirstError == "" {
		st.FirstError = problems[0].Error()
	}
	p.log("%s %s: %d failed checks: %v", kind, op, len(problems), err)
}

// logCell writes the progress line of a measured cell.
func logCell(p plan, kind, op string, st Stats, extra string) {
	p.log("%-8s %-24s c=%-3d req=%6d err=%d rps=%8.1f p50=%7.2fms p90=%7.2fms p99=%7.2fms max=%7.2fms%s",
		kind, op, st.Clients, st.Requests, st.Errors, st.RPS, st.P50Ms, st.P90Ms, st.P99Ms, st.MaxMs, extra)
	if st.FirstError != "" {
		p.log("%-8s %-24s c=%-3d first error: %s", kind, op, st.Clients, st.FirstError)
	}
}
