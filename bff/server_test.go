package bff

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesConfig(t *testing.T) {
	t.Parallel()
	good := func() Config {
		return Config{ServiceURL: "http://127.0.0.1:8081/2025-10-13", PlatformCredential: testCred,
			OTPSignerPublicKey: testSignerKey, static: testSite()}
	}
	if _, err := New(good()); err != nil {
		t.Fatalf("good config: %v", err)
	}
	compressed := good()
	compressed.OTPSignerPublicKey = "03" + strings.Repeat("ab", 32)
	if _, err := New(compressed); err != nil {
		t.Errorf("compressed signer key: %v", err)
	}
	bad := map[string]func(*Config){
		"no service URL":         func(c *Config) { c.ServiceURL = "" },
		"relative service URL":   func(c *Config) { c.ServiceURL = "/2025-10-13" },
		"ftp service URL":        func(c *Config) { c.ServiceURL = "ftp://host/2025-10-13" },
		"user info in URL":       func(c *Config) { c.ServiceURL = "http://u:p@host/2025-10-13" },
		"query in URL":           func(c *Config) { c.ServiceURL = "http://host/2025-10-13?x=1" },
		"no credential":          func(c *Config) { c.PlatformCredential = "" },
		"credential without :":   func(c *Config) { c.PlatformCredential = "justasecret" },
		"credential empty id":    func(c *Config) { c.PlatformCredential = ":secret" },
		"credential empty secr.": func(c *Config) { c.PlatformCredential = "id:" },
		"credential with space":  func(c *Config) { c.PlatformCredential = "id:sec ret" },
		"credential newline":     func(c *Config) { c.PlatformCredential = "id:secret\n" },
		"bad mode":               func(c *Config) { c.Mode = "test" },
		"no signer key":          func(c *Config) { c.OTPSignerPublicKey = "" },
		"short signer key":       func(c *Config) { c.OTPSignerPublicKey = "04abcd" },
		"signer key not hex":     func(c *Config) { c.OTPSignerPublicKey = "04" + strings.Repeat("zz", 64) },
		"signer key bad prefix":  func(c *Config) { c.OTPSignerPublicKey = "05" + strings.Repeat("ab", 64) },
		"negative IP limit":      func(c *Config) { c.LoginPerIP = Limit{Max: -1} },
		"negative e-mail window": func(c *Config) { c.LoginPerEmail = Limit{Window: -time.Minute} },
		"bad trusted proxy":      func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/33"} },
		"hostname as proxy":      func(c *Config) { c.TrustedProxies = []string{"proxy.internal"} },
	}
	for name, mutate := range bad {
		cfg := good()
		mutate(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		} else if strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: error mentions the secret: %v", name, err)
		}
	}
}

// TestShutdownWithKeepAlive holds an idle keep-alive connection open, as a
// browser tab does, and checks that Shutdown returns promptly.
func TestShutdownWithKeepAlive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.srv.Listener(ln) }()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/config", nil)
	req.Header.Set("X-CSRF", "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	// A second connection that sent nothing at all (a client's spare
	// connection, dialled and never used): it carries no request, so it is
	// ended once it has been silent for a second, instead of being waited
	// for until the grace period ends (quietListener; before it, Shutdown
	// returned DeadlineExceeded here).
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	time.Sleep(50 * time.Millisecond) // let the server accept it

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v, want nil: nothing was in flight", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	_ = raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.Copy(io.Discard, raw); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the silent connection was left open: %v", err)
	}
	select {
	case err := <-served:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("Listener returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Listener did not return after Shutdown")
	}
}

// TestShutdownClosesIdleKeepAlive checks that an idle keep-alive connection
// alone does not hold Shutdown up at all.
func TestShutdownClosesIdleKeepAlive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := h.serve()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for i := 0; i < 2; i++ {
		resp, err := client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	start := time.Now()
	if err := h.srv.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown with an idle keep-alive connection took %v", d)
	}
}

// TestShutdownWaitsForBegunRequest: half a request sent is a request in
// flight; Shutdown waits for it (here until its grace period ends).
func TestShutdownWaitsForBegunRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := h.serve()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /api/config HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := h.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want it to wait for the begun request until its grace period ends", err)
	}
}

// blockingTransport stands for a service that never answers: every request
// waits until its context ends, which is reported on ended.
type blockingTransport struct {
	entered chan struct{}
	ended   chan error
}

func newBlockingTransport() *blockingTransport {
	return &blockingTransport{entered: make(chan struct{}, 16), ended: make(chan error, 16)}
}

func (b *blockingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b.entered <- struct{}{}
	<-r.Context().Done()
	b.ended <- r.Context().Err()
	return nil, r.Context().Err()
}

// TestShutdownCancelsWaitingHandlers: a handler waiting on the service is
// cancelled when the grace period ends, and Shutdown says the period ran out.
func TestShutdownCancelsWaitingHandlers(t *testing.T) {
	t.Parallel()
	bt := newBlockingTransport()
	h := newHarness(t, func(c *Config) { c.Transport = bt })
	base := h.serve()
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/login/start", strings.NewReader(`{"email":"slow@example.com"}`))
		req.Header.Set("X-CSRF", "1")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case <-bt.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the service")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := h.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want context.DeadlineExceeded", err)
	}
	// The log says which request kept the shutdown waiting.
	if logs := h.logs.String(); !strings.Contains(logs, "grace period over") || !strings.Contains(logs, "POST /api/login/start for ") {
		t.Errorf("the log does not name the request in flight:\n%s", logs)
	}
	select {
	case err := <-bt.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the service call ended with %v, want it cancelled", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("the handler still waits on the service after Shutdown returned")
	}
	select {
	case <-answered:
	case <-time.After(2 * time.Second):
		t.Error("the client connection was left open")
	}
}

// TestAPIDeadline: an /api request gives up on a silent service after the
// overall deadline, however many calls it makes.
func TestAPIDeadline(t *testing.T) {
	t.Parallel()
	bt := newBlockingTransport()
	h := newHarness(t, func(c *Config) { c.Transport = bt; c.apiTimeout = 100 * time.Millisecond })
	start := time.Now()
	r := h.do("POST", "/api/login/start", `{"email":"deadline@example.com"}`, nil)
	if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
		t.Errorf("%d %s, want 502", r.status, r.body)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("answered after %v", d)
	}
	if !errors.Is(<-bt.ended, context.DeadlineExceeded) {
		t.Error("the service call did not end at the deadline")
	}
}

// TestPanicIsRecovered: a panic in a handler answers 500 INTERNAL_ERROR
// without details and the server keeps serving.
func TestPanicIsRecovered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Transport = panicTransport{} })
	r := h.do("POST", "/api/login/start", `{"email":"boom@example.com"}`, nil)
	if r.status != 500 || r.code(t) != "INTERNAL_ERROR" {
		t.Errorf("%d %s, want 500 INTERNAL_ERROR", r.status, r.body)
	}
	if strings.Contains(string(r.body), "kaboom") {
		t.Errorf("the panic value reached the browser: %s", r.body)
	}
	if !strings.Contains(h.logs.String(), "kaboom") || !strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("the panic was not logged:\n%s", h.logs)
	}
	if r := h.do("GET", "/api/config", "", nil); r.status != 200 {
		t.Errorf("after the panic: %d", r.status)
	}
}

type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("kaboom") }

// TestRoutingIsCaseSensitive: /API/... is not the API (and is not a page).
func TestRoutingIsCaseSensitive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, p := range []string{"/API/config", "/Api/me", "/INDEX.HTML"} {
		r := h.do("GET", p, "", map[string]string{"X-CSRF": "1", "Sec-Fetch-Site": "same-origin"})
		if r.status != 404 || strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d %s %q, want a plain 404", p, r.status, r.body, r.header.Get("Content-Type"))
		}
	}
}

// TestPageErrorsArePlain: errors on page paths are plain text, API errors JSON.
func TestPageErrorsArePlain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/index.html", 405},
		{"DELETE", "/", 405},
		{"PUT", "/js/app.js", 405},
		{"GET", "/missing.html", 404},
	} {
		r := h.do(tc.method, tc.path, "", nil)
		if r.status != tc.want || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s %s: %d %q %s, want a plain %d", tc.method, tc.path, r.status, r.header.Get("Content-Type"), r.body, tc.want)
		}
	}
	r := h.do("DELETE", "/api/me", "", nil)
	if r.status < 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("DELETE /api/me: %d %q, want a JSON error", r.status, r.header.Get("Content-Type"))
	}
}

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Unix(1_760_000_000, 0)}
	m := NewMemoryStore(clk.Now)
	ctx := context.Background()
	s := Session{Email: "a@example.com", CustomerID: "Customer:x"}
	if err := m.Put(ctx, "k", s, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Get(ctx, "k"); err != nil || got != s {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := m.Get(ctx, "other"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("absent key: %v", err)
	}
	clk.Advance(time.Minute)
	if _, err := m.Get(ctx, "k"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("expired key: %v", err)
	}
	if m.Len() != 0 {
		t.Errorf("expired entry kept")
	}
	_ = m.Put(ctx, "k", s, time.Minute)
	if err := m.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, "k"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("deleted key: %v", err)
	}
	if err := m.Delete(ctx, "k"); err != nil {
		t.Errorf("second delete: %v", err)
	}
	if err := m.Put(ctx, "k", s, 0); err == nil {
		t.Error("zero ttl accepted")
	}
	// Sweeping drops expired entries on later Puts.
	for i := 0; i < 255; i++ {
		_ = m.Put(ctx, "old"+string(rune('a'+i%26))+strings.Repeat("x", i), s, time.Second)
	}
	clk.Advance(2 * time.Second)
	for i := 0; i < 256; i++ {
		_ = m.Put(ctx, "new", s, time.Hour)
	}
	if m.Len() != 1 {
		t.Errorf("%d entries after sweep, want 1", m.Len())
	}
}

// TestEmbeddedSite serves the real pages of package web.
func TestEmbeddedSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.static = nil })
	r := h.do("GET", "/", "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `<script type="module" src="`+h.srv.assets.url("/js/app.js")+`">`) {
		t.Fatalf("GET /: %d", r.status)
	}
	for _, p := range []string{"/js/app.js", "/js/api.js", "/js/format.js", "/css/app.css", "/favicon.svg"} {
		if r := h.do("GET", p, "", nil); r.status != 200 {
			t.Errorf("GET %s = %d", p, r.status)
		}
	}
	if h.srv.assets.hasWasm {
		var cfg configResponse
		_ = json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &cfg)
		r := h.do("GET", cfg.WasmURL, "", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
		if r.status != 200 || r.header.Get("Content-Type") != "application/wasm" || r.header.Get("Content-Encoding") != "br" {
			t.Errorf("embedded wasm %s: %d %v", cfg.WasmURL, r.status, r.header)
		}
	} else {
		t.Log("the wasm module is not built; skipped serving it")
	}
}

// brokenStore is a session store whose database is gone.
type brokenStore struct{ SessionStore }

func (brokenStore) Get(context.Context, string) (Session, error) {
	return Session{}, errors.New("connection refused")
}

func TestHealthz(t *testing.T) {
	for _, tc := range []struct {
		name   string
		store  SessionStore
		status int
		body   string
	}{
		{"memory store", nil, 200, `{"status":"ok"}`},
		{"store unavailable", brokenStore{}, 503, `{"status":"unavailable"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Sessions = tc.store })
			r := h.do("GET", "/healthz", "", nil)
			if r.status != tc.status || strings.TrimSpace(string(r.body)) != tc.body || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("GET /healthz = %d %s (Cache-Control %q), want %d %s", r.status, r.body, r.header.Get("Cache-Control"), tc.status, tc.body)
			}
			if n := len(h.svc.reqs()); n != 0 {
				t.Fatalf("the health check called the service %d times", n)
			}
		})
	}
}

// TestServiceTransport: the default transport keeps enough idle
// connections for a busy BFF (the standard one keeps two per host).
func TestServiceTransport(t *testing.T) {
	up, err := newUpstream("http://127.0.0.1:1/2025-10-13", "a:b", nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := up.client.Transport.(*http.Transport)
	if !ok || tr == http.DefaultTransport || tr.MaxIdleConnsPerHost < 64 || tr.Proxy == nil {
		t.Fatalf("default transport %#v", up.client.Transport)
	}
}
