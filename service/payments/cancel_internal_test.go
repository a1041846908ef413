package payments

import (
	"testing"

	"paywallet/service/store"
)

// TestCancellableKind: only transfers on a bank's rail can be cancelled.
// Before, a transfer to a mobile-money wallet passed as a bank transfer.
func TestCancellableKind(t *testing.T) {
	transfer := func(rail string) *store.Transaction {
		return &store.Transaction{ID: "Transaction:x", SourceAccountID: "InternalAccount:x", PaymentRail: rail}
	}
	for _, tc := range []struct {
		name string
		x    *store.Transaction
		ok   bool
	}{
		{"ACH transfer", transfer("ACH"), true},
		{"wire", transfer("WIRE"), true},
		{"SEPA", transfer("SEPA_INSTANT"), true},
		{"mobile money", transfer("MOBILE_MONEY"), false},
		{"UnionPay", transfer("UNIONPAY"), false},
		{"Spark", transfer("SPARK"), false},
		{"no rail", transfer(""), false},
		{"a quote's payment", &store.Transaction{QuoteID: "Quote:x", SourceAccountID: "InternalAccount:x", PaymentRail: "ACH"}, false},
		{"a deposit", &store.Transaction{PaymentRail: "ACH"}, false},
	} {
		err := cancellableKind(tc.x)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want cancellable %v", tc.name, err, tc.ok)
		}
	}
}
