package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"paywallet/internal/telemetry"
	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// faultyStore is a store that, when told to, panics in every transaction
// or fails the transactions of one kind (Tx or TxFor) as a database that
// went away does: with an error wrapping store.ErrUnavailable.
type faultyStore struct {
	store.Store
	panics      atomic.Bool
	unavailable atomic.Value // "Tx", "TxFor" or ""
	// txAfterTxFor makes every Tx after the next TxFor fail: an
	// operation's turn runs, then what it writes after meets the failover.
	txAfterTxFor atomic.Bool
}

var errDatabaseGone = fmt.Errorf("store: commit: connection reset by peer: %w", store.ErrUnavailable)

func (f *faultyStore) Tx(ctx context.Context, fn func(store.Tx) error) error {
	if f.panics.Load() {
		panic("the store panicked")
	}
	if f.unavailable.Load() == "Tx" {
		return errDatabaseGone
	}
	return f.Store.Tx(ctx, fn)
}

func (f *faultyStore) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	if f.unavailable.Load() == "TxFor" {
		return errDatabaseGone
	}
	err := f.Store.TxFor(ctx, key, fn)
	if f.txAfterTxFor.Load() {
		f.unavailable.Store("Tx")
	}
	return err
}

// newFaultyEnv is newEnv over a faultyStore, logging JSON to the returned
// buffer.
func newFaultyEnv(t *testing.T, opts ...func(*Config)) (*env, *faultyStore, *syncBuffer) {
	base := newEnv(t, opts...) // only for its store, which the second service shares
	f := &faultyStore{Store: base.store}
	f.unavailable.Store("")
	logs := &syncBuffer{}
	e := newEnv(t, append(opts, func(c *Config) {
		c.Store = f
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})...)
	return e, f, logs
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %s: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRequestIDOnEveryAnswer: every answer, whatever it is, has a
// Request-Id: the caller's when valid, else a new one (a signed-retry
// challenge's id is never a request's id); an error body's requestId is
// the same id.
func TestRequestIDOnEveryAnswer(t *testing.T) {
	e, f, _ := newFaultyEnv(t)
	const challenge = "Request:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"
	answers := []struct {
		name, method, path string
		auth               bool
		panics             bool
		status             int
	}{
		{"success", "GET", "/customers", true, false, 200},
		{"refusal", "GET", "/customers", false, false, 401},
		{"unknown path", "GET", "/no-such-thing", true, false, 404},
		{"wrong method", "PUT", "/customers", true, false, 405},
		{"panic", "GET", "/customers", true, true, 500},
	}
	ids := []struct {
		name, sent string
		echoed     bool
	}{
		{"none", "", false},
		{"the caller's", "corr-7f3a:trace/1+x=y@z", true},
		{"invalid", "has space", false},
		{"too long", strings.Repeat("a", telemetry.MaxRequestIDLen+1), false},
		{"a challenge id", challenge, false},
	}
	for _, a := range answers {
		for _, id := range ids {
			t.Run(a.name+"/"+id.name, func(t *testing.T) {
				h := map[string]string{wire.HeaderRequestID: id.sent}
				if !a.auth {
					h["Authorization"] = ""
				}
				f.panics.Store(a.panics)
				r := e.do(a.method, a.path, nil, h)
				f.panics.Store(false)
				if r.status != a.status {
					t.Fatalf("status %d, want %d: %s", r.status, a.status, r.body)
				}
				got := r.header.Get(wire.HeaderRequestID)
				switch {
				case !telemetry.ValidRequestID(got):
					t.Fatalf("Request-Id %q is not a valid id", got)
				case id.echoed && got != id.sent:
					t.Fatalf("Request-Id %q, want the caller's %q", got, id.sent)
				case !id.echoed && (got == id.sent || !strings.HasPrefix(got, "req_")):
					t.Fatalf("Request-Id %q for a caller's %q: want a fresh one", got, id.sent)
				}
				if a.status >= 400 {
					var body struct {
						RequestID string `json:"requestId"`
					}
					r.decode(t, &body)
					if body.RequestID != got {
						t.Fatalf("body requestId %q, header %q", body.RequestID, got)
					}
				}
			})
		}
	}
	// Two requests without an id get two ids.
	a := e.do("GET", "/customers", nil, map[string]string{wire.HeaderRequestID: ""})
	b := e.do("GET", "/customers", nil, map[string]string{wire.HeaderRequestID: ""})
	if a.header.Get(wire.HeaderRequestID) == b.header.Get(wire.HeaderRequestID) {
		t.Fatal("two requests got one id")
	}
	// /healthz and /readyz too.
	for _, path := range []string{"/healthz", "/readyz"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set(wire.HeaderRequestID, "lb-probe-1")
		rec := httptest.NewRecorder()
		e.svc.Handler().ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get(wire.HeaderRequestID) != "lb-probe-1" {
			t.Errorf("%s: %d, Request-Id %q", path, rec.Code, rec.Header().Get(wire.HeaderRequestID))
		}
	}
}

// TestLogLinesCarryTheRequestID: the log line of a failing request carries
// its request_id, the id the caller was answered.
func TestLogLinesCarryTheRequestID(t *testing.T) {
	e, f, logs := newFaultyEnv(t)
	for _, tc := range []struct {
		name  string
		fault func()
		level string
	}{
		{"panic", func() { f.panics.Store(true) }, "ERROR"},
		{"database unavailable", func() { f.unavailable.Store("Tx") }, "WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fault()
			r := e.do("GET", "/customers", nil, map[string]string{wire.HeaderRequestID: "support-" + strings.ReplaceAll(tc.name, " ", "-")})
			f.panics.Store(false)
			f.unavailable.Store("")
			id := r.header.Get(wire.HeaderRequestID)
			if r.status < 500 || id != "support-"+strings.ReplaceAll(tc.name, " ", "-") {
				t.Fatalf("%d %s, Request-Id %q", r.status, r.body, id)
			}
			var found bool
			for _, l := range logs.lines(t) {
				if l["request_id"] == id {
					found = true
					if l["level"] != tc.level {
						t.Errorf("logged at %v, want %s: %v", l["level"], tc.level, l)
					}
				}
			}
			if !found {
				t.Fatalf("no log line has request_id %s:\n%v", id, logs.lines(t))
			}
		})
	}
}

// TestUnavailableMapping: an error that wraps store.ErrUnavailable,
// however deep, is a retryable 503; anything else the HTTP layer does not
// know stays a 500.
func TestUnavailableMapping(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter int
	}{
		{"bare", store.ErrUnavailable, 503, "SERVICE_UNAVAILABLE", 1},
		{"the payments name", payments.ErrUnavailable, 503, "SERVICE_UNAVAILABLE", 1},
		{"wrapped by the store", fmt.Errorf("store: begin: %w", store.ErrUnavailable), 503, "SERVICE_UNAVAILABLE", 1},
		{"wrapped twice by an operation", fmt.Errorf("service: load signer key: %w", fmt.Errorf("store: commit: %w", store.ErrUnavailable)), 503, "SERVICE_UNAVAILABLE", 1},
		{"joined", errors.Join(errors.New("settlement step"), errDatabaseGone), 503, "SERVICE_UNAVAILABLE", 1},
		{"serialization retries exhausted", fmt.Errorf("%w: gave up after 20 attempts: %w", store.ErrContention, errors.New("ERROR: could not serialize access (SQLSTATE 40001)")), 503, "SERVICE_UNAVAILABLE", 1},
		{"a 40001 not given up by the store", errors.New("store: could not serialize access due to concurrent update (40001)"), 500, "INTERNAL_ERROR", 0},
		{"flattened with %v", fmt.Errorf("step: %v", store.ErrUnavailable), 500, "INTERNAL_ERROR", 0},
		{"an operation's refusal", &payments.Error{Code: "QUOTE_NOT_FOUND", Message: "no"}, 404, "QUOTE_NOT_FOUND", 0},
		{"the mailer's 503", &payments.Error{Code: payments.CodeServiceUnavailable, Message: "later"}, 503, "SERVICE_UNAVAILABLE", 0},
		{"anything else", errors.New("boom"), 500, "INTERNAL_ERROR", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := httpError(tc.err)
			if e.Status != tc.status || e.Code != tc.code || e.RetryAfter != tc.retryAfter {
				t.Fatalf("%v: %d %s Retry-After %d", tc.err, e.Status, e.Code, e.RetryAfter)
			}
			if tc.retryAfter == 1 && !strings.Contains(e.Message, "same Idempotency-Key") {
				t.Fatalf("message %q", e.Message)
			}
			if status, _, _ := answerOf(tc.err); tc.status == 503 && status != 503 {
				t.Fatalf("answerOf: %d", status)
			}
		})
	}
}

// TestUnavailableIsRetryable: a payment whose transaction met a database
// that went away is answered 503 with Retry-After and is not stored under
// its Idempotency-Key: the retry with the same key runs and pays once, and
// a further retry replays that answer.
func TestUnavailableIsRetryable(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		e, f, _ := newFaultyEnv(t, append(opts, sandbox)...)
		p := e.newPayer("failover@example.com", 50_000)
		dest := e.destination(p, "12345")
		q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
		stamp := mustStamp(t, p.key, payloadOf(t, q))

		// The idempotency lookup answers (Tx); the payment's own
		// transaction (TxFor, the wallet's turn) meets the failover.
		f.unavailable.Store("TxFor")
		r := e.execute(q, stamp, wire.HeaderIdempotencyKey, "pay-once")
		f.unavailable.Store("")
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Fatalf("execute during a failover: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
		}
		if eb := r.errorBody(t); eb.Code != "SERVICE_UNAVAILABLE" || !strings.Contains(eb.Message, "exactly once") {
			t.Fatalf("body %s", r.body)
		}
		balances(t, e.account(p.account.ID), 50_000, 50_000)

		r = e.execute(q, stamp, wire.HeaderIdempotencyKey, "pay-once")
		if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry: %d replayed=%q %s", r.status, r.header.Get("Idempotent-Replayed"), r.body)
		}
		again := e.execute(q, stamp, wire.HeaderIdempotencyKey, "pay-once")
		if again.status != http.StatusOK || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, r.body) {
			t.Fatalf("the second retry: %d replayed=%q %s", again.status, again.header.Get("Idempotent-Replayed"), again.body)
		}
		balances(t, e.account(p.account.ID), 40_000, 50_000)
	})
}

// TestRefusalThatCannotBeKeptIs503: a refusal that cannot be stored under
// its Idempotency-Key because the database went away is answered 503, not
// as the refusal: unkept, a retry after a lost answer would run the
// request again and might be answered otherwise. The retry is refused and
// kept; the next one replays it.
func TestRefusalThatCannotBeKeptIs503(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		e, f, _ := newFaultyEnv(t, append(opts, sandbox)...)
		p := e.newPayer("poor-failover@example.com", 0)
		dest := e.destination(p, "12345")
		q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
		stamp := mustStamp(t, p.key, payloadOf(t, q))

		f.txAfterTxFor.Store(true) // the payment's turn refuses; recording the refusal meets the failover
		r := e.execute(q, stamp, wire.HeaderIdempotencyKey, "poor-failover")
		f.txAfterTxFor.Store(false)
		f.unavailable.Store("")
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("a refusal that could not be kept: %d %s", r.status, r.body)
		}
		r = e.execute(q, stamp, wire.HeaderIdempotencyKey, "poor-failover")
		if r.status != http.StatusBadRequest || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("the retry: %d replayed=%q %s", r.status, r.header.Get("Idempotent-Replayed"), r.body)
		}
		again := e.execute(q, stamp, wire.HeaderIdempotencyKey, "poor-failover")
		if again.status != http.StatusBadRequest || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the second retry: %d replayed=%q %s", again.status, again.header.Get("Idempotent-Replayed"), again.body)
		}
	})
}

// TestReplayedRefusalCarriesItsRequestID: a refusal stored under an
// Idempotency-Key is stored without a request id; each answer of it has
// its own request's.
func TestReplayedRefusalCarriesItsRequestID(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("replay@example.com", 0)
	dest := e.destination(p, "12345")
	q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
	stamp := mustStamp(t, p.key, payloadOf(t, q))
	var bodies []map[string]any
	for _, id := range []string{"first-try", "second-try"} {
		r := e.execute(q, stamp, wire.HeaderIdempotencyKey, "poor", wire.HeaderRequestID, id)
		if r.status != 400 || r.header.Get(wire.HeaderRequestID) != id {
			t.Fatalf("%s: %d %s", id, r.status, r.body)
		}
		var b map[string]any
		r.decode(t, &b)
		if b["requestId"] != id {
			t.Fatalf("%s: body %s", id, r.body)
		}
		delete(b, "requestId")
		bodies = append(bodies, b)
	}
	if fmt.Sprint(bodies[0]) != fmt.Sprint(bodies[1]) {
		t.Fatalf("the replay differs: %v / %v", bodies[0], bodies[1])
	}
}

func TestWithRequestID(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"status":400,"code":"X","message":"m"}`, `{"status":400,"code":"X","message":"m","requestId":"r1"}`},
		{"{\"status\":400}\n", `{"status":400,"requestId":"r1"}`},
		{`{}`, `{"requestId":"r1"}`},
		{`{"requestId":"old"}`, `{"requestId":"old"}`},
		{`[1]`, `[1]`},
	} {
		if got := string(withRequestID([]byte(tc.body), "r1")); got != tc.want {
			t.Errorf("withRequestID(%s) = %s, want %s", tc.body, got, tc.want)
		}
	}
}

// TestCorrelationRequestIDIsNoSignedRetry: a Request-Id that is not a
// challenge's id is the caller's correlation id: the first call of a
// signed operation is answered its challenge, not refused as half a
// signed retry; a challenge's id without a signature still is.
func TestCorrelationRequestIDIsNoSignedRetry(t *testing.T) {
	e := newEnv(t)
	p := e.newPayer("corr@example.com", 0)
	body := map[string]any{"perPayment": 1}
	r := e.do("PATCH", limitsPath(p), body, map[string]string{wire.HeaderRequestID: "bff-req-42"})
	if r.status != http.StatusAccepted || r.header.Get(wire.HeaderRequestID) != "bff-req-42" {
		t.Fatalf("first call with a correlation id: %d %s", r.status, r.body)
	}
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	if !payments.IsChallengeID(ch.RequestID) {
		t.Fatalf("challenge %+v", ch)
	}
	r = e.do("PATCH", limitsPath(p), body, map[string]string{wire.HeaderRequestID: ch.RequestID})
	if r.status != http.StatusUnauthorized || r.errorBody(t).Code != payments.CodeSignatureMissing {
		t.Fatalf("a challenge id without a signature: %d %s", r.status, r.body)
	}
	if got := r.header.Get(wire.HeaderRequestID); got == ch.RequestID || !telemetry.ValidRequestID(got) {
		t.Fatalf("the answer's Request-Id %q is the challenge's", got)
	}
	// A correlation id beside a signature is no challenge id.
	r = e.do("PATCH", limitsPath(p), body, map[string]string{wire.HeaderRequestID: "bff-req-43",
		wire.HeaderWalletSignature: mustStamp(t, p.key, ch.PayloadToSign)})
	if r.status != http.StatusUnauthorized || r.errorBody(t).Code != payments.CodeRequestIDMissing {
		t.Fatalf("a signature with a correlation id: %d %s", r.status, r.body)
	}
}

// TestReadyz: /readyz is 200 ready while the database answers, 503 not
// ready when it does not, 503 draining once Drain was called; /healthz
// stays what it was.
func TestReadyz(t *testing.T) {
	e, f, _ := newFaultyEnv(t)
	get := func(path string) (int, map[string]string) {
		req := httptest.NewRequest("GET", path, nil)
		rec := httptest.NewRecorder()
		e.svc.Handler().ServeHTTP(rec, req)
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %s", path, rec.Body)
		}
		return rec.Code, body
	}
	if code, body := get("/readyz"); code != 200 || body["status"] != "ready" {
		t.Fatalf("readyz: %d %v", code, body)
	}
	f.unavailable.Store("Tx") // the faulty store has no Ready: Ping
	if code, body := get("/readyz"); code != 503 || body["status"] != "not ready" || body["reason"] == "" {
		t.Fatalf("readyz without a database: %d %v", code, body)
	}
	f.unavailable.Store("")
	e.svc.Drain()
	if code, body := get("/readyz"); code != 503 || body["status"] != "draining" {
		t.Fatalf("readyz draining: %d %v", code, body)
	}
	if code, body := get("/healthz"); code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz while draining: %d %v", code, body)
	}
	if r := e.do("GET", "/customers", nil, nil); r.status != 200 {
		t.Fatalf("a request while draining: %d", r.status)
	}
	// The SQL store's own check: migrations and a database that answers.
	plain := newEnv(t)
	req := httptest.NewRequest("GET", "/readyz", nil)
	rec := httptest.NewRecorder()
	plain.svc.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("readyz on the SQL store: %d %s", rec.Code, rec.Body)
	}
}

// TestMetricsAfterAPayment scrapes the metrics after a payment and finds
// the HTTP series by route template (never a raw id) and the settlement
// worker's.
func TestMetricsAfterAPayment(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		reg := prometheus.NewRegistry()
		e := newEnv(t, append(opts, sandbox, func(c *Config) { c.Registry = reg })...)
		p := e.newPayer("metrics@example.com", 50_000)
		dest := e.destination(p, "12345")
		q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
		e.mustStatus(e.execute(q, mustStamp(t, p.key, payloadOf(t, q))), 200)
		e.mustStatus(e.do("GET", "/no/such/"+q.ID, nil, nil), 404)
		e.clock.Advance(10 * time.Minute)
		if n := e.settle(); n != 1 {
			t.Fatalf("settled %d", n)
		}
		text := scrape(t, reg)
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^payments_http_requests_total\{method="POST",route="/quotes/\{quoteId\}/execute",status="200"\} 1$`),
			regexp.MustCompile(`(?m)^payments_http_requests_total\{method="POST",route="/quotes",status="201"\} 1$`),
			regexp.MustCompile(`(?m)^payments_http_requests_total\{method="GET",route="unmatched",status="404"\} 1$`),
			regexp.MustCompile(`(?m)^payments_http_request_duration_seconds_count\{method="POST",route="/quotes/\{quoteId\}/execute"\} 1$`),
			regexp.MustCompile(`(?m)^payments_http_request_duration_seconds_bucket\{method="POST",route="/quotes/\{quoteId\}/execute",le="\+Inf"\} 1$`),
			regexp.MustCompile(`(?m)^payments_settlement_backlog 0$`),
			regexp.MustCompile(`(?m)^payments_settlement_lag_seconds [0-9.e+]+$`),
			regexp.MustCompile(`(?m)^payments_webhook_deliveries_total\{result="delivered"\} 0$`),
			// newPayer signed in with an e-mailed code.
			regexp.MustCompile(`(?m)^payments_sign_ins_total\{method="EMAIL_OTP",result="success"\} [1-9]$`),
			regexp.MustCompile(`(?m)^payments_sign_ins_total\{method="PASSKEY",result="failure"\} 0$`),
		} {
			if !want.MatchString(text) {
				t.Errorf("no %s in\n%s", want, grepLines(text, "payments_"))
			}
		}
		// The settlement lag is how overdue the payment was: a few
		// minutes of the test's clock, not hours.
		m := regexp.MustCompile(`(?m)^payments_settlement_lag_seconds ([0-9.e+]+)$`).FindStringSubmatch(text)
		if lag, _ := strconv.ParseFloat(m[1], 64); lag <= 0 || lag > 600 {
			t.Errorf("settlement lag %v", lag)
		}
		if strings.Contains(text, "Quote:") || strings.Contains(text, "Transaction:") {
			t.Errorf("a raw id in a label:\n%s", grepLines(text, "Quote:"))
		}
	})
}

func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	srv := httptest.NewServer(telemetry.MetricsHandler(reg))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// metricValue is the value of the one series (a regular expression
// matching its name and labels) in a scrape's text.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + series + ` ([0-9.e+-]+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in\n%s", series, grepLines(text, "payments_webhook"))
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServerSpan: a request with a traceparent makes a server span named
// by its route template, a child of the caller's span in its trace, with
// the method, route, status and request id.
func TestServerSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewSDKTracerProvider("test", sdktrace.WithSyncer(exp))
	e := newEnv(t, func(c *Config) { c.TracerProvider = tp })
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := e.do("GET", "/customers/Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", nil, map[string]string{
		"traceparent": "00-" + traceID + "-" + parentID + "-01", wire.HeaderRequestID: "span-req-1"})
	if r.status != 404 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var found bool
	for _, s := range exp.GetSpans() {
		if s.Name != "GET /customers/{customerId}" {
			continue
		}
		found = true
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		switch {
		case s.SpanKind.String() != "server":
			t.Errorf("kind %v", s.SpanKind)
		case s.SpanContext.TraceID().String() != traceID, s.Parent.SpanID().String() != parentID, !s.Parent.IsRemote():
			t.Errorf("trace %s parent %s", s.SpanContext.TraceID(), s.Parent.SpanID())
		case attrs["http.request.method"] != "GET", attrs["http.route"] != "/customers/{customerId}",
			attrs["http.response.status_code"] != "404", attrs["request.id"] != "span-req-1":
			t.Errorf("attributes %v", attrs)
		}
	}
	if !found {
		t.Fatalf("no server span among %d", len(exp.GetSpans()))
	}
}

// TestWebhookMetrics: the webhook worker's rounds set the backlog and lag
// of a failing endpoint, count its retries, and once it answers count the
// deliveries and their latency and bring backlog and lag back to 0.
func TestWebhookMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc), func(c *Config) { c.Registry = reg })
	rc.attach(e)
	rc.mu.Lock()
	rc.failAll = true
	rc.mu.Unlock()
	e.newWallet("hooks@example.com")
	e.deliver()
	e.clock.Advance(10 * time.Second)
	e.deliver()
	text := scrape(t, reg)
	if v := metricValue(t, text, `payments_webhook_deliveries_total\{result="retrying"\}`); v < 1 {
		t.Errorf("retrying %v", v)
	}
	if v := metricValue(t, text, `payments_webhook_backlog\{endpoint="[^"]+"\}`); v < 1 {
		t.Errorf("backlog of a failing endpoint %v", v)
	}
	if v := metricValue(t, text, `payments_webhook_lag_seconds`); v < 10 || v > 3600 {
		t.Errorf("lag of a failing endpoint %v", v)
	}

	rc.mu.Lock()
	rc.failAll = false
	rc.mu.Unlock()
	for range 5 {
		e.clock.Advance(time.Minute)
		e.deliver()
	}
	if len(rc.events()) == 0 {
		t.Fatal("nothing delivered")
	}
	text = scrape(t, reg)
	if v := metricValue(t, text, `payments_webhook_deliveries_total\{result="delivered"\}`); v != float64(len(rc.events())) {
		t.Errorf("delivered %v, the receiver accepted %d", v, len(rc.events()))
	}
	if v := metricValue(t, text, `payments_webhook_delivery_seconds_count`); v != float64(len(rc.events())) {
		t.Errorf("delivery latencies observed %v", v)
	}
	if v := metricValue(t, text, `payments_webhook_delivery_seconds_sum`); v < 10 {
		t.Errorf("the deliveries took %v s in all, the receiver failed for longer", v)
	}
	if v := metricValue(t, text, `payments_webhook_backlog\{endpoint="[^"]+"\}`); v != 0 {
		t.Errorf("backlog after delivery %v", v)
	}
	if v := metricValue(t, text, `payments_webhook_lag_seconds`); v != 0 {
		t.Errorf("lag after delivery %v", v)
	}
}

// TestWebhookMetricsForgetDeletedEndpoints: a deleted endpoint leaves the
// scrape: its backlog series and its part of the lag go at once when it
// is deleted through this instance (DELETE /webhooks/endpoints/{id}, or
// PATCH /config for the default one), and within a minute of the service's
// clock when another instance deleted it (here: straight in the store).
// Before, both stayed for the instance's life, and a deleted endpoint's
// old lag kept the lag gauge up while any other endpoint had work.
func TestWebhookMetricsForgetDeletedEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	old, recent := newReceiver(t), newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(old), func(c *Config) { c.Registry = reg })
	old.attach(e)
	recent.attach(e)
	for _, rc := range []*receiver{old, recent} {
		rc.mu.Lock()
		rc.failAll = true
		rc.mu.Unlock()
	}
	e.newWallet("old@example.com") // events only the default endpoint gets
	e.deliver()                    // (catalogued before the others start at the head)
	e.clock.Advance(10 * time.Minute)
	second := e.createEndpoint(map[string]any{"url": recent.url()})
	third := e.createEndpoint(map[string]any{"url": recent.url() + "/third"})
	e.newWallet("recent@example.com")
	e.deliver()
	e.clock.Advance(10 * time.Second)
	e.deliver()

	series := func(text string) map[string]float64 {
		got := map[string]float64{}
		for _, m := range regexp.MustCompile(`(?m)^payments_webhook_backlog\{endpoint="([^"]+)"\} ([0-9.e+-]+)$`).FindAllStringSubmatch(text, -1) {
			got[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
		return got
	}
	var list wire.List[payments.WebhookEndpoint]
	e.do("GET", "/webhooks/endpoints", nil, nil).decode(t, &list)
	def := ""
	for _, x := range list.Data {
		if x.ID != second.ID && x.ID != third.ID {
			def = x.ID
		}
	}
	text := scrape(t, reg)
	if got := series(text); len(got) != 3 || got[def] < 1 || got[second.ID] < 1 || got[third.ID] < 1 {
		t.Fatalf("backlog series %v, want the three failing endpoints (%s, %s, %s) with events", got, def, second.ID, third.ID)
	}
	if v := metricValue(t, text, `payments_webhook_lag_seconds`); v < 600 {
		t.Fatalf("lag %v with the default endpoint's events 10 minutes old", v)
	}

	// The default endpoint, removed with PATCH /config.
	e.mustStatus(e.do("PATCH", "/config", map[string]any{"webhookEndpoint": nil}, nil), http.StatusOK)
	text = scrape(t, reg)
	if got := series(text); len(got) != 2 || got[def] != 0 {
		t.Errorf("after PATCH /config removed the default endpoint %s: backlog series %v", def, got)
	}
	if v := metricValue(t, text, `payments_webhook_lag_seconds`); v < 1 || v >= 600 {
		t.Errorf("after removing the endpoint with the old events, lag %v; want the others' (seconds)", v)
	}

	e.mustStatus(e.do("DELETE", "/webhooks/endpoints/"+second.ID, nil, nil), http.StatusNoContent)
	if got := series(scrape(t, reg)); len(got) != 1 || got[third.ID] < 1 {
		t.Errorf("after deleting %s through this instance: backlog series %v", second.ID, got)
	}

	// Another instance deletes the last one.
	if err := e.store.Tx(context.Background(), func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(context.Background(), third.ID) }); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	e.deliver()
	text = scrape(t, reg)
	if got := series(text); len(got) != 0 {
		t.Errorf("a minute after another instance deleted %s: backlog series %v", third.ID, got)
	}
	if v := metricValue(t, text, `payments_webhook_lag_seconds`); v != 0 {
		t.Errorf("lag %v with no endpoint left", v)
	}
}

// TestMethodLabelIsBounded: a made-up request method is counted as
// "_OTHER": the label is read before authentication, so an anonymous
// caller must not mint a series per request. Found by review.
func TestMethodLabelIsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, func(c *Config) { c.Registry = reg })
	for i := range 50 {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, httptest.NewRequest(fmt.Sprintf("X%d", i), "/anything", nil))
	}
	text := scrape(t, reg)
	if n := strings.Count(text, `payments_http_requests_total{method="X`); n != 0 {
		t.Errorf("%d series from made-up methods", n)
	}
	if !strings.Contains(text, `payments_http_requests_total{method="_OTHER"`) {
		t.Errorf("made-up methods are not counted as _OTHER:\n%s", text)
	}
}
