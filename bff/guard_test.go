package bff

import (
	"strings"
	"testing"
)

// apiTargets lists a request for every /api route the app has, own and
// mirrored, with each path parameter filled by a valid id, plus a path no
// route has.
func apiTargets(t *testing.T, h *harness) []struct{ method, path, body string } {
	t.Helper()
	out := []struct{ method, path, body string }{{"GET", "/api/no-such-route", ""}}
	seen := map[string]bool{}
	for _, rt := range h.srv.App().GetRoutes(true) {
		if !strings.HasPrefix(rt.Path, "/api/") || rt.Method == "HEAD" || seen[rt.Method+rt.Path] {
			continue
		}
		seen[rt.Method+rt.Path] = true
		p := rt.Path
		for _, typ := range rt.Params {
			p = strings.Replace(p, ":"+typ, typ+":0199a3c4-0000-7000-8000-000000000001", 1)
		}
		body := ""
		if rt.Method != "GET" {
			body = `{"email":"guard@example.com"}`
		}
		out = append(out, struct{ method, path, body string }{rt.Method, p, body})
	}
	if len(out) < 6 {
		t.Fatalf("only %d API routes found: %v", len(out), out)
	}
	return out
}

func TestSameOriginGuard(t *testing.T) {
	t.Parallel()
	for name, table := range map[string][]route{"production routes": nil, "test routes": testRoutes} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testSameOriginGuard(t, newHarness(t, func(c *Config) { c.routes = table }))
		})
	}
}

func testSameOriginGuard(t *testing.T, h *harness) {
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"same-origin fetch", nil, 200},
		{"no X-CSRF", map[string]string{"X-CSRF": ""}, 403},
		{"X-CSRF not 1", map[string]string{"X-CSRF": "true"}, 403},
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site is not same-origin", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"user-typed navigation", map[string]string{"Sec-Fetch-Site": "none"}, 403},
		{"Sec-Fetch-Site wins over a matching Origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost:8080"}, 403},
		{"no fetch metadata, own Origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "http://localhost:8080"}, 200},
		{"no fetch metadata, foreign Origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "http://evil.example"}, 403},
		{"no fetch metadata, other port", map[string]string{"Sec-Fetch-Site": "", "Origin": "http://localhost:9999"}, 403},
		{"no fetch metadata, https Origin on http", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://localhost:8080"}, 403},
		{"no fetch metadata, https Origin, untrusted X-Forwarded-Proto", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://localhost:8080", "X-Forwarded-Proto": "https"}, 403},
		{"no fetch metadata, https Origin, untrusted X-Forwarded-Ssl", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://localhost:8080", "X-Forwarded-Ssl": "on"}, 403},
		{"no fetch metadata, null Origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "null"}, 403},
		{"non-browser client with X-CSRF", map[string]string{"Sec-Fetch-Site": ""}, 200},
	}
	targets := apiTargets(t, h)
	for _, tc := range cases {
		for _, target := range targets {
			h.svc.reset()
			r := h.do(target.method, target.path, target.body, tc.hdr)
			if tc.want == 403 {
				if r.status != 403 || r.code(t) != "FORBIDDEN" {
					t.Errorf("%s: %s %s = %d %s, want 403 FORBIDDEN", tc.name, target.method, target.path, r.status, r.body)
				}
				if n := len(h.svc.reqs()); n != 0 {
					t.Errorf("%s: %s %s reached the service %d times", tc.name, target.method, target.path, n)
				}
				if r.header.Get("Set-Cookie") != "" {
					t.Errorf("%s: a refused request set a cookie", tc.name)
				}
				continue
			}
			if r.status == 403 {
				t.Errorf("%s: %s %s refused: %s", tc.name, target.method, target.path, r.body)
			}
		}
	}
}

// TestTrustedProxy: X-Forwarded-Proto counts only from a configured proxy.
func TestTrustedProxy(t *testing.T) {
	t.Parallel()
	// App.Test connections come from 0.0.0.0.
	h := newHarness(t, func(c *Config) { c.TrustedProxies = []string{"0.0.0.0/32"} })
	hdr := map[string]string{"Sec-Fetch-Site": "", "Origin": "https://localhost:8080", "X-Forwarded-Proto": "https"}
	if r := h.do("GET", "/api/config", "", hdr); r.status != 200 {
		t.Errorf("https Origin through a trusted proxy: %d %s", r.status, r.body)
	}
	hdr["X-Forwarded-Proto"] = ""
	if r := h.do("GET", "/api/config", "", hdr); r.status != 403 {
		t.Errorf("https Origin, trusted proxy says http: %d %s", r.status, r.body)
	}
}

func TestAnonymousGets401(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cookies := map[string]string{
		"no cookie":        "",
		"unknown session":  strings.Repeat("A", 43),
		"malformed cookie": "not-a-session-id",
	}
	for name, cookie := range cookies {
		for _, path := range []string{"/api/me", "/api/auth/sessions"} {
			hdr := map[string]string{}
			if cookie != "" {
				hdr["Cookie"] = CookieName + "=" + cookie
			}
			r := h.do("GET", path, "", hdr)
			if path == "/api/me" {
				// The question "who is signed in?" answers "nobody" (handleMe).
				if !r.nobody() {
					t.Errorf("%s: GET %s = %d %s, want 200 {\"signedIn\":false}", name, path, r.status, r.body)
				}
			} else if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
				t.Errorf("%s: GET %s = %d %s, want 401 UNAUTHORIZED", name, path, r.status, r.body)
			}
			if loc := r.header.Get("Location"); loc != "" {
				t.Errorf("%s: GET %s redirects to %q", name, path, loc)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("%s: Content-Type %q", name, ct)
			}
			sc := r.header.Get("Set-Cookie")
			if cookie == "" && sc != "" {
				t.Errorf("%s: anonymous request got Set-Cookie %q", name, sc)
			}
			if cookie != "" && (!strings.HasPrefix(sc, CookieName+"=;") || !strings.Contains(sc, "expires=Thu, 01 Jan 1970")) {
				t.Errorf("%s: stale cookie not cleared: Set-Cookie %q", name, sc)
			}
		}
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("anonymous requests reached the service %d times", n)
	}
}
