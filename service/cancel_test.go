package service

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

func (e *env) cancel(id string, body any) response {
	e.t.Helper()
	return e.do("POST", "/transactions/"+id+"/cancel", body, nil)
}

// TestCancelTransfer cancels a transfer in each cancellable state: it ends
// FAILED without a failureReason, an outgoing one's held money returns, an
// incoming one is never credited, the FAILED event (and the balance event)
// is recorded, and the settlement worker never settles it afterwards.
func TestCancelTransfer(t *testing.T) { onBothStores(t, testCancelTransfer) }

func testCancelTransfer(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)
	p := e.newPayer("cancel@example.com", 0)
	fiat := e.fiatAccount(p)
	e.fund(fiat, 50_000)
	ext := e.destination(p, "12345")
	walletBefore := e.account(p.account.ID)
	balanceEvents := func() int {
		n := 0
		for _, ev := range rc.events() {
			if ev.Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" && strings.Contains(string(ev.Data), fiat) {
				n++
			}
		}
		return n
	}
	cases := []struct {
		name, path string
		body       map[string]any
		processing bool // one settlement step before the cancel
		events     []string
	}{
		{"out pending", "/transfer-out", transferOutBody(fiat, ext.ID, 4_000), false,
			[]string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.FAILED#2"}},
		{"out processing", "/transfer-out", transferOutBody(fiat, ext.ID, 4_000), true,
			[]string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.PROCESSING#2", "OUTGOING_PAYMENT.FAILED#3"}},
		{"in pending", "/transfer-in", transferInBody(ext.ID, p.account.ID, 2_500), false,
			[]string{"INCOMING_PAYMENT.PENDING#1", "INCOMING_PAYMENT.FAILED#2"}},
		{"in processing", "/transfer-in", transferInBody(ext.ID, p.account.ID, 2_500), true,
			[]string{"INCOMING_PAYMENT.PENDING#1", "INCOMING_PAYMENT.PENDING#2", "INCOMING_PAYMENT.FAILED#3"}},
	}
	for _, c := range cases {
		r := e.do("POST", c.path, c.body, nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		if c.processing {
			e.settle()
			if got := e.transaction(x.ID); got.Status != "PROCESSING" {
				t.Fatalf("%s: %s before the cancel", c.name, got.Status)
			}
		}
		e.deliver()
		eventsBefore := balanceEvents()
		r = e.cancel(x.ID, map[string]any{"reason": "REQUESTED_AFTER_HOURS"})
		e.mustStatus(r, http.StatusOK)
		var got wire.Transaction
		r.decode(t, &got)
		if got.ID != x.ID || got.Status != "FAILED" || got.FailureReason != "" || got.SettledAt != "" {
			t.Fatalf("%s: cancelled %s", c.name, r.body)
		}
		balances(t, e.account(fiat), 50_000, 50_000)
		// The worker never settles it: nothing is due, now or later.
		if n := e.settle(); n != 0 {
			t.Fatalf("%s: %d steps after the cancel", c.name, n)
		}
		e.clock.Advance(time.Hour)
		if n := e.settle(); n != 0 {
			t.Fatalf("%s: %d steps an hour after the cancel", c.name, n)
		}
		if got := e.transaction(x.ID); got.Status != "FAILED" {
			t.Fatalf("%s: %s after the worker ran", c.name, got.Status)
		}
		if a := e.account(p.account.ID); a.Balance.Amount != walletBefore.Balance.Amount {
			t.Fatalf("%s: a cancelled transfer-in credited the wallet", c.name)
		}
		e.deliver()
		if !slices.Equal(rc.of(x.ID), c.events) {
			t.Fatalf("%s: events %v, want %v", c.name, rc.of(x.ID), c.events)
		}
		wantBalanceEvents := eventsBefore
		if strings.HasPrefix(c.name, "out") {
			wantBalanceEvents++ // the held money returned
		}
		if n := balanceEvents(); n != wantBalanceEvents {
			t.Fatalf("%s: %d balance events, want %d", c.name, n, wantBalanceEvents)
		}
		// A second cancel finds it FAILED.
		er := wantRefusal(t, e.cancel(x.ID, nil), http.StatusConflict, "TRANSACTION_NOT_CANCELLABLE")
		if er.Details["status"] != "FAILED" {
			t.Fatalf("%s: second cancel %+v", c.name, er)
		}
	}
}

// TestCancelRefusals: what is never cancellable is 400 naming
// transactionId, what has settled 409, unknown ids 404, a bad body names
// its fields; none of them changes anything.
func TestCancelRefusals(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("refuse-cancel@example.com", 100_000)
	fiat := e.fiatAccount(p)
	e.fund(fiat, 10_000)
	ext := e.destination(p, "12345")

	// A settled transfer-out.
	r := e.do("POST", "/transfer-out", transferOutBody(fiat, ext.ID, 1_000), nil)
	e.mustStatus(r, http.StatusCreated)
	var settled wire.Transaction
	r.decode(t, &settled)
	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	if got := e.transaction(settled.ID); got.Status != "COMPLETED" {
		t.Fatalf("settled %s", got.Status)
	}
	er := wantRefusal(t, e.cancel(settled.ID, nil), http.StatusConflict, "TRANSACTION_NOT_CANCELLABLE")
	if er.Details["status"] != "COMPLETED" || !strings.Contains(er.Message, "COMPLETED") {
		t.Fatalf("settled: %+v", er)
	}
	// A sandbox-failed transfer-out.
	failing := e.destination(p, "12004")
	r = e.do("POST", "/transfer-out", transferOutBody(fiat, failing.ID, 1_000), nil)
	var failed wire.Transaction
	r.decode(t, &failed)
	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	wantRefusal(t, e.cancel(failed.ID, nil), http.StatusConflict, "TRANSACTION_NOT_CANCELLABLE")

	// An executed quote's payment, still PROCESSING: never cancellable.
	q := e.quote(quoteBody(p, ext.ID, "SENDING", 2_000))
	e.mustStatus(e.execute(q, mustStamp(t, p.key, payloadOf(t, q))), http.StatusOK)
	before := e.account(p.account.ID)
	onlyField := func(r response, field string) wire.Error {
		t.Helper()
		er := wantRefusal(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if got := errorFields(er); got != field {
			t.Fatalf("fields %q, want %q: %+v", got, field, er)
		}
		return er
	}
	onlyField(e.cancel(q.TransactionID, nil), "transactionId")
	if got := e.transaction(q.TransactionID); got.Status != "PROCESSING" {
		t.Fatalf("the refused cancel left the payment %s", got.Status)
	}
	if after := e.account(p.account.ID); after.Balance.Amount != before.Balance.Amount {
		t.Fatal("a refused cancel moved money")
	}
	// An unexecuted quote's transaction, and a sandbox funding.
	pending := e.quote(quoteBody(p, ext.ID, "SENDING", 2_000))
	onlyField(e.cancel(pending.TransactionID, nil), "transactionId")
	var funding wire.List[wire.Transaction]
	e.do("GET", "/transactions?accountId="+fiat+"&type=INCOMING", nil, nil).decode(t, &funding)
	if len(funding.Data) != 1 {
		t.Fatalf("fundings %d", len(funding.Data))
	}
	onlyField(e.cancel(funding.Data[0].ID, nil), "transactionId")

	// Unknown ids.
	wantRefusal(t, e.cancel("Transaction:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
	wantRefusal(t, e.cancel("nonsense", nil), http.StatusNotFound, "TRANSACTION_NOT_FOUND")

	// A bad body, on a cancellable transfer that stays as it was.
	r = e.do("POST", "/transfer-out", transferOutBody(fiat, ext.ID, 500), nil)
	var open wire.Transaction
	r.decode(t, &open)
	onlyField(e.cancel(open.ID, map[string]any{"reason": strings.Repeat("x", 256)}), "reason")
	onlyField(e.cancel(open.ID, map[string]any{"reason": "a\x07b"}), "reason")
	wantRefusal(t, e.cancel(open.ID, map[string]any{"reason": "r", "refund": true}), http.StatusBadRequest, "INVALID_INPUT")
	wantRefusal(t, e.do("POST", "/transactions/"+open.ID+"/cancel", nil, map[string]string{"Authorization": ""}), http.StatusUnauthorized, "UNAUTHORIZED")
	if got := e.transaction(open.ID); got.Status != "PENDING" {
		t.Fatalf("refused cancels left the transfer %s", got.Status)
	}
	// An agent's bearer token is not the platform's credential.
	_, token := e.connectAgent(p.customer.ID, policy(allPermissions...))
	wantRefusal(t, e.do("POST", "/transactions/"+open.ID+"/cancel", nil, bearer(token)), http.StatusUnauthorized, "UNAUTHORIZED")
	// Without a body it is cancelled.
	e.mustStatus(e.cancel(open.ID, nil), http.StatusOK)
}

// TestCancelRacesSettlement: a cancel racing the settlement worker on a
// due transfer: exactly one of them applies, and the money agrees with
// the winner, in the books too.
func TestCancelRacesSettlement(t *testing.T) { onBothStores(t, testCancelRacesSettlement) }

func testCancelRacesSettlement(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("race-cancel@example.com", 0)
	fiat := e.fiatAccount(p)
	const funded, amount = int64(100_000), int64(1_000)
	e.fund(fiat, funded)
	ext := e.destination(p, "12345")
	var completed, cancelled int64
	for round := range 12 {
		r := e.do("POST", "/transfer-out", transferOutBody(fiat, ext.ID, amount), nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		e.settle() // PROCESSING
		e.clock.Advance(time.Minute)
		var status int
		var settleErr error
		var wg sync.WaitGroup
		wg.Go(func() { status = e.cancel(x.ID, nil).status })
		wg.Go(func() { _, settleErr = e.svc.SettleDue(t.Context()) })
		wg.Wait()
		if settleErr != nil {
			t.Fatal(settleErr)
		}
		e.settle() // a worker that lost its claim to the cancel's lock comes again
		got := e.transaction(x.ID)
		switch {
		case status == http.StatusOK && got.Status == "FAILED" && got.FailureReason == "":
			cancelled++
		case status == http.StatusConflict && got.Status == "COMPLETED":
			completed++
		default:
			t.Fatalf("round %d: cancel %d, transaction %s %s", round, status, got.Status, got.FailureReason)
		}
		balances(t, e.account(fiat), funded-completed*amount, funded-completed*amount)
	}
	t.Logf("%d cancelled, %d settled", cancelled, completed)
	storetest.CheckBooks(t, e.store) // each HOLD posted or voided, once
}
