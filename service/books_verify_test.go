package service

import (
	"net/http"
	"testing"
	"time"

	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

// TestBooksVerify runs every kind of payment the service makes through it,
// in each status that moves money (quotes with every sandbox outcome, a
// just-in-time funded quote completed and failed, transfers out and in
// completed, failed and cancelled, a deposit, sandbox fundings, incoming
// UMA payments approved, rejected and refused, quotes left pending or
// expired), seals the books and verifies them: the verifier's table of
// what each status requires (package ledger, verify.go) agrees with what
// the service writes.
func TestBooksVerify(t *testing.T) { onBothStores(t, testBooksVerify) }

func testBooksVerify(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox, func(c *Config) { c.SettlementDelay, c.QuoteTTL = time.Second, 30*time.Second })...)
	// The test clock starts before the books opened (when the migration
	// ran, at the real time): move it past, so that every payment below is
	// held to its status's rule rather than exempt as an older one.
	e.clock.Advance(time.Since(e.clock.Now()) + time.Minute)
	p := e.newPayer("books@example.com", 100_000)
	status := map[string]string{} // transaction → the status it must reach
	dests := map[string]string{}
	dest := func(suffix string) string {
		if dests[suffix] == "" {
			dests[suffix] = e.destination(p, suffix).ID
		}
		return dests[suffix]
	}

	for suffix, want := range map[string]string{"12345": "COMPLETED", "12002": "FAILED", "12004": "FAILED",
		"12005": "REFUNDED", "12006": "REJECTED", "12007": "FAILED", "12003": "PROCESSING"} {
		q := e.quote(quoteBody(p, dest(suffix), "SENDING", 1_000))
		e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
		status[q.TransactionID] = want
	}
	expired := e.quote(quoteBody(p, dest("12346"), "SENDING", 100))
	for suffix, want := range map[string]string{"12347": "COMPLETED", "12002": "FAILED"} {
		q := e.quote(realtimeBody(p, "USD", dest(suffix), "SENDING", 1_000))
		e.mustStatus(e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"}), http.StatusOK)
		status[q.TransactionID] = want
	}

	fiat := e.fiatAccount(p)
	e.fund(fiat, 50_000)
	ok, bounce := dest("12348"), dest("12002")
	transfer := func(path string, body map[string]any, want string) string {
		r := e.do("POST", path, body, nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		status[x.ID] = want
		return x.ID
	}
	transfer("/transfer-out", transferOutBody(fiat, ok, 4_000), "COMPLETED")
	transfer("/transfer-out", transferOutBody(fiat, bounce, 3_000), "FAILED")
	e.mustStatus(e.cancel(transfer("/transfer-out", transferOutBody(fiat, ok, 2_000), "FAILED"), nil), http.StatusOK)
	transfer("/transfer-in", transferInBody(ok, p.account.ID, 2_500), "COMPLETED")
	transfer("/transfer-in", transferInBody(bounce, p.account.ID, 2_500), "FAILED")
	e.mustStatus(e.cancel(transfer("/transfer-in", transferInBody(ok, p.account.ID, 1_500), "FAILED"), nil), http.StatusOK)
	status[e.deposit(e.account(p.account.ID), 3_000).ID] = "COMPLETED"

	approved := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 1_200))
	e.mustStatus(e.do("POST", "/transactions/"+approved.ID+"/approve", nil, nil), http.StatusOK)
	status[approved.ID] = "COMPLETED"
	rejected := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 900))
	e.mustStatus(e.do("POST", "/transactions/"+rejected.ID+"/reject", nil, nil), http.StatusOK)
	status[rejected.ID] = "REJECTED"
	status[e.umaIn(umaReceive(p.customer.ID, "$fail.compliance.usd@sandbox.uma.money", 700)).ID] = "FAILED"

	for range 4 {
		e.clock.Advance(time.Second)
		e.settle()
	}
	e.clock.Advance(30 * time.Second)
	e.settle()
	status[expired.TransactionID] = "EXPIRED"
	status[e.quote(quoteBody(p, ok, "SENDING", 500)).TransactionID] = "PENDING"
	for id, want := range status {
		if got := e.transaction(id).Status; got != want {
			t.Fatalf("%s is %s, want %s", id, got, want)
		}
	}

	if _, err := e.svc.SealLedger(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, err := e.store.(*sqlstore.DB).VerifyLedger(t.Context(), sqlstore.VerifyOptions{})
	if err != nil {
		t.Fatalf("%v (%d problems: %v)", err, r.ProblemCount, r.Problems)
	}
	// Every payment above, and the two sandbox fundings, checked against
	// its status; every ledger transaction chained.
	if r.Exempt != 0 || r.Payments != int64(len(status)+2) || r.Unsealed != 0 || r.Sealed != r.Transactions || r.Transactions < 25 {
		t.Fatalf("report %+v", r)
	}
}
