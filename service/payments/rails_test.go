package payments

import (
	"testing"

	"paywallet/service/store"
)

// TestEveryAccountTypeIsPriced: every account type the service accepts is
// paid on at least one rail the rates source prices (Spark wallets on none).
func TestEveryAccountTypeIsPriced(t *testing.T) {
	svc := newTestService(t)
	types := map[string]string{"USD_ACCOUNT": "USD", "MXN_ACCOUNT": "MXN", "BRL_ACCOUNT": "BRL", "EUR_ACCOUNT": "EUR",
		"GBP_ACCOUNT": "GBP", "INR_ACCOUNT": "INR", "PHP_ACCOUNT": "PHP", "NGN_ACCOUNT": "NGN", "ZAR_ACCOUNT": "ZAR",
		"CAD_ACCOUNT": "CAD", "AED_ACCOUNT": "AED", "COP_ACCOUNT": "COP", "SLV_ACCOUNT": "USD", "KES_ACCOUNT": "KES",
		"TZS_ACCOUNT": "TZS", "ZMW_ACCOUNT": "ZMW", "RWF_ACCOUNT": "RWF", "MWK_ACCOUNT": "MWK", "UGX_ACCOUNT": "UGX",
		"XOF_ACCOUNT": "XOF"}
	for typ, cur := range types {
		for _, info := range []map[string]any{{}, {"phoneNumber": "+1"}} {
			a := &store.ExternalAccount{AccountType: typ, Currency: cur}
			if rails := svc.railsFor(a, info); len(rails) == 0 {
				t.Errorf("%s %v: no priced rail among %v", typ, info, paymentRails(typ, info))
			}
		}
	}
	if _, ok := svc.rates.Rails("BTC"); !ok {
		t.Error("Spark wallets (BTC) are not priced")
	}
}
