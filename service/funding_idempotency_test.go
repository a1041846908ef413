package service

import (
	"net/http"
	"sync"
	"testing"

	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

// TestSandboxFundingIdempotencyKey (issue 14, defect 7): sandbox funding
// honours Idempotency-Key as quotes and executes do. The same key and body
// credit once and replay the first answer; the key with another body is
// refused with the 409 the quote endpoint gives; sixteen requests racing
// with one key credit once.
func TestSandboxFundingIdempotencyKey(t *testing.T) {
	onBothStores(t, testSandboxFundingIdempotencyKey)
}

func testSandboxFundingIdempotencyKey(t *testing.T, opts ...func(*Config)) {
	key := func(k string) map[string]string { return map[string]string{wire.HeaderIdempotencyKey: k} }
	// On PostgreSQL the subtests share one database: each has its own payer.
	setup := func(t *testing.T, email string) (*env, payer, string) {
		e := newEnv(t, append(opts, sandbox)...)
		p := e.newPayer(email, 0)
		return e, p, "/sandbox/internal-accounts/" + p.account.ID + "/fund"
	}

	t.Run("same key twice credits once", func(t *testing.T) {
		e, p, path := setup(t, "fund-twice@example.com")
		first := e.do("POST", path, map[string]any{"amount": 500}, key("f-1"))
		e.mustStatus(first, http.StatusOK)
		again := e.do("POST", path, map[string]any{"amount": 500}, key("f-1"))
		if again.status != http.StatusOK || string(again.body) != string(first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %v %s, first answer %s", again.status, again.header, again.body, first.body)
		}
		balances(t, e.account(p.account.ID), 500, 500)
		if n := e.incoming(p); n != 1 {
			t.Fatalf("%d INCOMING transactions after one funding sent twice", n)
		}
		// Without a key every request is its own funding.
		e.fund(p.account.ID, 1)
		e.fund(p.account.ID, 1)
		balances(t, e.account(p.account.ID), 502, 502)
	})

	t.Run("same key, another body", func(t *testing.T) {
		e, p, path := setup(t, "fund-reuse@example.com")
		e.mustStatus(e.do("POST", path, map[string]any{"amount": 500}, key("f-1")), http.StatusOK)
		other := e.do("POST", path, map[string]any{"amount": 600}, key("f-1"))
		// The answer POST /quotes gives for the same misuse.
		dest := e.destination(p, "12345")
		q := quoteBody(p, dest.ID, "SENDING", 100)
		e.mustStatus(e.do("POST", "/quotes", q, key("q-1")), http.StatusCreated)
		q["lockedCurrencyAmount"] = 200
		quoteReuse := e.do("POST", "/quotes", q, key("q-1"))
		if other.status != http.StatusConflict || string(other.body) != string(quoteReuse.body) {
			t.Errorf("key reused for another amount: %d %s; POST /quotes answers %d %s", other.status, other.body, quoteReuse.status, quoteReuse.body)
		}
		balances(t, e.account(p.account.ID), 500, 500)
	})

	t.Run("16 concurrent with one key", func(t *testing.T) {
		e, p, path := setup(t, "fund-race@example.com")
		const n = 16
		answers := make([]response, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range answers {
			wg.Go(func() {
				<-start
				answers[i] = e.do("POST", path, map[string]any{"amount": 250}, key("f-race"))
			})
		}
		close(start)
		wg.Wait()
		for i, r := range answers {
			if r.status != http.StatusOK || string(r.body) != string(answers[0].body) {
				t.Errorf("racer %d: %d %s; racer 0: %d %s", i, r.status, r.body, answers[0].status, answers[0].body)
				break
			}
		}
		balances(t, e.account(p.account.ID), 250, 250)
		if got := e.incoming(p); got != 1 {
			t.Fatalf("%d INCOMING transactions after %d requests with one key", got, n)
		}
		storetest.CheckBooks(t, e.store)
	})
}

// incoming counts the payer's INCOMING transactions (fundings).
func (e *env) incoming(p payer) int {
	e.t.Helper()
	r := e.do("GET", "/transactions?type=INCOMING&limit=100&customerId="+p.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list wire.List[wire.Transaction]
	r.decode(e.t, &list)
	return len(list.Data)
}
