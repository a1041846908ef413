package rates

import (
	"testing"

	"paywallet/shared/accountrules"
)

// TestCurrenciesAgreeWithAccountRules: the built-in table's currencies are
// those of shared/accountrules (the account types' currencies, whose
// decimals and symbols the page is given before it asks the service), with
// the same decimals and symbols.
func TestCurrenciesAgreeWithAccountRules(t *testing.T) {
	src := Default()
	facts := accountrules.Currencies()
	for _, f := range facts {
		c, ok := src.Currency(f.Code)
		if !ok {
			t.Errorf("rates.json has no %s", f.Code)
			continue
		}
		if c.Decimals != f.Decimals || c.Symbol != f.Symbol {
			t.Errorf("%s: rates.json says %d decimals and %q, accountrules %d and %q", f.Code, c.Decimals, c.Symbol, f.Decimals, f.Symbol)
		}
	}
	if n := len(src.Currencies()); n != len(facts) {
		t.Errorf("rates.json has %d currencies, accountrules %d: add the new one to both", n, len(facts))
	}
}
