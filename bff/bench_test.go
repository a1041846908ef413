package bff

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// BenchmarkForwarding compares GET /auth/sessions called directly on the
// fake service with the same call through the BFF (CSRF check, session
// lookup, scoping, a fresh upstream request, relay), both over loopback
// HTTP with keep-alive. The difference of the two is the BFF's overhead
// (DESIGN.md budget: p50 ≤ 0.3 ms).
func BenchmarkForwarding(b *testing.B) {
	h := newHarness(b)
	h.login("bench@example.com")
	acct := h.svc.accountOf("bench@example.com").ID
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = h.srv.Listener(ln) }()
	b.Cleanup(func() {
		// b.Context() is already cancelled when Cleanup runs.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.srv.Shutdown(ctx)
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	run := func(b *testing.B, req func() *http.Request) {
		for b.Loop() {
			resp, err := client.Do(req())
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		run(b, func() *http.Request {
			r, _ := http.NewRequest("GET", h.up.URL+wire.BasePath+"/auth/sessions?accountId="+acct, nil)
			r.SetBasicAuth(testTokenID, testSecret)
			return r
		})
	})
	b.Run("via-bff", func(b *testing.B) {
		run(b, func() *http.Request {
			r, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/auth/sessions", nil)
			r.Header.Set("X-CSRF", "1")
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("Cookie", CookieName+"="+h.cookie)
			return r
		})
	})
}
