package service

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"paywallet/service/mail"
	"paywallet/service/payments"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

// BenchmarkQuoteExecuteWebhooks measures create-quote plus execute through
// the HTTP handler on SQLite with events off (Config.NoEvents) and on (an
// endpoint that answers 204 at once, the delivery worker running), for the
// DESIGN budget "webhooks on against off: ≥ 0.9×". Compare the two ns/op
// of one run. "recorded" records the events without delivering them (no
// workers, against "off-idle"): what recording events costs the API.
func BenchmarkQuoteExecuteWebhooks(b *testing.B) {
	b.Run("off", func(b *testing.B) { benchQuoteExecute(b, false, true, false) })
	b.Run("on", func(b *testing.B) { benchQuoteExecute(b, true, true, false) })
	b.Run("off-idle", func(b *testing.B) { benchQuoteExecute(b, false, false, false) })
	b.Run("recorded", func(b *testing.B) { benchQuoteExecute(b, true, false, false) })
	b.Run("off-postgres", func(b *testing.B) { benchQuoteExecute(b, false, true, true) })
	b.Run("on-postgres", func(b *testing.B) { benchQuoteExecute(b, true, true, true) })
}

func benchQuoteExecute(b *testing.B, webhooks, workers, postgres bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var st *sqlstore.DB
	var err error
	if postgres {
		st, err = sqlstore.OpenPostgres(ctx, pgtest.Start(b).NewDatabase(b))
	} else {
		st, err = sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "bench.db"))
	}
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := Config{Store: st, Mailer: &mail.Mailbox{}, PlatformCredential: testCredential, AtRestKey: testAtRestKey,
		WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin}, Mode: ModeSandbox}
	if !webhooks {
		cfg.NoEvents = true
	} else {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		defer rcv.Close()
		cfg.WebhookURL = rcv.URL
	}
	svc, err := New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if workers {
		done := make(chan struct{})
		go func() { defer close(done); svc.RunWorkers(ctx) }()
		defer func() { cancel(); <-done }()
	}
	h := svc.Handler()
	call := func(method, path string, body any, out any, headers ...string) {
		var rdr *bytes.Reader
		if body != nil {
			j, _ := json.Marshal(body)
			rdr = bytes.NewReader(j)
		} else {
			rdr = bytes.NewReader(nil)
		}
		req := httptest.NewRequest(method, wire.BasePath+path, rdr)
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("tok_test", "s3cret-platform-value")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		if out != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
				b.Fatal(err)
			}
		}
	}
	var cust wire.Customer
	call("POST", "/customers", map[string]any{"platformCustomerId": "p-bench", "customerType": "INDIVIDUAL", "email": "bench@example.com"}, &cust)
	var accts wire.List[wire.InternalAccount]
	call("GET", "/customers/internal-accounts?customerId="+cust.ID, nil, &accts)
	acct := accts.Data[0].ID
	call("POST", "/sandbox/internal-accounts/"+acct+"/fund", map[string]any{"amount": payments.MaxSandboxFunding}, nil)
	var dest wire.ExternalAccount
	call("POST", "/customers/external-accounts", usdBody(cust.ID, "000000012345"), &dest)
	if _, err := svc.VerifyPending(ctx); err != nil {
		b.Fatal(err)
	}
	quote := map[string]any{"source": map[string]any{"sourceType": "ACCOUNT", "accountId": acct},
		"destination": map[string]any{"destinationType": "ACCOUNT", "accountId": dest.ID}, "lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 100}
	for b.Loop() {
		var q wire.Quote
		call("POST", "/quotes", quote, &q)
		call("POST", "/quotes/"+q.ID+"/execute", nil, nil, wire.HeaderWalletSignature, wire.SandboxSignature)
	}
}
