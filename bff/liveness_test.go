package bff

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// signedInRoutes lists every /api route that refuses an anonymous browser
// with 401, with its parameters filled in with well-formed ids.
func signedInRoutes(t *testing.T, h *harness) [][2]string {
	t.Helper()
	var out [][2]string
	seen := map[string]bool{}
	for _, rt := range h.srv.App().GetRoutes(true) {
		if !strings.HasPrefix(rt.Path, "/api/") || rt.Method == "HEAD" || rt.Method == "CONNECT" || rt.Method == "TRACE" || rt.Method == "OPTIONS" {
			continue
		}
		var parts []string
		for _, p := range strings.Split(rt.Path, "/") {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				typ := name
				switch {
				case name != "id":
				case strings.Contains(rt.Path, "/auth/sessions/"):
					typ = "Session"
				case strings.Contains(rt.Path, "/auth/credentials/"):
					typ = "AuthMethod"
				default:
					typ = "Transaction"
				}
				p = typ + ":0199a3c4-0000-7000-8000-000000000001"
			}
			parts = append(parts, p)
		}
		path := strings.Join(parts, "/")
		key := rt.Method + " " + path
		if seen[key] || strings.Contains(path, "*") {
			continue
		}
		seen[key] = true
		saved := h.cookie
		h.cookie = ""
		r := h.do(rt.Method, path, `{}`, map[string]string{"Idempotency-Key": "k-1"})
		h.cookie = saved
		if r.status == 401 {
			out = append(out, [2]string{rt.Method, path})
		}
	}
	if len(out) < 15 {
		t.Fatalf("only %d signed-in routes found: %v", len(out), out)
	}
	return out
}

// TestEveryRouteAfterRevocation: once the service no longer lists a wallet
// session (revoked from another device), the browser's cookie is refused
// with 401 on every signed-in /api route within a second, even on an
// instance that had just seen the session alive, and none of its requests
// reaches the service beyond the session listing.
func TestEveryRouteAfterRevocation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) {
		c.LoginPerIP = Limit{Max: 1000, Window: time.Minute}
		c.LoginPerEmail = Limit{Max: 1000, Window: time.Minute}
	})
	h.login("device-b@example.com")
	routes := signedInRoutes(t, h)

	// One signed-in cookie per route, each seen alive just now.
	cookies := make([]string, len(routes))
	for i := range routes {
		h.cookie = ""
		h.login("device-b@example.com")
		cookies[i] = h.cookie
		if r := h.do("GET", "/api/me", "", nil); !r.somebody() {
			t.Fatalf("me: %d %s", r.status, r.body)
		}
	}

	h.svc.revokeAll() // device A signs every other session out
	revoked := time.Now()
	h.svc.reset()
	time.Sleep(time.Second - time.Since(revoked))
	for i, rt := range routes {
		h.cookie = cookies[i]
		r := h.do(rt[0], rt[1], `{}`, map[string]string{"Idempotency-Key": "k-2"})
		if r.status != 401 || r.code(t) != codeUnauthorized {
			t.Errorf("%s %s with a revoked session's cookie, 1 s after: %d %s", rt[0], rt[1], r.status, r.body)
		}
		if h.cookie != "" {
			t.Errorf("%s %s: the cookie was not cleared", rt[0], rt[1])
		}
	}
	if fw := h.svc.forwarded(); len(fw) != 0 {
		t.Errorf("revoked cookies reached the service: %v", paths(fw))
	}
}

// TestLiveSessionsShareOneListing: concurrent checks of an account's
// sessions make one call to the service; a session missing from a listing
// is looked up once more; a failed listing is an error, not an answer.
func TestLiveSessionsShareOneListing(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	var mu sync.Mutex
	active := []string{"Session:a"}
	fail := false
	l := newLiveSessions(time.Hour, func(ctx context.Context, account string) ([]wire.Session, error) {
		calls.Add(1)
		<-release
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return nil, errors.New("service down")
		}
		var out []wire.Session
		for _, id := range active {
			out = append(out, wire.Session{ID: id})
		}
		return out, nil
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if ok, err := l.alive(t.Context(), "acct", "Session:a"); !ok || err != nil {
				t.Errorf("alive: %v %v", ok, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("20 concurrent checks made %d listings, want 1", n)
	}

	// A session newer than the listing: one more listing finds it.
	mu.Lock()
	active = append(active, "Session:b")
	mu.Unlock()
	if ok, err := l.alive(t.Context(), "acct", "Session:b"); !ok || err != nil {
		t.Errorf("new session: %v %v", ok, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d listings, want 2", n)
	}
	// Still listed and fresh: no call.
	if ok, _ := l.alive(t.Context(), "acct", "Session:a"); !ok || calls.Load() != 2 {
		t.Errorf("cached answer: %v, %d listings", ok, calls.Load())
	}
	// Revoked through this instance: forget, and the next check asks.
	mu.Lock()
	active = []string{"Session:b"}
	mu.Unlock()
	l.forget("acct")
	if ok, err := l.alive(t.Context(), "acct", "Session:a"); ok || err != nil {
		t.Errorf("revoked session: %v %v", ok, err)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	l.forget("acct")
	if ok, err := l.alive(t.Context(), "acct", "Session:b"); ok || err == nil {
		t.Errorf("service down: %v %v, want an error", ok, err)
	}
}
