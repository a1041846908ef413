package service

import (
	"net/http"
	"sync"
	"testing"

	"paywallet/shared/wire"
)

// TestOnPostgres runs the service's transactional paths on PostgreSQL, where
// transactions are SERIALIZABLE and a failed statement aborts the
// transaction: provisioning with its rollback on an e-mail conflict, the
// lock-out counter committed beside a refused request, and racing retries.
func TestOnPostgres(t *testing.T) {
	t.Run("login", func(t *testing.T) {
		e := newEnv(t, onPostgres(t))
		w := e.newWallet("pg@example.com")
		e.login(w, mustKey(t))
		if n := e.activeSessions(w); n != 1 {
			t.Fatalf("%d sessions", n)
		}
	})
	t.Run("email conflict rolls back the customer", func(t *testing.T) {
		e := newEnv(t, onPostgres(t))
		e.newWallet("dup@example.com")
		r := e.do("POST", "/customers", map[string]any{"platformCustomerId": "other", "customerType": "INDIVIDUAL", "email": "DUP@example.com"}, nil)
		if r.status != http.StatusConflict || r.errorBody(t).Code != "EMAIL_OTP_EMAIL_ALREADY_EXISTS" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		r = e.do("GET", "/customers?platformCustomerId=other", nil, nil)
		var list wire.List[wire.Customer]
		r.decode(t, &list)
		if len(list.Data) != 0 {
			t.Fatalf("refused customer stored: %s", r.body)
		}
	})
	t.Run("wrong codes are counted", func(t *testing.T) {
		e := newEnv(t, onPostgres(t))
		w := e.newWallet("lock@example.com")
		client := mustKey(t)
		am, code := e.challenge(w)
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		var last response
		for range 5 {
			last = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), nil)
		}
		if last.status != http.StatusTooManyRequests {
			t.Fatalf("fifth wrong code: %d %s", last.status, last.body)
		}
	})
	t.Run("external accounts: duplicate, default flag, verifier", func(t *testing.T) {
		e := newEnv(t, onPostgres(t))
		w := e.newWallet("ea-pg@example.com")
		first := usdBody(w.customer.ID, "000000000001")
		first["defaultUmaDepositAccount"] = true
		a := e.createAccount(first)
		if r := e.do("POST", "/customers/external-accounts", first, nil); r.status != http.StatusConflict {
			t.Fatalf("duplicate: %d %s", r.status, r.body)
		}
		second := usdBody(w.customer.ID, "000000000002")
		second["defaultUmaDepositAccount"] = true
		b := e.createAccount(second)
		if e.getAccount(a.ID).DefaultUmaDepositAccount || !e.getAccount(b.ID).DefaultUmaDepositAccount {
			t.Fatal("default flag did not move")
		}
		e.verify()
		if got := e.getAccount(a.ID); got.Status != "ACTIVE" {
			t.Fatalf("after verification: %s", got.Status)
		}
	})
	t.Run("racing retries make one session", func(t *testing.T) {
		e := newEnv(t, onPostgres(t))
		w := e.newWallet("race@example.com")
		client := mustKey(t)
		am, code := e.challenge(w)
		body := verifyBody(e.sealCode(am, code, client))
		path := "/auth/credentials/" + w.credential.ID + "/verify"
		var ch wire.SignedRequestChallenge
		e.do("POST", path, body, nil).decode(t, &ch)
		h := map[string]string{wire.HeaderWalletSignature: mustStamp(t, client, ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID}
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for range 8 {
			wg.Go(func() {
				if e.do("POST", path, body, h).status == http.StatusOK {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if ok != 1 || e.activeSessions(w) != 1 {
			t.Fatalf("%d successes, %d sessions", ok, e.activeSessions(w))
		}
	})
}
