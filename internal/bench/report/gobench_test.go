package report

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

const sampleBench = `goos: linux
goarch: amd64
pkg: paywallet/shared/walletcrypto
cpu: Oxide Virtual Turin-like Processor
BenchmarkSignStamp-2      	   38012	     31544 ns/op	    5649 B/op	      66 allocs/op
BenchmarkSignStamp-2      	   38012	     30000 ns/op	    5600 B/op	      66 allocs/op
BenchmarkSignStamp-2      	   38012	     33000 ns/op	    5700 B/op	      66 allocs/op
BenchmarkVerifyStamp-2    	   10000	    101234 ns/op
BenchmarkLog says hello
PASS
ok  	paywallet/shared/walletcrypto	5.1s
pkg: paywallet/shared/accountrules
BenchmarkValidateCreate/USD_ACCOUNT-2         	    2000	      6367 ns/op
BenchmarkValidateCreate/USD_ACCOUNT-2         	    2000	      6369.5 ns/op
BenchmarkQuoteJSON-2   	    2000	     12604 ns/op	 153.69 MB/s	    4562 B/op	      33 allocs/op
BenchmarkNoNs-2   	    2000	     12 MB/s
ok  	paywallet/shared/accountrules	0.093s
pkg: paywallet/service/store/sqlstore
BenchmarkVerifyLedger-2   	       1	4000000000 ns/op	   1000000 entries	    250000 entries/s
BenchmarkVerifyLedger-2   	       1	5000000000 ns/op	   1000000 entries	    200000 entries/s
BenchmarkVerifyLedger-2   	       1	3000000000 ns/op	   1000000 entries	    333333 entries/s
`

func TestParseGoBench(t *testing.T) {
	got := ParseGoBench(sampleBench)
	want := []Micro{
		{Package: "paywallet/shared/walletcrypto", Name: "SignStamp", Runs: 3, NsPerOp: 31544, MinNsPerOp: 30000, MaxNsPerOp: 33000, BytesPerOp: 5649, AllocsPerOp: 66},
		{Package: "paywallet/shared/walletcrypto", Name: "VerifyStamp", Runs: 1, NsPerOp: 101234, MinNsPerOp: 101234, MaxNsPerOp: 101234},
		{Package: "paywallet/shared/accountrules", Name: "ValidateCreate/USD_ACCOUNT", Runs: 2, NsPerOp: 6368.25, MinNsPerOp: 6367, MaxNsPerOp: 6369.5},
		{Package: "paywallet/shared/accountrules", Name: "QuoteJSON", Runs: 1, NsPerOp: 12604, MinNsPerOp: 12604, MaxNsPerOp: 12604, BytesPerOp: 4562, AllocsPerOp: 33,
			Metrics: map[string]float64{"MB/s": 153.69}},
		{Package: "paywallet/service/store/sqlstore", Name: "VerifyLedger", Runs: 3, NsPerOp: 4e9, MinNsPerOp: 3e9, MaxNsPerOp: 5e9,
			Metrics: map[string]float64{"entries": 1e6, "entries/s": 250000}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseGoBenchEmpty(t *testing.T) {
	for _, in := range []string{"", "PASS\n", "BenchmarkX-2 notanumber 1 ns/op\n", "Benchmark-2 10 1 ns/op\n"} {
		if got := ParseGoBench(in); len(got) != 0 {
			t.Errorf("ParseGoBench(%q) = %+v, want none", in, got)
		}
	}
}

// FuzzParseGoBench: any input parses without panicking, every result has
// at least one run, a name, and min ≤ median ≤ max.
func FuzzParseGoBench(f *testing.F) {
	f.Add(sampleBench)
	f.Add("BenchmarkA-8 1 NaN ns/op\nBenchmarkA-8 1 -Inf ns/op\n")
	f.Add("pkg: x\nBenchmarkA 1 2 ns/op 3 B/op 4 allocs/op\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, m := range ParseGoBench(in) {
			if m.Runs < 1 || m.Name == "" || strings.ContainsAny(m.Name, " \t\n") {
				t.Fatalf("bad result %+v", m)
			}
			if !math.IsNaN(m.NsPerOp) && (m.MinNsPerOp > m.NsPerOp || m.NsPerOp > m.MaxNsPerOp) {
				t.Fatalf("min/median/max out of order: %+v", m)
			}
		}
	})
}
