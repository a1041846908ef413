package bff

import (
	"encoding/json"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestStatementRoute: GET /api/internal-accounts/{id}/entries answers the
// cookie's own wallet's statement with the allowlisted query; another
// customer's account, a missing one and a malformed id are the same 404,
// and none of them reaches the service. The platform's ledger routes are
// not the browser's.
func TestStatementRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if r := h.do("GET", "/api/internal-accounts/"+newID("InternalAccount")+"/entries", "", nil); r.status != 401 {
		t.Fatalf("anonymous: %d %s", r.status, r.body)
	}
	h.login("owner@example.com")
	mine := h.svc.accountOf("owner@example.com").ID
	h.svc.addCustomer("other@example.com")
	theirs := h.svc.accountOf("other@example.com").ID

	h.svc.reset()
	r := h.do("GET", "/api/internal-accounts/"+mine+"/entries?limit=2&cursor=LedgerEntry:0199a3c4-0000-7000-8000-0000000000e1-2"+
		"&createdAfter=2025-10-01T00:00:00Z&createdBefore=2025-11-01T00:00:00Z&sortOrder=asc&customerId=x&accountId=y", "", nil)
	var list wire.List[wire.LedgerEntry]
	if r.status != 200 || json.Unmarshal(r.body, &list) != nil || len(list.Data) != 1 || list.Data[0].Side != "AVAILABLE" ||
		!strings.Contains(list.Data[0].Account, strings.TrimPrefix(mine, "InternalAccount:")) {
		t.Fatalf("own statement: %d %s", r.status, r.body)
	}
	fw := h.svc.forwarded()
	if len(fw) != 1 || fw[0].path != wire.BasePath+"/internal-accounts/"+mine+"/entries" {
		t.Fatalf("forwarded %v", paths(fw))
	}
	q := fw[0].query
	if len(q) != 5 || q.Get("limit") != "2" || q.Get("cursor") != "LedgerEntry:0199a3c4-0000-7000-8000-0000000000e1-2" ||
		q.Get("createdAfter") != "2025-10-01T00:00:00Z" || q.Get("createdBefore") != "2025-11-01T00:00:00Z" || q.Get("sortOrder") != "asc" {
		t.Errorf("upstream query %v", q)
	}

	h.svc.reset()
	missing := h.do("GET", "/api/internal-accounts/"+newID("InternalAccount")+"/entries", "", nil)
	if missing.status != 404 {
		t.Fatalf("missing: %d %s", missing.status, missing.body)
	}
	for name, id := range map[string]string{
		"another customer's": theirs,
		"malformed":          strings.ToUpper(mine),
		"another type":       strings.Replace(mine, "InternalAccount:", "ExternalAccount:", 1),
	} {
		r := h.do("GET", "/api/internal-accounts/"+id+"/entries?limit=1", "", nil)
		if r.status != 404 || !sameBody(r.body, missing.body) || !equalHeaders(r.header, missing.header) {
			t.Errorf("%s account: %d %v %s, want the missing one's %v %s", name, r.status, r.header, r.body, missing.header, missing.body)
		}
	}
	if fw := h.svc.forwarded(); len(fw) != 0 {
		t.Errorf("reached the service: %v", paths(fw))
	}

	// The books of the platform stay the platform's.
	for _, p := range []string{"/api/ledger/head", "/api/ledger/accounts", "/api/ledger/transactions/" + newID("LedgerTransaction")} {
		if r := h.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	if fw := h.svc.forwarded(); len(fw) != 0 {
		t.Errorf("reached the service: %v", paths(fw))
	}
}
