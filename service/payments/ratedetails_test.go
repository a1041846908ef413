package payments

import (
	"encoding/json"
	"reflect"
	"testing"

	"paywallet/service/rates"
	"paywallet/shared/wire"
)

// FuzzRateDetails: rateDetails answers what json.Unmarshal answers, for
// what createQuote writes and for anything else.
func FuzzRateDetails(f *testing.F) {
	for _, withCounterparty := range []bool{false, true} {
		b, err := json.Marshal(rateDetailsJSON(rates.RateDetails{CounterpartyMultiplier: 0.92, CounterpartyFixedFee: 25,
			ServiceMultiplier: 1.0875, ServiceFixedFee: 10, ServiceVariableFeeRate: 0.003, ServiceVariableFeeAmount: 1}, withCounterparty))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"serviceApiFixedFee":1e3}`, `{"serviceApiMultiplier":1e400}`, `{"serviceApiFixedFee":-0}`,
		`{"serviceApiFixedFee":1,"serviceApiFixedFee":2}`, `{"ServiceApiFixedFee":7}`, `{"other":1}`, `{"serviceApiMultiplier":0x1p3}`,
		`{"serviceApiMultiplier":.5}`, `{"serviceApiMultiplier":Inf}`, `{ "serviceApiFixedFee": 1 }`, `{"serviceApiFixedFee":null}`,
		`{"serviceApiFixedFee":9223372036854775808}`, `{"serviceApiFixedFee":1,}`, `{"serviceApiFixedFee":1}x`, `[1]`, ``, `{`,
		`{"a\"b":1}`, `{"serviceApiMultiplier":-1.5E-7,"counterpartyFixedFee":-3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want *wire.RateDetails
		if len(b) > 0 {
			var rd wire.RateDetails
			if json.Unmarshal(b, &rd) == nil {
				want = &rd
			}
		}
		if got := rateDetails(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("rateDetails(%q) = %+v, json.Unmarshal gives %+v", b, got, want)
		}
	})
}

// TestRateDetailsFastPath: what createQuote writes is read without
// json.Unmarshal (the reason rateDetails exists).
func TestRateDetailsFastPath(t *testing.T) {
	for _, withCounterparty := range []bool{false, true} {
		in := rateDetailsJSON(rates.RateDetails{CounterpartyMultiplier: 1e-9, CounterpartyFixedFee: 25,
			ServiceMultiplier: 10000, ServiceFixedFee: 25, ServiceVariableFeeRate: 0.003, ServiceVariableFeeAmount: 1}, withCounterparty)
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := rateDetailsFast(b)
		if !ok || !reflect.DeepEqual(*got, in) {
			t.Errorf("rateDetailsFast(%s) = %+v, %v; want %+v, true", b, got, ok, in)
		}
	}
}

func BenchmarkRateDetails(b *testing.B) {
	in, _ := json.Marshal(rateDetailsJSON(rates.RateDetails{ServiceMultiplier: 10000, ServiceFixedFee: 25,
		ServiceVariableFeeRate: 0.003, ServiceVariableFeeAmount: 1}, false))
	b.Run("rateDetails", func(b *testing.B) {
		for b.Loop() {
			rateDetails(in)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var rd wire.RateDetails
			_ = json.Unmarshal(in, &rd)
		}
	})
}
