package bff

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

// TestRequestIDOnEveryAnswer: every kind of answer carries a Request-Id
// (the browser's when valid, else a new one), and every error body the BFF
// writes itself carries the same id as "requestId".
func TestRequestIDOnEveryAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const mine = "corr-7f3a.b_c:d/e+f=g@h"
	for _, tc := range []struct {
		name, method, path, body string
		sent                     string // the browser's Request-Id ("" none)
		status                   int
		errorBody                bool // a JSON error of the BFF's own
		echoed                   bool // the answer's id is the one sent
	}{
		{"static file", "GET", "/js/app.js", "", "", 200, false, false},
		{"page", "GET", "/", "", "", 200, false, false},
		{"missing file (404)", "GET", "/js/gone.js", "", "", 404, false, false},
		{"api answer", "GET", "/api/config", "", "", 200, false, false},
		{"api answer, the browser's id", "GET", "/api/config", "", mine, 200, false, true},
		{"unknown api path (404)", "GET", "/api/nothing-here", "", "", 404, true, false},
		{"bff error (400)", "POST", "/api/login/start", `{"email":"not an address"}`, "", 400, true, false},
		{"bff error, the browser's id", "POST", "/api/login/start", `{"email":"not an address"}`, mine, 400, true, true},
		{"signed out (401)", "GET", "/api/customers/external-accounts", "", "", 401, true, false},
		{"invalid id replaced", "GET", "/api/config", "", "has space", 200, false, false},
		{"challenge id replaced", "GET", "/api/config", "", testRequestID, 200, false, false},
		{"webhook receipt refused (plain text)", "POST", WebhookPath, `{}`, "", 401, false, false},
		{"health", "GET", "/healthz", "", "", 200, false, false},
		{"readiness", "GET", "/readyz", "", "", 200, false, false},
		{"method Fiber does not know", "BREW", "/api/config", "", "", 400, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.sent != "" {
				hdr[wire.HeaderRequestID] = tc.sent
			}
			r := h.do(tc.method, tc.path, tc.body, hdr)
			if r.status != tc.status {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, r.status, r.body, tc.status)
			}
			id := r.header.Get(wire.HeaderRequestID)
			if !telemetry.ValidRequestID(id) {
				t.Fatalf("Request-Id %q", id)
			}
			if tc.echoed != (id == tc.sent) {
				t.Errorf("Request-Id %q with %q sent: echoed %v, want %v", id, tc.sent, id == tc.sent, tc.echoed)
			}
			if tc.errorBody {
				var e struct {
					Code      string `json:"code"`
					RequestID string `json:"requestId"`
				}
				if err := json.Unmarshal(r.body, &e); err != nil || e.Code == "" || e.RequestID != id {
					t.Errorf("error body %s: want requestId %q", r.body, id)
				}
			}
		})
	}
	// Two answers never share a fresh id.
	a, b := h.do("GET", "/api/config", "", nil), h.do("GET", "/api/config", "", nil)
	if a.header.Get(wire.HeaderRequestID) == b.header.Get(wire.HeaderRequestID) {
		t.Error("two requests got the same id")
	}
}

// TestRequestIDBeforeRouting: a request fasthttp refuses before any
// middleware runs (a body over the limit) is answered through the error
// handler, with an id of its own in the header and the body.
func TestRequestIDBeforeRouting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := h.serve()
	// The header announces a body over the limit; none follows (fasthttp
	// refuses on the Content-Length alone).
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /api/login/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-CSRF: 1\r\nContent-Length: %d\r\n\r\n", 300<<10)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	id := resp.Header.Get(wire.HeaderRequestID)
	if resp.StatusCode != 413 || !telemetry.ValidRequestID(id) || !strings.Contains(string(b), `"requestId":"`+id+`"`) {
		t.Fatalf("%d %s (Request-Id %q)", resp.StatusCode, b, id)
	}
}

// TestRequestIDGoesUpstream: calls to the service carry the BFF's request
// id (the browser's when valid), except a signed retry, whose challenge id
// goes as it came; every log line of the request carries request_id.
func TestRequestIDGoesUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("ids@example.com")

	h.svc.reset()
	r := h.do("GET", "/api/customers/external-accounts", "", map[string]string{wire.HeaderRequestID: "browser-1"})
	if r.status != 200 || r.header.Get(wire.HeaderRequestID) != "browser-1" {
		t.Fatalf("list: %d %s (Request-Id %q)", r.status, r.body, r.header.Get(wire.HeaderRequestID))
	}
	reqs := h.svc.reqs()
	if len(reqs) == 0 {
		t.Fatal("nothing reached the service")
	}
	for _, rq := range reqs {
		if got := rq.header.Get(wire.HeaderRequestID); got != "browser-1" {
			t.Errorf("%s %s went with Request-Id %q, want the request's browser-1", rq.method, rq.path, got)
		}
	}

	h.svc.reset()
	r = h.do("GET", "/api/customers/external-accounts", "", nil)
	id := r.header.Get(wire.HeaderRequestID)
	for _, rq := range h.svc.reqs() {
		if got := rq.header.Get(wire.HeaderRequestID); got != id {
			t.Errorf("%s %s went with Request-Id %q, want the BFF's %q", rq.method, rq.path, got, id)
		}
	}

	// A signed retry: the challenge id goes upstream; the answer has an id
	// of its own (a challenge id is no request id).
	h.cookie = ""
	h.do("POST", "/api/login/start", `{"email":"ids@example.com"}`, nil)
	body := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:` + testCode + `"}`
	h.do("POST", "/api/login/verify", body, nil)
	h.svc.reset()
	r = h.do("POST", "/api/login/verify", body, map[string]string{wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID})
	if r.status != 200 {
		t.Fatalf("signed retry: %d %s", r.status, r.body)
	}
	if got := r.header.Get(wire.HeaderRequestID); got == testRequestID || !telemetry.ValidRequestID(got) {
		t.Errorf("the signed retry was answered with Request-Id %q", got)
	}
	var verify *recorded
	for _, rq := range h.svc.reqs() {
		if strings.HasSuffix(rq.path, "/verify") {
			verify = &rq
		}
	}
	if verify == nil || verify.header.Get(wire.HeaderRequestID) != testRequestID {
		t.Fatalf("the signed retry did not go with its challenge id: %+v", verify)
	}
}

// roundTripFunc is a service answering with a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// unavailableService answers every call like a service whose database went
// away: 503 SERVICE_UNAVAILABLE with Retry-After and its own Request-Id.
func unavailableService(seen chan<- *http.Request) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		if seen != nil {
			seen <- r
		}
		body := `{"status":503,"code":"SERVICE_UNAVAILABLE","message":"The service lost its database for a moment (a failover). Retry the request with the same Idempotency-Key: it takes effect exactly once.","requestId":"svc-req-1"}`
		return &http.Response{StatusCode: 503, Request: r, Body: io.NopCloser(strings.NewReader(body)),
			Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"7"}, wire.HeaderRequestID: {"svc-req-1"}}}, nil
	}
}

// TestServiceUnavailableRelayed: a service 503 reaches the browser as it
// is (status, body, Retry-After), and the BFF's warning about it carries
// both ids: the request's and the service's answer's.
func TestServiceUnavailableRelayed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Transport = unavailableService(nil) })
	r := h.do("POST", "/api/login/start", `{"email":"down@example.com"}`, nil)
	if r.status != 503 || r.header.Get("Retry-After") != "7" || r.code(t) != "SERVICE_UNAVAILABLE" ||
		!strings.Contains(string(r.body), `"requestId":"svc-req-1"`) {
		t.Fatalf("login start with the service's database gone: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	id := r.header.Get(wire.HeaderRequestID)
	logs := h.logText()
	if !strings.Contains(logs, "request_id="+id) || !strings.Contains(logs, "upstream_request_id=svc-req-1") {
		t.Errorf("the log does not name request %s and the service's svc-req-1:\n%s", id, logs)
	}
}

// logText is what the BFF logged so far.
func (h *harness) logText() string {
	h.t.Helper()
	return h.logs.String()
}

// failingStore is a session store, limiter and event log whose database
// fails with err.
type failingStore struct {
	SessionStore
	err error
}

func (f failingStore) Get(context.Context, string) (Session, error) { return Session{}, f.err }
func (f failingStore) Allow(context.Context, string, Limit) (bool, time.Duration, error) {
	return false, 0, f.err
}

// errDBGone stands for bffpg.ErrUnavailable (bffpg imports this package).
var errDBGone = errors.New("bffpg: database unavailable")

// TestStoreUnavailable: the BFF's own database going away (an error
// wrapping Config.StoreUnavailable) answers 503 SERVICE_UNAVAILABLE with
// Retry-After: 1 and a message a person can act on, logged as a warning
// with the request's id; any other store failure stays a 500.
func TestStoreUnavailable(t *testing.T) {
	t.Parallel()
	gone := fmt.Errorf("get session: %w", errDBGone)
	cookie := "Cookie"
	wellFormed := strings.Repeat("A", 43)
	for _, tc := range []struct {
		name        string
		unavailable error // Config.StoreUnavailable
		sessions    bool  // the session store fails (else the limiter)
		status      int
	}{
		{"session store gone", errDBGone, true, 503},
		{"limiter gone", errDBGone, false, 503},
		{"session store broken otherwise", errDBGone, true, 500},
		{"sentinel not configured", nil, true, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := gone
			if tc.name == "session store broken otherwise" {
				err = errors.New("permission denied for table sessions")
			}
			h := newHarness(t, func(c *Config) {
				c.StoreUnavailable = tc.unavailable
				if tc.sessions {
					c.Sessions = failingStore{SessionStore: NewMemoryStore(time.Now), err: err}
				} else {
					c.Limiter = failingStore{err: err}
				}
			})
			var r *response
			if tc.sessions {
				r = h.do("GET", "/api/me", "", map[string]string{cookie: CookieName + "=" + wellFormed})
			} else {
				r = h.do("POST", "/api/login/start", `{"email":"someone@example.com"}`, nil)
			}
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			id := r.header.Get(wire.HeaderRequestID)
			body := r.json(t)
			if body["requestId"] != id {
				t.Errorf("body %s: requestId, want %q", r.body, id)
			}
			if tc.status != 503 {
				if r.header.Get("Retry-After") != "" || body["code"] != "INTERNAL_ERROR" {
					t.Errorf("%s (Retry-After %q), want a plain 500", r.body, r.header.Get("Retry-After"))
				}
				return
			}
			if r.header.Get("Retry-After") != "1" || body["code"] != "SERVICE_UNAVAILABLE" ||
				body["message"] != "We couldn't reach our servers for a moment. Please try again in a few seconds." {
				t.Errorf("%s (Retry-After %q)", r.body, r.header.Get("Retry-After"))
			}
			logs := h.logText()
			if !strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "request_id="+id) {
				t.Errorf("want one warning with request_id=%s:\n%s", id, logs)
			}
			if n := len(h.svc.reqs()); n != 0 {
				t.Errorf("the service was called %d times", n)
			}
		})
	}
}

// TestReadyz: /readyz is 200 while the session store answers and an
// embedded service is ready (Config.Ready), 503 when either is not, and
// 503 "draining" from Drain on, while /healthz and the rest are served as
// before; it never asks a remote service.
func TestReadyz(t *testing.T) {
	t.Parallel()
	notReady := func(context.Context) error { return errors.New("store: database not reachable") }
	ready := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name   string
		store  SessionStore
		ready  func(context.Context) error
		drain  bool
		status int
		body   string
	}{
		{"ready", nil, nil, false, 200, `{"status":"ready"}`},
		{"embedded service ready", nil, ready, false, 200, `{"status":"ready"}`},
		{"store unavailable", brokenStore{}, nil, false, 503, `{"status":"not ready","reason":"the session store does not answer"}`},
		{"embedded service not ready", nil, notReady, false, 503, `{"status":"not ready","reason":"the payments service in this process is not ready: its database does not answer, or lacks this binary's migrations (see the log)"}`},
		{"draining", nil, ready, true, 503, `{"status":"draining","reason":"the process is stopping"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Sessions, c.Ready = tc.store, tc.ready })
			if tc.drain {
				h.srv.Drain()
			}
			r := h.do("GET", "/readyz", "", nil)
			if r.status != tc.status || strings.TrimSpace(string(r.body)) != tc.body || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("GET /readyz = %d %s, want %d %s", r.status, r.body, tc.status, tc.body)
			}
			if tc.drain {
				if r := h.do("GET", "/healthz", "", nil); r.status != 200 {
					t.Errorf("draining: /healthz %d", r.status)
				}
				if r := h.do("GET", "/api/config", "", nil); r.status != 200 {
					t.Errorf("draining: /api/config %d", r.status)
				}
			}
			if n := len(h.svc.reqs()); n != 0 {
				t.Errorf("the readiness check called the service %d times", n)
			}
		})
	}
}

// TestDrainThenShutdown: Drain turns /readyz to 503 at once while an event
// stream stays open; Shutdown then ends the stream and returns promptly.
func TestDrainThenShutdown(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w, func(c *Config) { c.heartbeat = time.Hour })
	base := h.serve()
	cookie, customer := h.signedInAs("drain@example.com")
	stream := openStream(t, base, cookie, "")
	waitListeners(t, h, customer, 1)

	h.srv.Drain()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Fatalf("/readyz while draining: %d", resp.StatusCode)
	}
	select {
	case <-stream.ended:
		t.Fatal("Drain ended the event stream; only Shutdown should")
	case <-time.After(100 * time.Millisecond):
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v after %v", err, time.Since(start))
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v with a stream open", d)
	}
	select {
	case <-stream.ended:
	case <-time.After(2 * time.Second):
		t.Error("the event stream is still open after Shutdown")
	}
}

// scrape reads reg as Prometheus does (the text format of
// telemetry.MetricsHandler) and returns each sample line's value by series
// name and labels.
func scrape(t *testing.T, reg *prometheus.Registry) []sample {
	t.Helper()
	rec := httptest.NewRecorder()
	telemetry.MetricsHandler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	var out []sample
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable sample %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		smp := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, l := range labelPair.FindAllStringSubmatch(m[2], -1) {
			smp.labels[l[1]] = l[2]
		}
		out = append(out, smp)
	}
	return out
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// find returns the value of the first sample named name with (at least)
// labels; ok is false when there is none.
func find(samples []sample, name string, labels map[string]string) (v float64, ok bool) {
next:
	for _, s := range samples {
		if s.name != name {
			continue
		}
		for k, want := range labels {
			if s.labels[k] != want {
				continue next
			}
		}
		return s.value, true
	}
	return 0, false
}

// TestMetrics: after an /api call, a forwarded call, a webhook and an
// event stream, the BFF's series are on its registry, by route template
// (never the raw path) and status.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := telemetry.NewRegistry()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w, func(c *Config) { c.Registry = reg; c.heartbeat = time.Hour })
	base := h.serve()
	cookie, customer := h.signedInAs("metrics@example.com")
	h.cookie = cookie
	ea := newID("ExternalAccount")
	h.do("GET", "/api/config", "", nil)
	h.do("GET", "/api/customers/external-accounts/"+ea, "", nil)
	h.do("GET", "/api/nothing-here", "", nil)
	h.postWebhook("t=1,v1=bad", envelope(webhookID(1), "OUTGOING_PAYMENT.COMPLETED", customer, "COMPLETED"))
	h.deliver(w, webhookID(2), "OUTGOING_PAYMENT.COMPLETED", customer)
	stream := openStream(t, base, cookie, "")
	waitListeners(t, h, customer, 1)

	samples := scrape(t, reg)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64 // at least
	}{
		{"bff_http_requests_total", map[string]string{"method": "GET", "route": "/api/config", "status": "200"}, 1},
		{"bff_http_requests_total", map[string]string{"method": "GET", "route": "/api/customers/external-accounts/:ExternalAccount", "status": "404"}, 1},
		{"bff_http_requests_total", map[string]string{"method": "GET", "route": "/api", "status": "404"}, 1},
		{"bff_http_requests_total", map[string]string{"method": "POST", "route": WebhookPath, "status": "200"}, 1},
		{"bff_http_requests_total", map[string]string{"method": "GET", "route": "/api/events", "status": "200"}, 1},
		{"bff_http_request_duration_seconds_count", map[string]string{"method": "GET", "route": "/api/config"}, 1},
		{"bff_event_streams", nil, 1},
		{"bff_event_streams_total", nil, 1},
		{"bff_webhooks_received_total", map[string]string{"result": "rejected"}, 1},
		{"bff_webhooks_received_total", map[string]string{"result": "new"}, 1},
		{"bff_upstream_request_duration_seconds_count", map[string]string{"status": "200"}, 1},
		{"go_goroutines", nil, 1}, // the registry's own collectors
	} {
		v, ok := find(samples, tc.name, tc.labels)
		if !ok || v < tc.want {
			t.Errorf("%s%v = %v (found %v), want at least %v", tc.name, tc.labels, v, ok, tc.want)
		}
	}
	for _, smp := range samples {
		for _, v := range smp.labels {
			if strings.Contains(v, ea) {
				t.Errorf("%s has the raw path as a label: %s", smp.name, v)
			}
		}
	}

	// The stream closes: the gauge goes back to 0.
	stream.resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for n := 3; ; n++ {
		if v, _ := find(scrape(t, reg), "bff_event_streams", nil); v == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("bff_event_streams stays above 0 after the stream closed")
		}
		// A write finds the stream gone.
		h.srv.hub.publish(Event{ID: webhookID(n), Type: "TEST", CustomerID: customer, Body: []byte(`{}`)})
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTraces: a request with the browser's traceparent makes a server span
// in that trace (its parent the browser's span), a client span under it
// for each call to the service, and the service receives a traceparent of
// the same trace whose parent is that client span.
func TestTraces(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewSDKTracerProvider("bff-test", sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := newHarness(t, func(c *Config) { c.TracerProvider = tp })
	h.login("trace@example.com")
	exp.Reset()
	h.svc.reset()

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := h.do("GET", "/api/customers/external-accounts", "", map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	spans := exp.GetSpans()
	var server *tracetest.SpanStub
	clients := map[string]tracetest.SpanStub{} // by span id
	for i, s := range spans {
		switch s.SpanKind {
		case trace.SpanKindServer:
			server = &spans[i]
		case trace.SpanKindClient:
			clients[s.SpanContext.SpanID().String()] = s
		}
	}
	if server == nil {
		t.Fatalf("no server span among %d", len(spans))
	}
	if server.SpanContext.TraceID().String() != traceID || server.Parent.SpanID().String() != parentID || !server.Parent.IsRemote() {
		t.Errorf("server span %s in trace %s with parent %s, want trace %s under the browser's %s",
			server.Name, server.SpanContext.TraceID(), server.Parent.SpanID(), traceID, parentID)
	}
	if server.Name != "GET /api/customers/external-accounts" {
		t.Errorf("server span named %q", server.Name)
	}
	attrs := map[string]string{}
	for _, a := range server.Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["http.route"] != "/api/customers/external-accounts" || attrs["http.response.status_code"] != "200" ||
		attrs["request.id"] != r.header.Get(wire.HeaderRequestID) || attrs["http.request.method"] != "GET" {
		t.Errorf("server span attributes %v", attrs)
	}
	reqs := h.svc.reqs()
	if len(reqs) == 0 || len(clients) != len(reqs) {
		t.Fatalf("%d service calls, %d client spans", len(reqs), len(clients))
	}
	for _, rq := range reqs {
		tp := strings.Split(rq.header.Get("traceparent"), "-")
		if len(tp) != 4 || tp[1] != traceID {
			t.Errorf("%s %s went with traceparent %q, want trace %s", rq.method, rq.path, rq.header.Get("traceparent"), traceID)
			continue
		}
		c, ok := clients[tp[2]]
		if !ok || c.Parent.SpanID() != server.SpanContext.SpanID() {
			t.Errorf("%s %s: its traceparent's parent %s is not a client span under the server span", rq.method, rq.path, tp[2])
		}
	}
}
