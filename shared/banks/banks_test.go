package banks

import (
	"cmp"
	"slices"
	"testing"
)

func isUpper(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func compareBanks(a, b Bank) int {
	return cmp.Or(cmp.Compare(a.Country, b.Country), cmp.Compare(a.Currency, b.Currency), cmp.Compare(a.DisplayName, b.DisplayName))
}

// TestData checks every entry's shape, the order, duplicates and the counts.
func TestData(t *testing.T) {
	type key struct{ country, currency, name string }
	seenName := map[key]bool{}
	seenDisplay := map[key]bool{}
	for i, b := range all {
		if b.BankName == "" || b.DisplayName == "" || b.Country == "" || b.Currency == "" {
			t.Errorf("entry %d %+v has an empty field", i, b)
		}
		if !isUpper(b.Country, 2) {
			t.Errorf("entry %d %+v: country is not two upper-case letters", i, b)
		}
		if !isUpper(b.Currency, 3) {
			t.Errorf("entry %d %+v: currency is not three upper-case letters", i, b)
		}
		k := key{b.Country, b.Currency, b.BankName}
		if seenName[k] {
			t.Errorf("duplicate bankName %+v", b)
		}
		seenName[k] = true
		d := key{b.Country, b.Currency, b.DisplayName}
		if seenDisplay[d] {
			t.Errorf("duplicate displayName %+v", b)
		}
		seenDisplay[d] = true
		if i > 0 && compareBanks(all[i-1], b) >= 0 {
			t.Errorf("entry %d %+v is not after %+v", i, b, all[i-1])
		}
	}
	if !slices.IsSortedFunc(all, compareBanks) {
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, compareBanks)
		for _, b := range sorted {
			t.Logf("%q %q %q %q", b.BankName, b.DisplayName, b.Country, b.Currency)
		}
	}
	for _, cc := range []struct {
		country, currency string
		min               int
	}{
		{"PH", "PHP", 10}, {"NG", "NGN", 10}, {"ZA", "ZAR", 10},
		{"US", "USD", 5}, {"SV", "USD", 5}, {"MX", "MXN", 5}, {"BR", "BRL", 5}, {"CO", "COP", 5},
		{"DE", "EUR", 3}, {"FR", "EUR", 3}, {"ES", "EUR", 3}, {"NL", "EUR", 3}, {"IT", "EUR", 3},
	} {
		if n := len(List(cc.country, cc.currency)); n < cc.min {
			t.Errorf("%s/%s has %d entries, want at least %d", cc.country, cc.currency, n, cc.min)
		}
	}
}

// TestReferenceNames checks the names the reference API uses in its examples.
func TestReferenceNames(t *testing.T) {
	for _, want := range []Bank{
		{"BDO Unibank", "BDO Unibank", "PH", "PHP"},
		{"BPI", "Bank of the Philippine Islands", "PH", "PHP"},
		{"First Bank of Nigeria", "First Bank of Nigeria", "NG", "NGN"},
		{"Standard Bank", "Standard Bank of South Africa", "ZA", "ZAR"},
		{"Chase Bank", "JPMorgan Chase Bank", "US", "USD"},
		{"Banco Cuscatlan", "Banco Cuscatlan", "SV", "USD"},
		{"BBVA Mexico", "BBVA Mexico", "MX", "MXN"},
		{"Nubank", "Nubank", "BR", "BRL"},
		{"Bancolombia", "Bancolombia", "CO", "COP"},
		{"Nequi", "Nequi (mobile money)", "CO", "COP"},
		{"Daviplata", "Daviplata (mobile money)", "CO", "COP"},
		{"Deutsche Bank", "Deutsche Bank", "DE", "EUR"},
	} {
		if !slices.Contains(all, want) {
			t.Errorf("missing %+v", want)
		}
	}
}

func TestList(t *testing.T) {
	if got := List("", ""); len(got) != len(all) {
		t.Errorf("List(\"\", \"\") has %d entries, want %d", len(got), len(all))
	}
	for _, tc := range []struct {
		country, currency string
		want              func(Bank) bool
	}{
		{"PH", "", func(b Bank) bool { return b.Country == "PH" }},
		{"", "EUR", func(b Bank) bool { return b.Currency == "EUR" }},
		{"", "USD", func(b Bank) bool { return b.Currency == "USD" }}, // US and SV
		{"SV", "USD", func(b Bank) bool { return b.Country == "SV" }},
		{"PH", "NGN", func(Bank) bool { return false }},
		{"XX", "", func(Bank) bool { return false }},
		{"ph", "php", func(Bank) bool { return false }}, // codes are case-sensitive
	} {
		got := List(tc.country, tc.currency)
		if got == nil {
			t.Errorf("List(%q, %q) is nil", tc.country, tc.currency)
		}
		var want []Bank
		for _, b := range all {
			if tc.want(b) {
				want = append(want, b)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("List(%q, %q) = %v, want %v", tc.country, tc.currency, got, want)
		}
	}
	usd := List("", "USD")
	if !slices.ContainsFunc(usd, func(b Bank) bool { return b.Country == "US" }) || !slices.ContainsFunc(usd, func(b Bank) bool { return b.Country == "SV" }) {
		t.Errorf("List(\"\", \"USD\") should hold US and SV banks")
	}
	// The result is the caller's.
	l := List("PH", "PHP")
	l[0].BankName = "changed"
	if List("PH", "PHP")[0].BankName == "changed" {
		t.Error("List returned shared storage")
	}
}

func TestKnown(t *testing.T) {
	for _, tc := range []struct {
		country, currency, name string
		want                    bool
	}{
		{"PH", "PHP", "BDO Unibank", true},
		{"PH", "PHP", "BPI", true},
		{"PH", "PHP", "Bank of the Philippine Islands", false}, // a displayName, not a bankName
		{"PH", "PHP", "bdo unibank", false},                    // case-sensitive
		{"PH", "PHP", "BDO Unibank ", false},                   // exact
		{"NG", "NGN", "First Bank of Nigeria", true},
		{"ZA", "ZAR", "Standard Bank", true},
		{"ZA", "ZAR", "First Bank of Nigeria", false},
		{"PH", "USD", "BDO Unibank", false},
		{"", "", "", false},
		{"", "EUR", "Intesa Sanpaolo", true}, // any euro country
		{"", "EUR", "Wells Fargo", false},
		{"", "", "Wells Fargo", false},
		{"US", "", "Wells Fargo", false},
		{"CO", "COP", "Nequi", true},
	} {
		if got := Known(tc.country, tc.currency, tc.name); got != tc.want {
			t.Errorf("Known(%q, %q, %q) = %v, want %v", tc.country, tc.currency, tc.name, got, tc.want)
		}
	}
}
