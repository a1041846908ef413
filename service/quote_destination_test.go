package service

import (
	"net/http"
	"testing"

	"paywallet/shared/wire"
)

// TestQuoteDestinationOfAnotherCustomer (issue 14, defect 8): POST /quotes
// answers a destination.accountId that is another customer's external
// account byte for byte as one that does not exist, so a caller cannot
// learn that the id exists; neither request stores anything.
func TestQuoteDestinationOfAnotherCustomer(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("mine@example.com", 0)
	other := e.newPayer("theirs@example.com", 0)
	e.destination(p, "12345")
	theirs := e.destination(other, "12346")                                   // ACTIVE, USD: a destination p could otherwise pay
	theirsPending := e.createAccount(usdBody(other.customer.ID, "000000104")) // sandbox 104: stays PENDING
	e.verify()
	const missing = "ExternalAccount:00000000-0000-7000-8000-000000000000"
	const missingSource = "InternalAccount:00000000-0000-7000-8000-000000000000"

	cases := []struct {
		name     string
		existing string // another customer's account
		mutate   func(map[string]any)
	}{
		{"active account", theirs.ID, func(map[string]any) {}},
		{"with a payment rail", theirs.ID, func(b map[string]any) { b["destination"].(map[string]any)["paymentRail"] = "SPEI" }},
		{"pending account", theirsPending.ID, func(map[string]any) {}},
		{"unknown source", theirsPending.ID, func(b map[string]any) { b["source"].(map[string]any)["accountId"] = missingSource }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answer := func(dest string) response {
				b := quoteBody(p, dest, "SENDING", 1_000)
				c.mutate(b)
				return e.do("POST", "/quotes", b, nil)
			}
			none, foreign := answer(missing), answer(c.existing)
			if none.status != http.StatusBadRequest || foreign.status != none.status || string(foreign.body) != string(none.body) {
				t.Errorf("another customer's account: %d %s\nno such account:          %d %s", foreign.status, foreign.body, none.status, none.body)
			}
		})
	}
	for _, c := range []payer{p, other} {
		var list wire.List[wire.Transaction]
		e.do("GET", "/transactions?customerId="+c.customer.ID, nil, nil).decode(t, &list)
		if len(list.Data) != 0 {
			t.Fatalf("refused quotes stored transactions: %+v", list.Data)
		}
	}
}
