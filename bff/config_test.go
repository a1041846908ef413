package bff

import (
	"encoding/json"
	"slices"
	"testing"

	"paywallet/shared/accountrules"
)

// TestConfigCarriesAccountFacts: GET /api/config carries the currencies'
// decimals and symbols and the account types' facts of shared/accountrules,
// which the page needs before its wasm module loads.
func TestConfigCarriesAccountFacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var cfg configResponse
	if err := json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &cfg); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Currencies, accountrules.Currencies()) || len(cfg.Currencies) != 20 {
		t.Errorf("config currencies = %v, want accountrules.Currencies()", cfg.Currencies)
	}
	if !slices.Equal(cfg.AccountTypes, accountrules.Types()) || len(cfg.AccountTypes) != 21 {
		t.Errorf("config accountTypes = %v, want accountrules.Types()", cfg.AccountTypes)
	}
	var raw struct {
		Currencies   []map[string]any `json:"currencies"`
		AccountTypes []map[string]any `json:"accountTypes"`
	}
	_ = json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &raw)
	if len(raw.Currencies) == 0 || raw.Currencies[0]["code"] != "USD" || raw.Currencies[0]["decimals"] != 2.0 {
		t.Errorf("config currencies JSON = %v", raw.Currencies)
	}
	if last := raw.AccountTypes[len(raw.AccountTypes)-1]; last["accountType"] != "SPARK_WALLET" || last["wallet"] != true {
		t.Errorf("config accountTypes JSON ends with %v", last)
	}
}
