package bff

import (
	"strings"
	"testing"
)

func TestSameOriginGuard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
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
		{"no fetch metadata, null Origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "null"}, 403},
		{"non-browser client with X-CSRF", map[string]string{"Sec-Fetch-Site": ""}, 200},
	}
	for _, tc := range cases {
		for _, target := range []struct{ method, path, body string }{
			{"GET", "/api/config", ""},
			{"POST", "/api/login/start", `{"email":"guard@example.com"}`},
			{"POST", "/api/logout", ""},
			{"GET", "/api/no-such-route", ""},
		} {
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
			if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
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
