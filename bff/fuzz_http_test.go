package bff

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzBFFRequest sends arbitrary requests (method, path, query, the
// browser's headers, cookie, body) through the BFF's real handlers, in
// front of the fake service: none may answer 500 or panic, and a refused
// request (4xx) must not leave a new cookie session behind. The seeds are
// every /api route with well-formed ids, signed in and not.
func FuzzBFFRequest(f *testing.F) {
	var panics atomic.Int64
	h := newHarness(f, func(c *Config) {
		// Only panics are looked for in the log: keeping every line of a
		// long fuzzing run would slow it down to a crawl.
		c.Logger = slog.New(slog.NewTextHandler(panicCounter{&panics}, nil))
		c.LoginPerIP = Limit{Max: 1 << 20, Window: time.Minute}
		c.LoginPerEmail = Limit{Max: 1 << 20, Window: time.Minute}
		c.SessionCheck = time.Hour             // the fake service's sessions do not end
		c.streamMaxAge = 50 * time.Millisecond // GET /api/events answers, briefly
	})
	h.login("fuzz@example.com")
	signedIn := h.cookie
	for _, rt := range h.srv.App().GetRoutes(true) {
		target := rt.Path
		for _, p := range strings.Split(rt.Path, "/") {
			if name, ok := strings.CutPrefix(p, ":"); ok {
				target = strings.Replace(target, p, name+":0199a3c4-0000-7000-8000-000000000001", 1)
			}
		}
		for _, body := range []string{"", "{}", `{"email":"fuzz@example.com","amount":100,"currency":"USD"}`} {
			f.Add(rt.Method, target, uint8(0), "application/json", []byte(body))
			f.Add(rt.Method, target, uint8(3), "application/json", []byte(body))
		}
	}
	f.Add("POST", "/api/quotes?x=%zz", uint8(1), "text/plain", []byte(`{"source":`))
	f.Add("GET", "/api/../../etc/passwd", uint8(0), "", []byte(nil))
	f.Add("GET", "/wasm/../index.html", uint8(2), "", []byte(nil))
	f.Add("POST", "/api/login/start", uint8(4), "application/json", []byte(`{"email":"a@b.c","x":`+strings.Repeat("[", 500)+`}`))

	store := h.srv.store.(*MemoryStore)
	f.Fuzz(func(t *testing.T, method, target string, mode uint8, contentType string, body []byte) {
		if !strings.HasPrefix(target, "/") || len(target) > 4096 {
			return
		}
		req, err := http.NewRequest(method, "http://localhost:8080"+target, bytes.NewReader(body))
		if err != nil {
			return // not a request line a client can send
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if mode&1 == 0 { // the page's own headers
			req.Header.Set("X-CSRF", "1")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		switch mode >> 1 & 3 {
		case 0:
			req.Header.Set("Cookie", CookieName+"="+signedIn)
		case 1:
			req.Header.Set("Cookie", CookieName+"="+strings.Repeat("A", 43))
		case 2:
			req.Header.Set("Origin", "https://evil.example")
		}
		if mode&8 != 0 {
			req.Header.Set("Idempotency-Key", target)
		}
		panicsBefore := panics.Load()
		sessions := store.Len()
		// Every request is answered, and soon: a hang is a failure too.
		resp, err := h.srv.App().Test(req, 10_000)
		if err != nil {
			t.Fatalf("%s %s (mode %d, %q, %q): %v", method, target, mode, contentType, body, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %s (mode %d): %d %s", method, target, mode, resp.StatusCode, b)
		}
		if panics.Load() != panicsBefore {
			t.Fatalf("%s %s (mode %d, %q, %q): a panic was logged", method, target, mode, contentType, body)
		}
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && store.Len() > sessions {
			t.Fatalf("%s %s refused with %d %s, but a cookie session was stored", method, target, resp.StatusCode, b)
		}
	})
}

// panicCounter is a log writer that counts the lines mentioning a panic.
type panicCounter struct{ n *atomic.Int64 }

func (p panicCounter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("panic")) {
		p.n.Add(1)
	}
	return len(b), nil
}
