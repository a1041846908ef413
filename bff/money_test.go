package bff

import (
	"encoding/json"
	"testing"
)

// TestMoneyRoutes: a quote always pays from the cookie's wallet, whatever
// source the browser names; sandbox funding goes to the cookie's wallet;
// the transaction list is bound to the cookie's customer.
func TestMoneyRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("payer@example.com")
	mine := h.svc.accountOf("payer@example.com")
	other := h.svc.addCustomer("victim@example.com").ID

	h.svc.reset()
	r := h.do("POST", "/api/quotes", `{"source":{"sourceType":"ACCOUNT","accountId":"InternalAccount:0199a3c4-0000-7000-8000-000000000099","customerId":"`+other+`"},
		"destination":{"destinationType":"ACCOUNT","accountId":"ExternalAccount:0199a3c4-0000-7000-8000-000000000001"},
		"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`, map[string]string{"Idempotency-Key": "q-1"})
	if r.status != 201 {
		t.Fatalf("create quote: %d %s", r.status, r.body)
	}
	rs := h.svc.forwarded()
	if got := paths(rs); len(got) != 1 || got[0] != "POST /quotes" || rs[0].header.Get("Idempotency-Key") != "q-1" {
		t.Fatalf("upstream calls %v", paths(rs))
	}
	var sent map[string]any
	if err := json.Unmarshal(rs[0].body, &sent); err != nil {
		t.Fatal(err)
	}
	src := sent["source"].(map[string]any)
	if src["accountId"] != mine.ID || src["customerId"] != mine.CustomerID || src["sourceType"] != "ACCOUNT" {
		t.Fatalf("source forwarded as %v, want the cookie's wallet %s", src, mine.ID)
	}
	if sent["lockedCurrencyAmount"] != float64(1000) {
		t.Fatalf("body not forwarded: %s", rs[0].body)
	}
	if r := h.do("POST", "/api/quotes", `[1]`, nil); r.status != 400 {
		t.Fatalf("non-object body: %d", r.status)
	}

	// encoding/json takes a key equal to a field's name but for case
	// ("ſource" folds to "source") as that field, the last one winning: a
	// browser that spells the source so must not outvote the cookie.
	for _, spelled := range []string{"Source", "SOURCE", "ſource", "sourcE"} {
		h.svc.reset()
		body := `{"source":{"sourceType":"ACCOUNT"},"` + spelled + `":{"sourceType":"ACCOUNT","accountId":"InternalAccount:0199a3c4-0000-7000-8000-000000000099","customerId":"` + other + `"},
			"destination":{"destinationType":"ACCOUNT","accountId":"ExternalAccount:0199a3c4-0000-7000-8000-000000000001"},
			"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000}`
		if r := h.do("POST", "/api/quotes", body, nil); r.status != 201 {
			t.Fatalf("%s: create quote: %d %s", spelled, r.status, r.body)
		}
		rs := h.svc.forwarded()
		var as struct {
			Source struct {
				AccountID  string `json:"accountId"`
				CustomerID string `json:"customerId"`
			} `json:"source"`
		}
		if err := json.Unmarshal(rs[len(rs)-1].body, &as); err != nil {
			t.Fatal(err)
		}
		if as.Source.AccountID != mine.ID || as.Source.CustomerID != mine.CustomerID {
			t.Errorf("a %q key outvoted the cookie: the service would read the source %+v", spelled, as.Source)
		}
	}

	h.svc.reset()
	if r := h.do("POST", "/api/sandbox/fund", `{"amount":500}`, nil); r.status != 200 {
		t.Fatalf("fund: %d %s", r.status, r.body)
	}
	if got := paths(h.svc.reqs()); len(got) != 1 || got[0] != "POST /sandbox/internal-accounts/"+mine.ID+"/fund" {
		t.Fatalf("fund went to %v", got)
	}

	h.svc.reset()
	if r := h.do("GET", "/api/transactions?customerId="+other+"&status=COMPLETED&limit=5", "", nil); r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	rs = h.svc.reqs()
	if q := rs[0].query; q.Get("customerId") != mine.CustomerID || q.Get("status") != "COMPLETED" || q.Get("limit") != "5" {
		t.Fatalf("list query %v", q)
	}

	// Signed out, nothing reaches the service.
	h.do("POST", "/api/logout", "", nil)
	h.svc.reset()
	for _, c := range [][2]string{{"POST", "/api/quotes"}, {"POST", "/api/sandbox/fund"}, {"GET", "/api/transactions"}} {
		if r := h.do(c[0], c[1], `{}`, nil); r.status != 401 {
			t.Errorf("%s %s signed out: %d", c[0], c[1], r.status)
		}
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Fatalf("%d calls reached the service signed out", n)
	}
}
