package rates

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"
)

// table returns the embedded table as a generic JSON value to change.
func table(t testing.TB) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(embedded))
	dec.UseNumber()
	var tab map[string]any
	if err := dec.Decode(&tab); err != nil {
		t.Fatal(err)
	}
	return tab
}

func cur(tab map[string]any, code string) map[string]any {
	for _, c := range tab["currencies"].([]any) {
		if m := c.(map[string]any); m["code"] == code {
			return m
		}
	}
	panic("no currency " + code)
}

func rail(tab map[string]any, name string) map[string]any {
	for _, r := range tab["rails"].([]any) {
		if m := r.(map[string]any); m["name"] == name {
			return m
		}
	}
	panic("no rail " + name)
}

func encode(t testing.TB, tab map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadWith loads the embedded table after change.
func loadWith(t testing.TB, change func(map[string]any)) *Source {
	t.Helper()
	tab := table(t)
	change(tab)
	s, err := Load(bytes.NewReader(encode(t, tab)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

func TestLoadGood(t *testing.T) {
	s, err := Load(bytes.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Currencies()) != len(Default().Currencies()) {
		t.Error("Load and Default differ")
	}

	// A small operator table: two currencies, one rail, and a changed rate.
	const small = `{
	  "updatedAt": "2026-01-15T12:00:00+01:00",
	  "noRail": {"instant": true, "quoteTTL": "1m", "settleAfter": "1s"},
	  "rails": [{"name": "SPEI", "instant": true, "quoteTTL": "90s", "settleAfter": "5s"}],
	  "currencies": [
	    {"code": "USD", "name": "US Dollar", "symbol": "$", "decimals": 2, "usdPerUnit": "1",
	     "serviceFixedFee": 0, "serviceVariableFeeRate": "0", "serviceSpread": "0", "minSending": 1, "maxSending": 100,
	     "counterpartyFixedFee": 0, "counterpartySpread": "0", "rails": []},
	    {"code": "MXN", "name": "Peso", "symbol": "$", "decimals": 2, "usdPerUnit": "0.05",
	     "serviceFixedFee": 0, "serviceVariableFeeRate": "0", "serviceSpread": "0", "minSending": 1, "maxSending": 100,
	     "counterpartyFixedFee": 0, "counterpartySpread": "0", "rails": ["SPEI"]}
	  ]
	}`
	s, err = Load(strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 15, 11, 0, 0, 0, time.UTC); !s.UpdatedAt().Equal(want) {
		t.Errorf("updatedAt %v", s.UpdatedAt())
	}
	if r, _ := s.Rail(""); r.QuoteTTL != time.Minute || r.SettleAfter != time.Second || !r.Instant {
		t.Errorf("no rail %+v", r)
	}
	if r, _ := s.Rail("SPEI"); r.QuoteTTL != 90*time.Second {
		t.Errorf("SPEI %+v", r)
	}
	// No fees, no spread: 1 dollar is exactly 20 pesos.
	q, err := s.Quote(Request{Sending: "USD", Receiving: "MXN", Side: SideSending, Amount: 100})
	if err != nil || q.TotalReceiving != 2000 || q.FeesIncluded != 0 || q.ReceivingFees != 0 || q.ExchangeRate != 0.05 || q.Rail.Name != "SPEI" {
		t.Errorf("%+v %v", q, err)
	}
	if _, err := s.Quote(Request{Sending: "USD", Receiving: "EUR", Side: SideSending, Amount: 100}); err == nil {
		t.Error("EUR is not in the table")
	}
}

// TestLoadBad refuses each kind of broken table with a message that names
// the problem.
func TestLoadBad(t *testing.T) {
	tests := []struct {
		name   string
		change func(map[string]any)
		msg    string
	}{
		{"unknown top-level field", func(m map[string]any) { m["fx"] = 1 }, `unknown field "fx"`},
		{"unknown currency field", func(m map[string]any) { cur(m, "MXN")["serviceFee"] = 1 }, `unknown field "serviceFee"`},
		{"unknown rail field", func(m map[string]any) { rail(m, "ACH")["ttl"] = "1m" }, `unknown field "ttl"`},
		{"updatedAt missing", func(m map[string]any) { delete(m, "updatedAt") }, "updatedAt is missing"},
		{"updatedAt not a time", func(m map[string]any) { m["updatedAt"] = "yesterday" }, `updatedAt "yesterday" is not an RFC 3339 time`},
		{"noRail missing", func(m map[string]any) { delete(m, "noRail") }, "noRail (the payout without a rail"},
		{"noRail named", func(m map[string]any) { m["noRail"].(map[string]any)["name"] = "SPARK" }, `noRail must have no name, got "SPARK"`},
		{"rail name", func(m map[string]any) { rail(m, "ACH")["name"] = "ach" }, `rail 0: name "ach" is not upper-case`},
		{"rail twice", func(m map[string]any) { rail(m, "WIRE")["name"] = "ACH" }, "rail ACH is defined twice"},
		{"quoteTTL bad", func(m map[string]any) { rail(m, "SPEI")["quoteTTL"] = "3 minutes" }, `rail SPEI: quoteTTL "3 minutes" is not a duration`},
		{"quoteTTL missing", func(m map[string]any) { delete(rail(m, "SPEI"), "quoteTTL") }, "rail SPEI: quoteTTL is missing"},
		{"settleAfter negative", func(m map[string]any) { rail(m, "PIX")["settleAfter"] = "-2s" }, `rail PIX: settleAfter "-2s" must be positive`},
		{"no currencies", func(m map[string]any) { m["currencies"] = []any{} }, "the table has no currencies"},
		{"code", func(m map[string]any) { cur(m, "MXN")["code"] = "mxn" }, `code "mxn" is not three upper-case letters`},
		{"currency twice", func(m map[string]any) { cur(m, "EUR")["code"] = "USD" }, "currency USD is defined twice"},
		{"name missing", func(m map[string]any) { delete(cur(m, "GBP"), "name") }, "currency GBP: name is missing"},
		{"symbol missing", func(m map[string]any) { cur(m, "GBP")["symbol"] = "" }, "currency GBP: symbol is missing"},
		{"decimals missing", func(m map[string]any) { delete(cur(m, "BTC"), "decimals") }, "currency BTC: decimals is missing"},
		{"decimals too many", func(m map[string]any) { cur(m, "BTC")["decimals"] = 19 }, "currency BTC: decimals 19 must be between 0 and 18"},
		{"decimals negative", func(m map[string]any) { cur(m, "UGX")["decimals"] = -1 }, "currency UGX: decimals -1 must be between 0 and 18"},
		{"rate zero", func(m map[string]any) { cur(m, "MXN")["usdPerUnit"] = "0.0000" }, `currency MXN: usdPerUnit "0.0000" must be positive`},
		{"rate negative", func(m map[string]any) { cur(m, "MXN")["usdPerUnit"] = "-0.05" }, `currency MXN: usdPerUnit "-0.05" is not a decimal string`},
		{"rate a fraction", func(m map[string]any) { cur(m, "MXN")["usdPerUnit"] = "1/18" }, `usdPerUnit "1/18" is not a decimal string`},
		{"rate an exponent", func(m map[string]any) { cur(m, "MXN")["usdPerUnit"] = "5.45e-2" }, `usdPerUnit "5.45e-2" is not a decimal string`},
		{"rate a number", func(m map[string]any) { cur(m, "MXN")["usdPerUnit"] = 0.0545 }, `cannot unmarshal number into Go struct field`},
		{"rate missing", func(m map[string]any) { delete(cur(m, "MXN"), "usdPerUnit") }, "currency MXN: usdPerUnit is missing"},
		{"fee rate 1", func(m map[string]any) { cur(m, "KES")["serviceVariableFeeRate"] = "1" }, `currency KES: serviceVariableFeeRate "1" must be at least 0 and less than 1`},
		{"fee rate missing", func(m map[string]any) { delete(cur(m, "KES"), "serviceVariableFeeRate") }, "serviceVariableFeeRate is missing"},
		{"service spread", func(m map[string]any) { cur(m, "EUR")["serviceSpread"] = "1.5" }, `currency EUR: serviceSpread "1.5" must be at least 0 and less than 1`},
		{"counterparty spread", func(m map[string]any) { cur(m, "EUR")["counterpartySpread"] = "2%" }, `currency EUR: counterpartySpread "2%" is not a decimal string`},
		{"service fee negative", func(m map[string]any) { cur(m, "USD")["serviceFixedFee"] = -1 }, "currency USD: serviceFixedFee -1 must not be negative"},
		{"payout fee negative", func(m map[string]any) { cur(m, "USD")["counterpartyFixedFee"] = -10 }, "currency USD: counterpartyFixedFee -10 must not be negative"},
		{"fee not whole", func(m map[string]any) { cur(m, "USD")["serviceFixedFee"] = 2.5 }, "cannot unmarshal number 2.5"},
		{"fee too large", func(m map[string]any) { cur(m, "USD")["serviceFixedFee"] = json.Number("9223372036854775808") }, "cannot unmarshal number 9223372036854775808"},
		{"min zero", func(m map[string]any) { cur(m, "USD")["minSending"] = 0 }, "currency USD: minSending 0 must be at least 1"},
		{"max below min", func(m map[string]any) { cur(m, "USD")["maxSending"] = 99 }, "currency USD: maxSending 99 must not be less than minSending 100"},
		{"rail unknown", func(m map[string]any) { cur(m, "MXN")["rails"] = []any{"SPEI", "SWIFT"} }, `currency MXN: rail "SWIFT" is not defined in the table's rails`},
		{"rail twice in a currency", func(m map[string]any) { cur(m, "MXN")["rails"] = []any{"SPEI", "SPEI"} }, "currency MXN: rail SPEI is listed twice"},
		{"rails missing", func(m map[string]any) { delete(cur(m, "BTC"), "rails") }, "currency BTC: rails is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := table(t)
			tt.change(tab)
			_, err := Load(bytes.NewReader(encode(t, tab)))
			if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "rates: ") {
				t.Errorf("error %v, want one with %q", err, tt.msg)
			}
		})
	}

	raw := []struct{ name, in, msg string }{
		{"empty", "", "rates: reading the table: EOF"},
		{"not JSON", "rates", "rates: reading the table: invalid character"},
		{"an array", "[]", "cannot unmarshal array"},
		{"data after", string(embedded) + "{}", "data after the table's JSON object"},
	}
	for _, tt := range raw {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want one with %q", err, tt.msg)
			}
		})
	}
}

func TestMustLoadPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "the embedded table is broken") {
			t.Errorf("recovered %v", r)
		}
	}()
	mustLoad([]byte(`{"updatedAt": "now"}`))
}
