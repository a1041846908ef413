package bff

import (
	"net/http"
	"strings"
	"testing"
)

// TestViewAddressesServeThePage: the wallet routes in the browser, so a
// reload or a link to any view's address must get the page; an address that
// is no view gets the page too (it shows "Page not found") but with status
// 404 and no validator; a missing file keeps the short 404; /api stays the
// API's.
func TestViewAddressesServeThePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	index := h.do("GET", "/", "", nil)
	if index.status != http.StatusOK {
		t.Fatalf("GET /: %d", index.status)
	}
	for _, tc := range []struct {
		path   string
		status int
		page   bool
	}{
		{"/send", 200, true},
		{"/activity", 200, true},
		{"/activity/Transaction:019a1b2c-0000-7000-8000-000000000001", 200, true},
		{"/activity/Transaction:019a/receipt", 200, true},
		{"/activity/statement", 200, true},
		{"/recipients", 200, true},
		{"/recipients/new", 200, true},
		{"/recipients/ExternalAccount:019a", 200, true},
		{"/security", 200, true},
		{"/no-such-page", 404, true},
		{"/activity/a/b/c", 404, true},
		{"/send/", 404, true},
		{"/js/gone.js", 404, false},
		{"/api/no-such-route", 404, false},
	} {
		r := h.do("GET", tc.path, "", nil)
		if r.status != tc.status {
			t.Errorf("GET %s: status %d, want %d", tc.path, r.status, tc.status)
		}
		isPage := string(r.body) == string(index.body) && strings.HasPrefix(r.header.Get("Content-Type"), "text/html")
		if isPage != tc.page {
			t.Errorf("GET %s: the page %v, want %v (%s %q)", tc.path, isPage, tc.page, r.header.Get("Content-Type"), r.body)
		}
		if tc.status == 404 && r.header.Get("ETag") != "" {
			t.Errorf("GET %s: a 404 with an ETag", tc.path)
		}
		if tc.page && r.header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: the page without its CSP", tc.path)
		}
	}
}
