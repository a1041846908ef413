package main

import (
	"bufio"
	"context"
	"database/sql"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"paywallet/internal/bffclient"
	"paywallet/internal/telemetry"

	_ "modernc.org/sqlite"
)

// wallet is a wallet command run by a test, stopped by stop.
type wallet struct {
	base    string
	metrics string // the --metrics-listen address, when asked for
	stop    context.CancelFunc
	done    chan error
	drained chan struct{} // closed when the drain began
}

// runWallet runs the wallet command (embedded service, SQLite, dev
// mailbox) with extra args and h's tracer provider; the test ends it with
// w.stop (or its cleanup does).
func runWallet(t *testing.T, h hooks, args ...string) *wallet {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &wallet{stop: cancel, done: make(chan error, 1), drained: make(chan struct{})}
	urls, addrs := make(chan string, 1), make(chan string, 1)
	h.ready = func(u string) { urls <- u }
	h.metrics = func(a string) { addrs <- a }
	h.draining = func() { close(w.drained) }
	args = append([]string{"--listen", "127.0.0.1:0", "--log-level", "warn", "--mode", "sandbox", "--dev-mailbox",
		"--database", filepath.Join(t.TempDir(), "wallet.db")}, args...)
	go func() { w.done <- run(ctx, args, h) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			t.Error("wallet did not stop")
		}
	})
	select {
	case w.base = <-urls:
	case err := <-w.done:
		t.Fatalf("wallet exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("wallet did not start")
	}
	select {
	case w.metrics = <-addrs:
	default:
	}
	return w
}

// signIn signs a new browser in through w.
func signIn(t *testing.T, w *wallet, email string) *bffclient.Client {
	t.Helper()
	c := &bffclient.Client{Base: w.base}
	if _, _, err := c.LoginEmailOTP(t.Context(), email, func(email string) (string, error) {
		return c.MailboxCode(t.Context(), email)
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// openEvents opens the browser's event stream; the channel closes when
// the wallet ends it.
func openEvents(t *testing.T, base, cookie string) (ended <-chan struct{}) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/api/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/events: %d", resp.StatusCode)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
		}
	}()
	return done
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReadyzAsksTheEmbeddedService: the wallet's /readyz is the embedded
// service's too: with its database lacking this binary's last migration
// (as after a restore of an older backup) the instance takes no traffic,
// where before it answered ready while every payment would fail.
func TestReadyzAsksTheEmbeddedService(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ready.db")
	w := runWallet(t, hooks{}, "--database", db)
	if code, body := get(t, w.base+"/readyz"); code != 200 {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, w.base+"/readyz")
	if code != 503 || !strings.Contains(body, `"status":"not ready"`) || !strings.Contains(body, "payments service") {
		t.Errorf("/readyz with the service's database behind: %d %s", code, body)
	}
	if code, body := get(t, w.base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d %s (alive, only not ready)", code, body)
	}
}

// TestDrain: when the wallet is told to stop (SIGTERM, here its context),
// /readyz turns 503 "draining" at once while requests are still served for
// --drain-delay; then the event stream a browser holds open is ended, and
// the command returns nil promptly.
func TestDrain(t *testing.T) {
	w := runWallet(t, hooks{}, "--drain-delay", "1s")
	if code, body := get(t, w.base+"/readyz"); code != 200 || strings.TrimSpace(body) != `{"status":"ready"}` {
		t.Fatalf("/readyz before the stop: %d %s", code, body)
	}
	c := signIn(t, w, "drain@example.com")
	ended := openEvents(t, w.base, c.Cookie())

	stopped := time.Now()
	w.stop()
	select {
	case <-w.drained:
	case <-time.After(5 * time.Second):
		t.Fatal("the drain did not begin")
	}
	if code, body := get(t, w.base+"/readyz"); code != 503 || !strings.Contains(body, `"status":"draining"`) {
		t.Errorf("/readyz while draining: %d %s", code, body)
	}
	if code, body := get(t, w.base+"/healthz"); code != 200 {
		t.Errorf("/healthz while draining: %d %s", code, body)
	}
	if r, err := c.Do(t.Context(), "GET", "/api/me", nil, nil); err != nil || r.Status != 200 {
		t.Errorf("/api/me while draining: %v %d", err, r.Status)
	}
	select {
	case <-ended:
		t.Error("the event stream ended before the drain delay was over")
	default:
	}

	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("the wallet stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the wallet did not stop within 15 s of the drain with a stream open")
	}
	if d := time.Since(stopped); d < time.Second {
		t.Errorf("stopped after %v, before the drain delay", d)
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Error("the event stream was left open")
	}
	w.done <- nil // for the cleanup
}

// series matches one sample line of the text format.
var series = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? (\S+)$`)

// scrapeLines returns the sample lines of addr's /metrics.
func scrapeLines(t *testing.T, addr string) []string {
	t.Helper()
	code, body := get(t, "http://"+addr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	return series.FindAllString(body, -1)
}

// has reports whether a line is the series name with all of labels
// (each `key="value"`).
func has(lines []string, name string, labels ...string) bool {
next:
	for _, l := range lines {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		for _, lb := range labels {
			if !strings.Contains(l, lb) {
				continue next
			}
		}
		return true
	}
	return false
}

// TestMetricsListener: with --metrics-listen the wallet serves the BFF's
// series on a listener of its own (not on the public one): after an /api
// call, a sign-in and an open event stream they are all there.
func TestMetricsListener(t *testing.T) {
	w := runWallet(t, hooks{}, "--metrics-listen", "127.0.0.1:0")
	if w.metrics == "" {
		t.Fatal("no metrics listener")
	}
	if code, _ := get(t, w.base+"/metrics"); code == 200 {
		t.Error("/metrics is served on the public listener")
	}
	get(t, w.base+"/api/config")
	c := signIn(t, w, "metrics@example.com")
	openEvents(t, w.base, c.Cookie())
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		lines = scrapeLines(t, w.metrics)
		if has(lines, "bff_event_streams", " 1") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range [][]string{
		{"bff_http_requests_total", `route="/api/config"`, `method="GET"`, `status="200"`},
		{"bff_http_requests_total", `route="/api/login/verify"`, `method="POST"`},
		{"bff_http_request_duration_seconds_bucket", `route="/api/config"`},
		{"bff_event_streams", " 1"},
		{"bff_event_streams_total"},
		{"bff_webhooks_received_total", `result="new"`},
		{"bff_upstream_request_duration_seconds_count", `status="200"`},
		{"go_goroutines"},
	} {
		if !has(lines, want[0], want[1:]...) {
			t.Errorf("no series %v in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// TestEmbeddedServiceTelemetry: the embedded service shares the BFF's
// registry and tracer provider. One scrape shows both the bff_ and the
// payments_ series, and a browser's request makes one trace: the BFF's
// server span (under the browser's traceparent), its client span to the
// service, the service's server span under that, and the store's db.tx /
// db.query spans under the service's.
//
// It needs the service's instrumentation (wt/obs-service: the service's
// metrics and server spans, serviceconfig passing Registry and
// TracerProvider on) and the store's spans (wt/store): it passes once
// those are merged.
func TestEmbeddedServiceTelemetry(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewSDKTracerProvider("wallet-test", sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	w := runWallet(t, hooks{tracerProvider: tp}, "--metrics-listen", "127.0.0.1:0")

	const traceID, browserSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	c := &bffclient.Client{Base: w.base}
	r, err := c.Do(t.Context(), "POST", "/api/login/start", map[string]string{"email": "trace@example.com"},
		map[string]string{"traceparent": "00-" + traceID + "-" + browserSpan + "-01"})
	if err != nil || r.Status != 200 {
		t.Fatalf("login start: %v %d %s", err, r.Status, r.Body)
	}

	lines := scrapeLines(t, w.metrics)
	for _, want := range [][]string{
		{"bff_http_requests_total", `route="/api/login/start"`},
		{"payments_http_requests_total", `route="/customers"`},
		{"payments_db_commits_total"},
	} {
		if !has(lines, want[0], want[1:]...) {
			t.Errorf("no series %v in the one scrape", want)
		}
	}

	// The spans of the browser's trace, by id.
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			byID[s.SpanContext.SpanID()] = s
		}
	}
	parentOf := func(s tracetest.SpanStub) (tracetest.SpanStub, bool) {
		p, ok := byID[s.Parent.SpanID()]
		return p, ok
	}
	var bffServer, serviceServer, db int
	for _, s := range byID {
		scope := s.InstrumentationScope.Name
		switch {
		case s.SpanKind == trace.SpanKindServer && scope == "paywallet/bff":
			bffServer++
			if s.Parent.SpanID().String() != browserSpan {
				t.Errorf("the BFF's server span %q is not under the browser's span", s.Name)
			}
		case s.SpanKind == trace.SpanKindServer:
			serviceServer++
			client, ok := parentOf(s)
			if !ok || client.SpanKind != trace.SpanKindClient || client.InstrumentationScope.Name != "paywallet/bff" {
				t.Errorf("the service's server span %q is not under a client span of the BFF", s.Name)
			}
		case s.Name == "db.tx" || s.Name == "db.query":
			db++
			// Up the chain: a service server span before the BFF's.
			found := false
			for p, ok := parentOf(s); ok; p, ok = parentOf(p) {
				if p.SpanKind == trace.SpanKindServer {
					found = p.InstrumentationScope.Name != "paywallet/bff"
					break
				}
			}
			if !found {
				t.Errorf("%s span is not under the service's server span", s.Name)
			}
		}
	}
	if bffServer != 1 || serviceServer == 0 || db == 0 {
		names := []string{}
		for _, s := range byID {
			names = append(names, s.InstrumentationScope.Name+":"+s.Name)
		}
		t.Errorf("in the browser's trace: %d BFF server spans (want 1), %d service server spans, %d db spans (want some of each); spans %v",
			bffServer, serviceServer, db, names)
	}
}
