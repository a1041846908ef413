package bff

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"paywallet/shared/wire"
)

func TestValidID(t *testing.T) {
	t.Parallel()
	const u = "0199a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b"
	cases := []struct {
		typ, id string
		want    bool
	}{
		{"Quote", "Quote:" + u, true},
		{"ExternalAccount", "ExternalAccount:" + u, true},
		{"Quote", "Transaction:" + u, false},
		{"Quote", "quote:" + u, false},
		{"Quote", "Quote:" + strings.ToUpper(u), false},
		{"Quote", "Quote:" + u[:35], false},
		{"Quote", "Quote:" + u + "0", false},
		{"Quote", "Quote:" + strings.ReplaceAll(u, "-", "") + "----", false},
		{"Quote", "Quote:" + u[:8] + "/" + u[9:], false},
		{"Quote", "Quote:../../customers", false},
		{"Quote", "Quote:" + u + "?x=1", false},
		{"Quote", "Quote:" + u[:35] + "%", false},
		{"Quote", "", false},
		{"Agent", "Agent:" + u, false}, // not a type the BFF accepts
	}
	for _, tc := range cases {
		if got := validID(tc.typ, tc.id); got != tc.want {
			t.Errorf("validID(%q, %q) = %v, want %v", tc.typ, tc.id, got, tc.want)
		}
	}
}

// testRoutes exercises the scoping rules the production table will use.
var testRoutes = []route{
	// accountId is allowlisted in query on purpose: the binding must replace it.
	{method: "GET", path: "/auth/sessions", upstream: "/auth/sessions", query: []string{"accountId", "limit"},
		scope: scope{bind: boundTo("accountId", account)}},
	{method: "GET", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}",
		scope: scope{owner: boundTo("customerId", customer)}},
	{method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute",
		scope: scope{owner: boundTo("source.customerId", customer), check: "/quotes/{Quote}"}},
	{method: "GET", path: "/redirect", upstream: "/redirect", scope: scope{bind: boundTo("customerId", customer)}},
	{method: "GET", path: "/big", upstream: "/big", scope: scope{bind: boundTo("customerId", customer)}},
}

func TestScopedRoutes(t *testing.T) {
	t.Parallel()
	// SessionCheck: the test counts the calls that reach the service, and
	// the BFF's own look at the wallet session must not fall among them.
	h := newHarness(t, func(c *Config) { c.routes, c.SessionCheck = testRoutes, time.Hour })
	h.login("owner@example.com")
	mine := h.svc.accountOf("owner@example.com").CustomerID
	other := h.svc.addCustomer("other@example.com").ID

	const (
		myEA      = "ExternalAccount:0199a3c4-0000-7000-8000-000000000001"
		theirEA   = "ExternalAccount:0199a3c4-0000-7000-8000-000000000002"
		missingEA = "ExternalAccount:0199a3c4-0000-7000-8000-000000000003"
		myQuote   = "Quote:0199a3c4-0000-7000-8000-000000000011"
		theirQ    = "Quote:0199a3c4-0000-7000-8000-000000000012"
		missingQ  = "Quote:0199a3c4-0000-7000-8000-000000000013"
	)
	h.svc.mu.Lock()
	h.svc.external[myEA] = map[string]any{"id": myEA, "customerId": mine, "status": "ACTIVE"}
	h.svc.external[theirEA] = map[string]any{"id": theirEA, "customerId": other, "status": "ACTIVE"}
	h.svc.quotes[myQuote] = map[string]any{"id": myQuote, "source": map[string]any{"customerId": mine}}
	h.svc.quotes[theirQ] = map[string]any{"id": theirQ, "source": map[string]any{"customerId": other}}
	h.svc.mu.Unlock()

	r := h.do("GET", "/api/customers/external-accounts/"+myEA, "", nil)
	if r.status != 200 || !bytes.Contains(r.body, []byte(myEA)) {
		t.Fatalf("own external account: %d %s", r.status, r.body)
	}

	missing := h.do("GET", "/api/customers/external-accounts/"+missingEA, "", nil)
	theirs := h.do("GET", "/api/customers/external-accounts/"+theirEA, "", nil)
	if missing.status != 404 || theirs.status != 404 {
		t.Fatalf("missing %d, theirs %d; want 404 both", missing.status, theirs.status)
	}
	if !sameBody(missing.body, theirs.body) || !equalHeaders(missing.header, theirs.header) {
		t.Errorf("another customer's resource is distinguishable from a missing one:\n%v %s\n%v %s",
			missing.header, missing.body, theirs.header, theirs.body)
	}

	// Malformed ids never reach the service and look missing too.
	for _, id := range []string{
		"Quote:0199a3c4-0000-7000-8000-000000000011", // wrong type for the route
		"ExternalAccount:0199A3C4-0000-7000-8000-000000000001",
		"ExternalAccount:..%2F..%2Fcustomers",
		"ExternalAccount:0199a3c4-0000-7000-8000-00000000000",
		"ExternalAccount%3A0199a3c4-0000-7000-8000-000000000001",
	} {
		h.svc.reset()
		r := h.do("GET", "/api/customers/external-accounts/"+id, "", nil)
		if r.status != 404 || !sameBody(r.body, missing.body) {
			t.Errorf("id %q: %d %s", id, r.status, r.body)
		}
		if n := len(h.svc.reqs()); n != 0 {
			t.Errorf("id %q reached the service %d times", id, n)
		}
	}

	// An operation with effects is checked before it is sent.
	for _, tc := range []struct {
		id       string
		want     int
		executed bool
	}{
		{myQuote, 200, true},
		{theirQ, 404, false},
		{missingQ, 404, false},
	} {
		h.svc.reset()
		r := h.do("POST", "/api/quotes/"+tc.id+"/execute", `{}`, map[string]string{"Idempotency-Key": "k-1"})
		if r.status != tc.want {
			t.Errorf("execute %s: %d %s, want %d", tc.id, r.status, r.body, tc.want)
		}
		if tc.want == 404 && !sameBody(r.body, missing.body) {
			t.Errorf("execute %s: 404 body %s differs from the canonical one", tc.id, r.body)
		}
		executed := false
		for _, rq := range h.svc.reqs() {
			if strings.HasSuffix(rq.path, "/execute") {
				executed = true
				if rq.header.Get("Idempotency-Key") != "k-1" || string(rq.body) != `{}` {
					t.Errorf("execute forwarded without its key or body: %v %q", rq.header, rq.body)
				}
			}
		}
		if executed != tc.executed {
			t.Errorf("execute %s reached the service: %v, want %v", tc.id, executed, tc.executed)
		}
	}

	// A bound parameter replaces the browser's value, even when the route
	// also lets it through from the query.
	h.svc.reset()
	r = h.do("GET", "/api/auth/sessions?accountId=InternalAccount:0199a3c4-0000-7000-8000-000000000099&limit=5", "", nil)
	rs := h.svc.reqs()
	if r.status != 200 || len(rs) != 1 {
		t.Fatalf("sessions: %d %s, %d calls", r.status, r.body, len(rs))
	}
	if got := rs[0].query["accountId"]; len(got) != 1 || got[0] != h.svc.accountOf("owner@example.com").ID || rs[0].query.Get("limit") != "5" {
		t.Errorf("upstream query %v, want only the cookie's accountId and limit=5", rs[0].query)
	}

	// A redirect from the service is never followed or relayed.
	h.svc.reset()
	r = h.do("GET", "/api/redirect", "", nil)
	if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
		t.Errorf("redirect: %d %s", r.status, r.body)
	}
	if got := paths(h.svc.reqs()); len(got) != 1 || got[0] != "GET /redirect" {
		t.Errorf("the redirect was followed: %v", got)
	}

	// An answer larger than the BFF reads is not relayed cut short.
	r = h.do("GET", "/api/big", "", nil)
	if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
		t.Errorf("oversized answer: %d %.80s", r.status, r.body)
	}
}

// equalHeaders compares the headers that could tell two answers apart
// (not Request-Id: each answer has its own; the BFF's ids are all as long).
func equalHeaders(a, b http.Header) bool {
	for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control", "Set-Cookie"} {
		if a.Get(k) != b.Get(k) {
			return false
		}
	}
	return true
}

// requestIDField matches the "requestId" of an error body.
var requestIDField = regexp.MustCompile(`,?"requestId":"[^"]*"`)

// sameBody reports whether two answers' bodies are equal but for the
// "requestId" of error bodies, which differs from request to request.
func sameBody(a, b []byte) bool {
	return bytes.Equal(requestIDField.ReplaceAll(a, nil), requestIDField.ReplaceAll(b, nil))
}

func TestRouteTableIsChecked(t *testing.T) {
	t.Parallel()
	bad := map[string]route{
		"unknown id type":      {method: "GET", path: "/agents/:Agent", upstream: "/agents/{Agent}", scope: scope{owner: boundTo("customerId", customer)}},
		"param missing":        {method: "GET", path: "/quotes/:id", upstream: "/quotes/{Quote}", scope: scope{owner: boundTo("customerId", customer)}},
		"unscoped":             {method: "GET", path: "/quotes", upstream: "/quotes"},
		"check without owner":  {method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute", scope: scope{bind: boundTo("customerId", customer), check: "/quotes/{Quote}"}},
		"method":               {method: "TRACE", path: "/quotes", upstream: "/quotes", scope: scope{bind: boundTo("customerId", customer)}},
		"unclosed placeholder": {method: "GET", path: "/quotes/:Quote", upstream: "/quotes/{Quote", scope: scope{owner: boundTo("customerId", customer)}},
		// The action would reach the service before its answer is owner-checked.
		"action owned but unchecked": {method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute",
			scope: scope{owner: boundTo("source.customerId", customer)}},
		"delete owned but unchecked": {method: "DELETE", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}",
			scope: scope{owner: boundTo("customerId", customer)}},
		// A query parameter does not confine a resource named in the path.
		"read by id, bind only": {method: "GET", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}",
			scope: scope{bind: boundTo("customerId", customer)}},
		"action by id, bind only": {method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute",
			scope: scope{bind: boundTo("customerId", customer)}},
		// bind sets query parameters; the body (and a customerId in it) goes through unchanged.
		"create, bind only": {method: "POST", path: "/customers/external-accounts", upstream: "/customers/external-accounts",
			scope: scope{bind: boundTo("customerId", customer)}},
		"update, bind only": {method: "PATCH", path: "/customers", upstream: "/customers",
			scope: scope{bind: boundTo("customerId", customer)}},
		// shared is for reads of reference data that names no resource.
		"shared write": {method: "POST", path: "/discoveries", upstream: "/discoveries", scope: scope{shared: true}},
		"shared read by id": {method: "GET", path: "/customers/external-accounts/:ExternalAccount", upstream: "/customers/external-accounts/{ExternalAccount}",
			scope: scope{shared: true}},
		"shared and bound": {method: "GET", path: "/customers/external-accounts", upstream: "/customers/external-accounts",
			scope: scope{shared: true, bind: boundTo("customerId", customer)}},
		"shared and owned": {method: "GET", path: "/discoveries", upstream: "/discoveries",
			scope: scope{shared: true, owner: boundTo("customerId", customer)}},
		// param binds a path id to the cookie; it needs the id in the path,
		// every id of the template, and does not make a write safe.
		"param the path lacks": {method: "GET", path: "/internal-accounts/:InternalAccount/entries", upstream: "/internal-accounts/{InternalAccount}/entries",
			scope: scope{param: boundTo("Customer", customer)}},
		"param for one id of two": {method: "GET", path: "/customers/:Customer/external-accounts/:ExternalAccount", upstream: "/customers/{Customer}/external-accounts/{ExternalAccount}",
			scope: scope{param: boundTo("Customer", customer)}},
		"write bound by param alone": {method: "POST", path: "/internal-accounts/:InternalAccount/export", upstream: "/internal-accounts/{InternalAccount}/export",
			scope: scope{param: boundTo("InternalAccount", account)}},
		"shared and param": {method: "GET", path: "/internal-accounts/:InternalAccount/entries", upstream: "/internal-accounts/{InternalAccount}/entries",
			scope: scope{shared: true, param: boundTo("InternalAccount", account)}},
		// set binds a create's body: not a route that names a resource, nor a read.
		"set on a resource": {method: "POST", path: "/quotes/:Quote/execute", upstream: "/quotes/{Quote}/execute",
			scope: scope{set: []bodyField{field("customerId", customer)}}},
		"set on a read": {method: "GET", path: "/quotes", upstream: "/quotes", scope: scope{set: []bodyField{walletSource}}},
		// fill takes an id from the cookie: the path may not name it, the template must.
		"fill the path names": {method: "POST", path: "/sandbox/internal-accounts/:InternalAccount/fund", upstream: "/sandbox/internal-accounts/{InternalAccount}/fund",
			scope: scope{fill: boundTo("InternalAccount", account)}},
		"fill the template lacks": {method: "POST", path: "/sandbox/fund", upstream: "/sandbox/fund", scope: scope{fill: boundTo("InternalAccount", account)}},
		"fill beside a path id, unchecked": {method: "POST", path: "/quotes/:Quote/fund", upstream: "/internal-accounts/{InternalAccount}/quotes/{Quote}",
			scope: scope{fill: boundTo("InternalAccount", account)}},
		// signed confines a write only on the cookie's own account (param).
		"signed without param": {method: "POST", path: "/internal-accounts/:InternalAccount/export", upstream: "/internal-accounts/{InternalAccount}/export",
			scope: scope{signed: true, owner: boundTo("customerId", customer)}},
		"signed read": {method: "GET", path: "/internal-accounts/:InternalAccount", upstream: "/internal-accounts/{InternalAccount}",
			scope: scope{signed: true, param: boundTo("InternalAccount", account)}},
		// listed needs the one id it looks for and a listing bound to the cookie.
		"listed without id": {method: "DELETE", path: "/auth/credentials", upstream: "/auth/credentials",
			scope: scope{listed: &listing{path: "/auth/credentials", by: boundTo("accountId", account)}}},
		"listed unbound": {method: "DELETE", path: "/auth/credentials/:AuthMethod", upstream: "/auth/credentials/{AuthMethod}",
			scope: scope{listed: &listing{path: "/auth/credentials"}}},
		// The check must look at every resource the request acts on.
		"check of another id": {method: "POST", path: "/quotes/:Quote/transactions/:Transaction/confirm", upstream: "/transactions/{Transaction}/confirm",
			scope: scope{owner: boundTo("customerId", customer), check: "/quotes/{Quote}"}},
		"shared and set": {method: "GET", path: "/discoveries", upstream: "/discoveries", scope: scope{shared: true, fill: boundTo("InternalAccount", account)}},
	}
	for name, rt := range bad {
		_, err := New(Config{ServiceURL: "http://127.0.0.1:1/2025-10-13", PlatformCredential: testCred,
			OTPSignerPublicKey: testSignerKey, static: testSite(), routes: []route{rt}})
		if err == nil {
			t.Errorf("%s: New accepted %+v", name, rt)
		}
	}
	for _, rt := range routes {
		if err := rt.validate(); err != nil {
			t.Errorf("production route %s %s: %v", rt.method, rt.path, err)
		}
	}
}

func TestUpstreamFailures(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		_, _ = w.Write([]byte("<html>bad gateway</html>"))
	}))
	t.Cleanup(html.Close)
	for name, base := range map[string]string{"refused": downURL, "HTML error page": html.URL} {
		h := newHarness(t, func(c *Config) { c.ServiceURL = base + wire.BasePath })
		r := h.do("POST", "/api/login/start", `{"email":"down@example.com"}`, nil)
		if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		m := r.json(t)
		if m["status"] != float64(502) || m["message"] == "" {
			t.Errorf("%s: body %s", name, r.body)
		}
		if strings.Contains(string(r.body), "127.0.0.1") || strings.Contains(string(r.body), "bad gateway") {
			t.Errorf("%s: internal detail leaked: %s", name, r.body)
		}
		if h.cookie != "" {
			t.Errorf("%s: cookie set on failure", name)
		}
	}
}
