package bff

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// TestExternalAccountRoutes runs the production table's external-account and
// discovery routes and the BFF's own create against the fake service.
func TestExternalAccountRoutes(t *testing.T) {
	t.Parallel()
	// The subtests count the calls that reach the service: the BFF's own
	// look at the wallet session (every 500 ms by default) must not fall
	// between them on a slow machine.
	h := newHarness(t, func(c *Config) { c.SessionCheck = time.Hour })
	h.login("owner@example.com")
	mine := h.svc.accountOf("owner@example.com").CustomerID
	other := h.svc.addCustomer("other@example.com").ID

	const (
		myEA      = "ExternalAccount:0199a3c4-0000-7000-8000-000000000001"
		theirEA   = "ExternalAccount:0199a3c4-0000-7000-8000-000000000002"
		missingEA = "ExternalAccount:0199a3c4-0000-7000-8000-000000000003"
	)
	h.svc.mu.Lock()
	h.svc.external[myEA] = map[string]any{"id": myEA, "customerId": mine, "status": "ACTIVE"}
	h.svc.external[theirEA] = map[string]any{"id": theirEA, "customerId": other, "status": "ACTIVE"}
	h.svc.mu.Unlock()

	t.Run("list is bound to the cookie's customer", func(t *testing.T) {
		h.svc.reset()
		r := h.do("GET", "/api/customers/external-accounts?customerId="+other+"&limit=5&currency=USD&cursor=c1&status=x", "", nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte(myEA)) || bytes.Contains(r.body, []byte(theirEA)) {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		rs := h.svc.forwarded()
		if len(rs) != 1 {
			t.Fatalf("%d upstream calls", len(rs))
		}
		q := rs[0].query
		if got := q["customerId"]; len(got) != 1 || got[0] != mine {
			t.Errorf("upstream customerId %v, want only %s", got, mine)
		}
		if q.Get("limit") != "5" || q.Get("currency") != "USD" || q.Get("cursor") != "c1" || q.Has("status") {
			t.Errorf("upstream query %v", q)
		}
	})

	t.Run("read by id is owner-checked", func(t *testing.T) {
		r := h.do("GET", "/api/customers/external-accounts/"+myEA, "", nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte(myEA)) {
			t.Fatalf("own: %d %s", r.status, r.body)
		}
		theirs := h.do("GET", "/api/customers/external-accounts/"+theirEA, "", nil)
		missing := h.do("GET", "/api/customers/external-accounts/"+missingEA, "", nil)
		if theirs.status != 404 || missing.status != 404 || !sameBody(theirs.body, missing.body) {
			t.Errorf("theirs %d %s, missing %d %s: want the same 404", theirs.status, theirs.body, missing.status, missing.body)
		}
	})

	t.Run("discoveries pass country and currency only", func(t *testing.T) {
		h.svc.reset()
		r := h.do("GET", "/api/discoveries?country=PH&currency=PHP&customerId="+other, "", nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte("BDO")) {
			t.Fatalf("discoveries: %d %s", r.status, r.body)
		}
		rs := h.svc.reqs()
		if len(rs) != 1 || rs[0].path != wire.BasePath+"/discoveries" {
			t.Fatalf("upstream calls %v", paths(rs))
		}
		if q := rs[0].query; q.Get("country") != "PH" || q.Get("currency") != "PHP" || len(q) != 2 {
			t.Errorf("upstream query %v", q)
		}
	})

	const holder = `"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Ana Diaz","address":{"line1":"1 Main St","city":"Austin","postalCode":"78701","country":"US"}}`
	const info = `"currency":"USD","accountInfo":{"accountType":"USD_ACCOUNT","accountNumber":"12345678","routingNumber":"021000021",` + holder + `}`
	// The fake service answers 409 for this account number: a refusal only
	// the service can make (it needs the stored accounts).
	const taken = `"currency":"USD","accountInfo":{"accountType":"USD_ACCOUNT","accountNumber":"99999999","routingNumber":"021000021",` + holder + `}`
	creates := []struct {
		name, body string
		status     int
		code       string
		sent       bool
	}{
		{"no customerId", `{` + info + `}`, 201, "", true},
		{"own customerId", `{"customerId":"` + mine + `",` + info + `}`, 201, "", true},
		// Any customerId is replaced by the cookie's customer.
		{"another customer", `{"customerId":"` + other + `",` + info + `}`, 201, "", true},
		{"a customer that does not exist", `{"customerId":"Customer:0199a3c4-0000-7000-8000-0000000000ff",` + info + `}`, 201, "", true},
		{"null customerId (would be a platform account)", `{"customerId":null,` + info + `}`, 201, "", true},
		{"customerId not a string", `{"customerId":1,` + info + `}`, 201, "", true},
		{"duplicate key, another customer last", `{"customerId":"` + mine + `","customerId":"` + other + `",` + info + `}`, 201, "", true},
		{"duplicate key, own customer last", `{"customerId":"` + other + `","customerId":"` + mine + `",` + info + `}`, 201, "", true},
		{"array", `[` + `{` + info + `}]`, 400, "INVALID_REQUEST_FORMAT", false},
		{"null body", `null`, 400, "INVALID_REQUEST_FORMAT", false},
		{"empty body", ``, 400, "INVALID_REQUEST_FORMAT", false},
		{"trailing data", `{` + info + `}{}`, 400, "INVALID_REQUEST_FORMAT", false},
		{"refused by the shared account rules before the service", `{"currency":"USD"}`, 400, "INVALID_INPUT", false},
		{"a number where a boolean belongs", `{"defaultUmaDepositAccount":1,` + info + `}`, 400, "INVALID_INPUT", false},
		{"service refusal passes through", `{` + taken + `}`, 409, "CONFLICT", true},
	}
	for _, tc := range creates {
		t.Run("create: "+tc.name, func(t *testing.T) {
			h.svc.reset()
			r := h.do("POST", "/api/customers/external-accounts", tc.body, map[string]string{"Idempotency-Key": "k-9"})
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.code != "" && r.code(t) != tc.code {
				t.Errorf("code %q, want %s: %s", r.code(t), tc.code, r.body)
			}
			rs := h.svc.reqs()
			if !tc.sent {
				if len(rs) != 0 {
					t.Fatalf("reached the service: %v", paths(rs))
				}
				if strings.Contains(string(r.body), other) {
					t.Errorf("the answer echoes the other customer's id: %s", r.body)
				}
				return
			}
			if len(rs) != 1 || rs[0].method != "POST" || rs[0].path != wire.BasePath+"/customers/external-accounts" {
				t.Fatalf("upstream calls %v", paths(rs))
			}
			if rs[0].header.Get("Idempotency-Key") != "k-9" || !strings.HasPrefix(rs[0].header.Get("Content-Type"), "application/json") {
				t.Errorf("upstream headers %v", rs[0].header)
			}
			var sent map[string]any
			if err := json.Unmarshal(rs[0].body, &sent); err != nil {
				t.Fatal(err)
			}
			if sent["customerId"] != mine {
				t.Errorf("forwarded customerId %v, want %s", sent["customerId"], mine)
			}
			if bytes.Contains(rs[0].body, []byte(other)) {
				t.Errorf("the forwarded body names the other customer: %s", rs[0].body)
			}
			if tc.status == 201 {
				if got := r.json(t)["customerId"]; got != mine {
					t.Errorf("created for %v, want %s", got, mine)
				}
			}
		})
	}

	t.Run("the shared rules name every bad field, as the service does", func(t *testing.T) {
		h.svc.reset()
		r := h.do("POST", "/api/customers/external-accounts", `{"currency":"usd","accountInfo":{"accountType":"USD_ACCOUNT","routingNumber":"12345",`+holder+`}}`, nil)
		if r.status != 400 || r.code(t) != "INVALID_INPUT" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		var e wire.Error
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Fatal(err)
		}
		var fields []string
		for _, fe := range e.Details["errors"].([]any) {
			fields = append(fields, fe.(map[string]any)["field"].(string))
		}
		if want := "accountInfo.accountNumber,accountInfo.routingNumber,currency"; strings.Join(fields, ",") != want {
			t.Errorf("fields %v, want %s", fields, want)
		}
		if e.Message != "3 fields are invalid; see details.errors" {
			t.Errorf("message %q", e.Message)
		}
		if n := len(h.svc.reqs()); n != 0 {
			t.Errorf("a refused body reached the service %d times", n)
		}
	})
}

func TestExternalAccountsNeedASignedInCookie(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/customers/external-accounts", ""},
		{"GET", "/api/customers/external-accounts/ExternalAccount:0199a3c4-0000-7000-8000-000000000001", ""},
		{"POST", "/api/customers/external-accounts", `{"currency":"USD"}`},
		{"GET", "/api/discoveries?country=PH", ""},
	} {
		r := h.do(tc.method, tc.path, tc.body, nil)
		if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
			t.Errorf("%s %s: %d %s, want 401", tc.method, tc.path, r.status, r.body)
		}
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("anonymous requests reached the service %d times", n)
	}
}
