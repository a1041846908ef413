package bff

import (
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestSignOutEverywhereLink: the e-mail link's token signs out without a
// cookie session; a signed-in browser's own session ends with it; a bad or
// missing token is a 400 naming token, and nothing reaches the service for
// a malformed one.
func TestSignOutEverywhereLink(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do("POST", "/api/sign-out-everywhere", `{"token":"good-token"}`, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"revokedSessions":2`) {
		t.Fatalf("good token: %d %s", r.status, r.body)
	}
	for _, body := range []string{`{"token":"used-token"}`, `{}`, `not json`} {
		r := h.do("POST", "/api/sign-out-everywhere", body, nil)
		if r.status != 400 || !strings.Contains(string(r.body), `"token"`) {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	h.login("linked@example.com")
	if h.cookie == "" {
		t.Fatal("not signed in")
	}
	if r := h.do("POST", "/api/sign-out-everywhere", `{"token":"good-token"}`, nil); r.status != 200 {
		t.Fatalf("signed in: %d %s", r.status, r.body)
	}
	if h.cookie != "" {
		t.Fatal("the browser's own session outlived the link")
	}
}

// TestEndUserHeaders: every call the BFF makes for a browser tells the
// service the browser's address and its name, for the security log.
func TestEndUserHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("device@example.com")
	const ua = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"
	if r := h.do("GET", "/api/auth/sessions", "", map[string]string{"User-Agent": ua}); r.status != 200 {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	last := h.svc.requests[len(h.svc.requests)-1]
	if got := last.header.Get(wire.HeaderEndUserDevice); got != "Chrome on Android" {
		t.Errorf("device %q", got)
	}
	if got := last.header.Get(wire.HeaderEndUserIP); got == "" {
		t.Error("no end-user address")
	}
}
