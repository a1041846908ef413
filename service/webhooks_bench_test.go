package service

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

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

// BenchmarkOutboxCost measures what recording events costs create-quote
// plus execute (DESIGN: "webhooks on against off, events recorded"): one
// service, no workers, its events paused and recorded in alternation
// (Service.PauseEvents) on the same database and wallet, in rounds of
// outboxRound pairs a side, each round's order the reverse of the last's,
// so that the database's and the machine's drift falls on both. It
// reports ns per pair of each side and their ratio (off ns / on ns, the
// throughput ratio: ≥ 0.95).
func BenchmarkOutboxCost(b *testing.B) {
	for _, postgres := range []bool{false, true} {
		name := "sqlite"
		if postgres {
			name = "postgres"
		}
		b.Run(name, func(b *testing.B) {
			svc, pair := quoteExecuteService(b, true, false, postgres)
			const outboxRound = 50
			var off, on time.Duration
			side := func(paused bool) time.Duration {
				svc.PauseEvents(paused)
				start := time.Now()
				for range outboxRound {
					pair()
				}
				return time.Since(start)
			}
			n := 0
			for b.Loop() {
				// ABBA: a side that always ran first (or second) would
				// take what the other leaves behind (a checkpoint
				// every 1,000 log pages on SQLite) at a fixed phase.
				if n/outboxRound%2 == 0 {
					off += side(true)
					on += side(false)
				} else {
					on += side(false)
					off += side(true)
				}
				n += outboxRound
			}
			b.ReportMetric(float64(off.Nanoseconds())/float64(n), "off-ns/pair")
			b.ReportMetric(float64(on.Nanoseconds())/float64(n), "on-ns/pair")
			b.ReportMetric(float64(off)/float64(on), "on/off")
		})
	}
}

func benchQuoteExecute(b *testing.B, webhooks, workers, postgres bool) {
	_, pair := quoteExecuteService(b, webhooks, workers, postgres)
	for b.Loop() {
		pair()
	}
}

// quoteExecuteService starts a sandbox service for the benchmarks of this
// file (its endpoint a receiver that answers 204 at once, or events off)
// and returns it with a function that makes one create-quote + execute
// pair from a funded wallet through the HTTP handler.
func quoteExecuteService(b *testing.B, webhooks, workers, postgres bool) (*Service, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
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
	b.Cleanup(func() { st.Close() })
	cfg := Config{Store: st, Mailer: &mail.Mailbox{}, PlatformCredential: testCredential, AtRestKey: testAtRestKey,
		WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin}, Mode: ModeSandbox}
	if !webhooks {
		cfg.NoEvents = true
	} else {
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		b.Cleanup(rcv.Close)
		cfg.WebhookURL = rcv.URL
	}
	svc, err := New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if workers {
		done := make(chan struct{})
		go func() { defer close(done); svc.RunWorkers(ctx) }()
		b.Cleanup(func() { cancel(); <-done })
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
	return svc, func() {
		var q wire.Quote
		call("POST", "/quotes", quote, &q)
		call("POST", "/quotes/"+q.ID+"/execute", nil, nil, wire.HeaderWalletSignature, wire.SandboxSignature)
	}
}
