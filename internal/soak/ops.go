package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"paywallet/shared/wire"
)

// worker runs the operations one client of the service would, drawn from
// its own random stream of the seed.
type worker struct {
	w   *world
	rnd *rand.Rand
	id  int
	seq int
}

// operations are what a worker draws from, with their weights.
var operations = []struct {
	name   string
	weight int
	run    func(wk *worker, ctx context.Context)
}{
	{"fund", 5, (*worker).fund},
	{"deposit", 1, (*worker).deposit},
	{"transfer-in", 3, (*worker).transferIn},
	{"transfer-out", 3, (*worker).transferOut},
	{"pay", 8, func(wk *worker, ctx context.Context) { wk.pay(ctx, "platform") }},
	{"agent-pay", 3, func(wk *worker, ctx context.Context) { wk.pay(ctx, "agent") }},
	{"agent-transfer-in", 1, (*worker).agentTransferIn},
	{"realtime", 2, func(wk *worker, ctx context.Context) { wk.pay(ctx, "realtime") }},
}

// step runs one operation drawn at random.
func (wk *worker) step(ctx context.Context) {
	total := 0
	for _, op := range operations {
		total += op.weight
	}
	n := wk.rnd.IntN(total)
	for _, op := range operations {
		if n < op.weight {
			wk.w.count(op.name)
			op.run(wk, ctx)
			return
		}
		n -= op.weight
	}
}

// key is a new Idempotency-Key, unique in the round and the same when the
// seed is replayed.
func (wk *worker) key(what string) string {
	wk.seq++
	return fmt.Sprintf("soak-%d-w%d-%d-%s", wk.w.cfg.Seed, wk.id, wk.seq, what)
}

// child is a random stream for a request the worker sends beside others.
func (wk *worker) child() *rand.Rand {
	return rand.New(rand.NewPCG(wk.rnd.Uint64(), wk.rnd.Uint64()))
}

func (wk *worker) customer() *customer {
	return wk.w.customers[wk.rnd.IntN(len(wk.w.customers))]
}

func pick[T any](rnd *rand.Rand, from []T) T { return from[rnd.IntN(len(from))] }

// send sends r and reports a request that got no answer as a problem (nil
// answer then). One keyed request in twenty is sent twice at once, as by
// a client that retries while its first attempt still runs: both
// attempts must get the same answer (client.inconsistentKeys).
func (wk *worker) send(ctx context.Context, rnd *rand.Rand, r request) *answer {
	var twin sync.WaitGroup
	if r.key != "" && rnd.IntN(20) == 0 {
		trnd := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
		wk.w.count("sent twice at once")
		twin.Go(func() {
			if _, err := wk.w.c.do(ctx, trnd, r); err != nil && ctx.Err() == nil {
				wk.w.problem("%v", err)
			}
		})
	}
	a, err := wk.w.c.do(ctx, rnd, r)
	twin.Wait()
	if err != nil {
		if ctx.Err() == nil {
			wk.w.problem("%v", err)
		}
		return nil
	}
	return &a
}

// unexpected reports an answer the operation does not allow.
func (wk *worker) unexpected(what string, a *answer) {
	wk.w.problem("%s: unexpected answer %d %s (via %s)", what, a.status, clip(a.body), a.via)
}

// ---- money in

func (wk *worker) fund(ctx context.Context) {
	c := wk.customer()
	// About as much comes in as goes out, so that the wallets run dry now
	// and then and payments are refused for want of money.
	amount := 5_000 + wk.rnd.Int64N(50_000)
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: "/sandbox/internal-accounts/" + c.wallet + "/fund",
		key: wk.key("fund"), body: wire.SandboxFundRequest{Amount: amount}})
	switch {
	case a == nil:
	case a.status == http.StatusOK:
		wk.w.mu.Lock()
		wk.w.fundings = append(wk.w.fundings, funding{wallet: c.wallet, amount: amount})
		wk.w.mu.Unlock()
	default:
		wk.unexpected("fund "+c.wallet, a)
	}
}

// deposit records a bank deposit with `paymentsd deposit` on the round's
// database, a process of its own: when faults are on it is sometimes
// killed part-way. A run whose outcome is unknown (killed, or the database
// went away) is run again with the same bank reference, which the service
// records once: a repeat that finds it recorded is refused as such.
func (wk *worker) deposit(ctx context.Context) {
	c := wk.customer()
	amount := 1_000 + wk.rnd.Int64N(100_000)
	bankRef := strings.ToUpper(strings.ReplaceAll(wk.key("deposit"), "-", ""))
	if len(bankRef) > 64 {
		bankRef = bankRef[len(bankRef)-64:]
	}
	d := &deposit{wallet: c.wallet, amount: amount, bankRef: bankRef}
	deadline := time.Now().Add(wk.w.c.patience)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			wk.w.problem("paymentsd deposit %s: no outcome in %s of retries", bankRef, wk.w.c.patience)
			return
		}
		cmd := exec.Command(wk.w.cfg.Binary, append([]string{"deposit", "-reference", c.depositRef, "-amount", strconv.FormatInt(amount, 10),
			"-currency", "USD", "-bank-reference", bankRef, "-sender-name", "Soak Sender", "-log-level", "error"}, wk.w.cfg.serviceArgs()...)...)
		cmd.Env = wk.w.cfg.env()
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			wk.w.problem("paymentsd deposit: %v", err)
			return
		}
		if wk.w.cfg.faults() && wk.rnd.IntN(4) == 0 {
			after := time.Duration(wk.rnd.Int64N(int64(400 * time.Millisecond)))
			t := time.AfterFunc(after, func() { _ = cmd.Process.Kill() })
			defer t.Stop()
		}
		err := cmd.Wait()
		if crash := crashIn(stderr.String()); crash != "" {
			wk.w.problem("paymentsd deposit %s crashed (or raced): %s", bankRef, crash)
		}
		switch {
		case err == nil:
			var x wire.Transaction
			if e := json.Unmarshal([]byte(stdout.String()), &x); e != nil || x.ID == "" || x.Status != "COMPLETED" {
				wk.w.problem("paymentsd deposit %s printed %q (%v)", bankRef, stdout.String(), e)
				return
			}
			d.txID = x.ID
		case attempt > 1 && strings.Contains(stderr.String(), "was already recorded"):
			// An earlier run recorded it and its answer was lost.
		case strings.Contains(stderr.String(), "deposit refused"):
			wk.w.problem("paymentsd deposit %s (run %d): %s", bankRef, attempt, stderr.String())
			return
		default:
			time.Sleep(100 * time.Millisecond)
			continue
		}
		wk.w.mu.Lock()
		wk.w.deposits = append(wk.w.deposits, d)
		wk.w.mu.Unlock()
		return
	}
}

// transferIn pulls from an external account; sometimes it is cancelled
// before it settles.
func (wk *worker) transferIn(ctx context.Context) {
	c := wk.customer()
	outcome := pick(wk.rnd, transferInFrom)
	amount := 1_000 + wk.rnd.Int64N(100_000)
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: "/transfer-in", key: wk.key("transfer-in"),
		body: transferBody(c.accounts[outcome], c.wallet, amount)})
	x, ok := decoded[wire.Transaction](wk, a, http.StatusCreated, "transfer-in")
	if !ok {
		return
	}
	t := &transfer{in: true, wallet: c.wallet, outcome: outcome, amount: amount, txID: x.ID, rail: x.PaymentRail}
	wk.w.addTransfer(t)
	wk.maybeCancel(ctx, t)
}

// agentTransferIn is a transfer-in by the customer's agent; above the
// threshold it waits for the platform's approval, which the soak gives.
func (wk *worker) agentTransferIn(ctx context.Context) {
	c := wk.customer()
	outcome := pick(wk.rnd, transferInFrom)
	amount := 1_000 + wk.rnd.Int64N(2*agentThreshold)
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: "/agents/me/transfer-in", key: wk.key("agent-transfer-in"), bearer: c.agent.token,
		body: transferBody(c.accounts[outcome], c.wallet, amount)})
	if !wk.answered(a, http.StatusCreated, "agent transfer-in") {
		return
	}
	act, err := decodeAction(a)
	if err != nil {
		wk.w.problem("agent transfer-in: %v", err)
		return
	}
	if act.Status == "PENDING_APPROVAL" {
		if act, a = wk.approve(ctx, wk.rnd, c, act.ID); a == nil {
			return
		}
	}
	if act.Status != "APPROVED" || act.Transaction == nil {
		wk.unexpected("agent transfer-in "+act.ID, a)
		return
	}
	wk.w.addTransfer(&transfer{in: true, wallet: c.wallet, outcome: outcome, amount: amount, txID: act.Transaction.ID,
		rail: act.Transaction.PaymentRail, agent: true})
}

// ---- money out

// transferOut pays an external account from the wallet: the first call
// answers the signing challenge, the signed retry (with the key) makes
// the transfer. Sometimes it is cancelled before it settles.
func (wk *worker) transferOut(ctx context.Context) {
	c := wk.customer()
	outcome := pick(wk.rnd, transferOutTo)
	amount := 1_000 + wk.rnd.Int64N(60_000)
	body := map[string]any{"source": map[string]string{"accountId": c.wallet},
		"destination": map[string]string{"accountId": c.accounts[outcome]}, "amount": amount}
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: "/transfer-out", body: body})
	ch, ok := decoded[wire.SignedRequestChallenge](wk, a, http.StatusAccepted, "transfer-out")
	if !ok {
		return
	}
	a = wk.send(ctx, wk.rnd, request{method: "POST", path: "/transfer-out", body: body, key: wk.key("transfer-out"), retryUnauthorized: true,
		headers: []string{wire.HeaderWalletSignature, wire.SandboxSignature, wire.HeaderRequestID, ch.RequestID}})
	x, ok := decoded[wire.Transaction](wk, a, http.StatusCreated, "transfer-out")
	if !ok {
		return
	}
	t := &transfer{wallet: c.wallet, outcome: outcome, amount: amount, txID: x.ID, rail: x.PaymentRail}
	wk.w.addTransfer(t)
	wk.maybeCancel(ctx, t)
}

// answered reports whether a is the answer want. A refusal for want of
// money is counted; anything else is reported.
func (wk *worker) answered(a *answer, want int, what string) bool {
	switch {
	case a == nil:
		return false
	case a.code() == "INSUFFICIENT_BALANCE":
		wk.w.count("refused " + what + ": INSUFFICIENT_BALANCE")
		return false
	case a.status != want:
		wk.unexpected(what, a)
		return false
	}
	return true
}

// decoded is a's body when a is the answer want (see answered).
func decoded[T any](wk *worker, a *answer, want int, what string) (T, bool) {
	var out T
	if !wk.answered(a, want, what) {
		return out, false
	}
	if err := a.decode(&out); err != nil {
		wk.w.problem("%s: %v", what, err)
		return out, false
	}
	return out, true
}

func transferBody(external, wallet string, amount int64) map[string]any {
	return map[string]any{"source": map[string]string{"accountId": external},
		"destination": map[string]string{"accountId": wallet}, "amount": amount}
}

func (w *world) addTransfer(t *transfer) {
	w.mu.Lock()
	w.transfers = append(w.transfers, t)
	w.mu.Unlock()
}

// maybeCancel cancels a third of the transfers, at once or a moment later
// (racing the settlement worker).
func (wk *worker) maybeCancel(ctx context.Context, t *transfer) {
	if wk.rnd.IntN(3) != 0 {
		return
	}
	time.Sleep(time.Duration(wk.rnd.Int64N(int64(600 * time.Millisecond))))
	t.cancelTried = true
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: "/transactions/" + t.txID + "/cancel", body: map[string]string{"reason": "soak"}, repeatable: true})
	switch {
	case a == nil:
	case a.status == http.StatusOK:
		t.cancelled = true
	case a.status == http.StatusConflict && a.code() == "TRANSACTION_NOT_CANCELLABLE":
	default:
		wk.unexpected("cancel "+t.txID, a)
	}
}

// ---- quotes

// pay quotes a payment and executes it: usually once, sometimes with
// several executes at once (different keys, any instance: one may win),
// sometimes late (the quote may have expired), sometimes never. by is who
// pays how:
//
//   - "platform": the platform, from the wallet;
//   - "agent": the customer's agent, its quote and executes (above the
//     threshold held for the platform's approval, which is given once or
//     twice at once), with a platform execute of the same quote sometimes
//     racing them;
//   - "realtime": a just-in-time funded quote, whose funds are sent with
//     POST /sandbox/send.
func (wk *worker) pay(ctx context.Context, by string) {
	c := wk.customer()
	if p := wk.quote(ctx, c, by, pick(wk.rnd, quoteOutcomes)); p != nil {
		wk.executeAll(ctx, c, p)
	}
}

// quote asks for a quote to the customer's account of outcome, paid by
// (see pay).
func (wk *worker) quote(ctx context.Context, c *customer, by, outcome string) *payment {
	amount := 500 + wk.rnd.Int64N(2*agentThreshold)
	path, bearer, realtime := "/quotes", "", by == "realtime"
	source := map[string]any{"sourceType": "ACCOUNT", "accountId": c.wallet}
	switch by {
	case "agent":
		path, bearer = "/agents/me/quotes", c.agent.token
	case "realtime":
		source = map[string]any{"sourceType": "REALTIME_FUNDING", "customerId": c.id, "currency": "USD"}
	}
	side := "SENDING"
	if outcome == eur && wk.rnd.IntN(2) == 0 {
		side, amount = "RECEIVING", amount/2+1
	}
	a := wk.send(ctx, wk.rnd, request{method: "POST", path: path, key: wk.key("quote"), bearer: bearer,
		body: map[string]any{"source": source, "destination": map[string]string{"destinationType": "ACCOUNT", "accountId": c.accounts[outcome]},
			"lockedCurrencySide": side, "lockedCurrencyAmount": amount, "description": "soak"}})
	if a == nil {
		return nil
	}
	if a.status != http.StatusCreated {
		wk.unexpected("quote", a)
		return nil
	}
	var q wire.Quote
	if err := a.decode(&q); err != nil || q.Status != "PENDING" || q.TransactionID == "" {
		wk.w.problem("quote: %v %s", err, clip(a.body))
		return nil
	}
	p := &payment{quoteID: q.ID, txID: q.TransactionID, outcome: outcome, total: q.TotalSendingAmount, fee: q.FeesIncluded,
		received: q.TotalReceivingAmount, receiving: q.ReceivingCurrency.Code, rail: q.Destination.PaymentRail, realtime: realtime, by: by}
	if !realtime {
		p.wallet = c.wallet
	}
	wk.w.mu.Lock()
	wk.w.payments = append(wk.w.payments, p)
	wk.w.mu.Unlock()
	return p
}

// executeAll executes p: no execute at all one time in twelve, a late one
// (about when the quote expires) one time in twelve, else one or, a third
// of the time, two or three at once.
func (wk *worker) executeAll(ctx context.Context, c *customer, p *payment) {
	r := wk.rnd.IntN(12)
	switch {
	case r < 1:
		return
	case r < 2:
		ttl := wk.w.cfg.quoteTTL()
		time.Sleep(ttl/2 + time.Duration(wk.rnd.Int64N(int64(ttl))))
	default:
		time.Sleep(time.Duration(wk.rnd.Int64N(int64(200 * time.Millisecond))))
	}
	n := 1
	if wk.rnd.IntN(3) == 0 {
		n = 2 + wk.rnd.IntN(2)
	}
	var wg sync.WaitGroup
	for i := range n {
		rnd, key := wk.child(), wk.key("execute")
		how := "platform"
		switch {
		case p.realtime:
			how = "send"
		case p.by == "agent" && (i == 0 || rnd.IntN(2) == 0):
			how = "agent"
		}
		wg.Go(func() { wk.execute(ctx, rnd, c, p, how, key) })
	}
	wg.Wait()
}

// execute sends one execute of p (how: platform, agent or send) and
// records whether it won.
func (wk *worker) execute(ctx context.Context, rnd *rand.Rand, c *customer, p *payment, how, key string) {
	what := how + " execute " + key
	sig := []string{wire.HeaderWalletSignature, wire.SandboxSignature}
	var a *answer
	switch how {
	case "platform":
		a = wk.send(ctx, rnd, request{method: "POST", path: "/quotes/" + p.quoteID + "/execute", key: key, headers: sig})
	case "agent":
		a = wk.send(ctx, rnd, request{method: "POST", path: "/agents/me/quotes/" + p.quoteID + "/execute", key: key, headers: sig, bearer: c.agent.token})
	case "send":
		a = wk.send(ctx, rnd, request{method: "POST", path: "/sandbox/send", key: key,
			body: map[string]any{"quoteId": p.quoteID, "currencyCode": "USD"}})
	}
	if a == nil {
		return
	}
	if a.status >= 400 {
		if !refusal(how, a) {
			wk.unexpected(what, a)
		}
		p.refused(what, *a)
		wk.w.count("refused " + how + " execute: " + a.code())
		return
	}
	switch how {
	case "platform":
		var q wire.Quote
		if err := a.decode(&q); err != nil || q.Status != "PROCESSING" || q.TransactionID != p.txID {
			wk.unexpected(what, a)
			return
		}
	case "send":
		var x wire.Transaction
		if err := a.decode(&x); err != nil || x.Status != "PROCESSING" || x.ID != p.txID {
			wk.unexpected(what, a)
			return
		}
	case "agent":
		act, err := decodeAction(a)
		if err != nil {
			wk.unexpected(what, a)
			return
		}
		if act.Status == "PENDING_APPROVAL" {
			// One approval, or two at once (one runs, the other is 409).
			n := 1 + rnd.IntN(2)
			var wg sync.WaitGroup
			for range n {
				arnd := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
				wg.Go(func() {
					act, a := wk.approve(ctx, arnd, c, act.ID)
					switch {
					case a == nil:
					case act.Status == "APPROVED" && act.Transaction != nil && act.Transaction.ID == p.txID:
						p.won("approval of " + what)
					case act.Status == "FAILED" || a.status == http.StatusConflict:
						p.refused("approval of "+what, *a)
						wk.w.count(fmt.Sprintf("refused approval: %d %s %s", a.status, a.code(), act.Status))
					default:
						wk.unexpected("approval of "+what, a)
					}
				})
			}
			wg.Wait()
			return
		}
		if act.Status != "APPROVED" || act.Transaction == nil || act.Transaction.ID != p.txID {
			wk.unexpected(what, a)
			return
		}
	}
	p.won(what)
}

// refusal reports a refusal an execute may get: the quote was executed by
// another request or expired, the money is short (not for a funded
// quote), or an agent's execute of it already waits for approval.
func refusal(how string, a *answer) bool {
	switch code := a.code(); {
	case code == "INVALID_STATE_TRANSITION":
		return true
	case code == "INSUFFICIENT_BALANCE":
		return how != "send"
	case code == "CONFLICT":
		return how == "agent"
	}
	return false
}

// action is the part of an AgentAction the soak reads.
type action struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Transaction *wire.Transaction `json:"transaction"`
}

func decodeAction(a *answer) (action, error) {
	var act action
	err := a.decode(&act)
	if err == nil && act.ID == "" {
		err = fmt.Errorf("no action in %s", clip(a.body))
	}
	return act, err
}

// approve has the platform approve an agent's action, with a key of its
// own; the answer is nil when none came.
func (wk *worker) approve(ctx context.Context, rnd *rand.Rand, c *customer, actionID string) (action, *answer) {
	a := wk.send(ctx, rnd, request{method: "POST", path: "/agents/" + c.agent.id + "/actions/" + actionID + "/approve",
		key: wk.keyFor(rnd, "approve")})
	if a == nil {
		return action{}, nil
	}
	if a.status != http.StatusOK {
		return action{}, a
	}
	act, err := decodeAction(a)
	if err != nil {
		wk.w.problem("approve %s: %v", actionID, err)
		return action{}, nil
	}
	return act, a
}

// keyFor is a key for a request sent beside others (which must not share
// the worker's sequence): drawn from the request's own stream.
func (wk *worker) keyFor(rnd *rand.Rand, what string) string {
	return fmt.Sprintf("soak-%d-w%d-%016x-%s", wk.w.cfg.Seed, wk.id, rnd.Uint64(), what)
}
