package bff

import (
	"slices"
	"testing"
)

// TestRemoveExternalAccount: DELETE /api/customers/external-accounts/{id}
// (the wallet's "remove recipient") reaches the service only for an account
// of the cookie's customer, after the GET that proves it; any other id gets
// the same 404 as a missing one and nothing is deactivated.
func TestRemoveExternalAccount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("owner@example.com")
	mine := h.svc.accountOf("owner@example.com").CustomerID
	other := h.svc.addCustomer("other@example.com").ID

	const (
		myEA      = "ExternalAccount:0199a3c4-0000-7000-8000-000000000011"
		theirEA   = "ExternalAccount:0199a3c4-0000-7000-8000-000000000012"
		missingEA = "ExternalAccount:0199a3c4-0000-7000-8000-000000000013"
	)
	h.svc.mu.Lock()
	h.svc.external[myEA] = map[string]any{"id": myEA, "customerId": mine, "status": "ACTIVE"}
	h.svc.external[theirEA] = map[string]any{"id": theirEA, "customerId": other, "status": "ACTIVE"}
	h.svc.mu.Unlock()
	status := func(id string) any {
		h.svc.mu.Lock()
		defer h.svc.mu.Unlock()
		return h.svc.external[id]["status"]
	}

	var notFoundBody []byte
	for _, tc := range []struct {
		name     string
		id       string
		status   int
		upstream []string // the calls forwarded, session listings aside
	}{
		{"own account", myEA, 204, []string{"GET /customers/external-accounts/" + myEA, "DELETE /customers/external-accounts/" + myEA}},
		{"own account again (already inactive)", myEA, 204, []string{"GET /customers/external-accounts/" + myEA, "DELETE /customers/external-accounts/" + myEA}},
		{"another customer's account", theirEA, 404, []string{"GET /customers/external-accounts/" + theirEA}},
		{"missing account", missingEA, 404, []string{"GET /customers/external-accounts/" + missingEA}},
		{"not an external account id", "Customer:0199a3c4-0000-7000-8000-000000000011", 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.svc.reset()
			r := h.do("DELETE", "/api/customers/external-accounts/"+tc.id, "", nil)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.status == 404 {
				if notFoundBody != nil && !sameBody(r.body, notFoundBody) {
					t.Errorf("404 body %s differs from %s: it must not tell missing from not yours", r.body, notFoundBody)
				}
				notFoundBody = r.body
			}
			if got := paths(h.svc.forwarded()); !slices.Equal(got, tc.upstream) {
				t.Errorf("forwarded %v, want %v", got, tc.upstream)
			}
		})
	}
	if got := status(myEA); got != "INACTIVE" {
		t.Errorf("own account status %v, want INACTIVE", got)
	}
	if got := status(theirEA); got != "ACTIVE" {
		t.Errorf("the other customer's account became %v", got)
	}

	t.Run("signed out", func(t *testing.T) {
		anon := newHarness(t)
		r := anon.do("DELETE", "/api/customers/external-accounts/"+myEA, "", nil)
		if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
			t.Errorf("%d %s, want 401 UNAUTHORIZED", r.status, r.body)
		}
		if n := len(anon.svc.reqs()); n != 0 {
			t.Errorf("an anonymous removal reached the service %d times", n)
		}
	})
}
