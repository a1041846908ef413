// Package banks is the data behind GET /discoveries: the bank names (and the
// mobile-money providers that stand in for a bank name) that accountInfo.bankName
// takes, per country and currency. The service serves it, the browser offers it
// in a picker, and [paywallet/shared/accountrules] checks bankName against it
// where the spec says "bankName must match a discovery value" (PH, NG, ZA).
//
// # Use
//
// [List] filters the entries by country and currency (either may be empty);
// [Known] tells whether a bankName is a discovery value for a country and
// currency. Matching is exact and case-sensitive, as the spec's "exact value to
// use as accountInfo.bankName" requires.
//
// # Data
//
// The entries are Go literals (no JSON file, so the wasm module needs no
// decoder), sorted by country, currency and display name. The names given as
// examples in the reference API ("BDO Unibank", "BPI", "First Bank of Nigeria",
// "Standard Bank", "Chase Bank", "Banco Cuscatlan", "BBVA Mexico", "Nubank",
// "Bancolombia", "Nequi", "Deutsche Bank") are used as they are; the others are
// real institutions of the country, named the way they are commonly written
// without accents. Colombia lists the mobile-money providers Nequi and Daviplata
// beside its banks, since a COP mobile-money account sends the provider as
// bankName.
package banks

// Bank is one discovery entry.
type Bank struct {
	// BankName is the exact value to send as accountInfo.bankName.
	BankName string `json:"bankName"`
	// DisplayName is the human-friendly label.
	DisplayName string `json:"displayName"`
	// Country is the ISO 3166-1 alpha-2 code of the bank's country.
	Country string `json:"country"`
	// Currency is the ISO 4217 code of the accounts the name is valid for.
	Currency string `json:"currency"`
}

// List returns the entries of a country and a currency, in the order country,
// currency, display name. An empty country or currency matches every country
// or currency, so List("", "") is everything. The result is a fresh slice the
// caller may change; it is empty, never nil, when nothing matches.
func List(country, currency string) []Bank {
	out := make([]Bank, 0, 16)
	for _, b := range all {
		if (country == "" || b.Country == country) && (currency == "" || b.Currency == currency) {
			out = append(out, b)
		}
	}
	return out
}

// Known reports whether bankName is, exactly, the BankName of an entry of the
// country and currency. As in [List], an empty country means any country of
// the currency (EUR); an empty currency or bankName matches nothing.
func Known(country, currency, bankName string) bool {
	if currency == "" || bankName == "" {
		return false
	}
	for _, b := range all {
		if (country == "" || b.Country == country) && b.Currency == currency && b.BankName == bankName {
			return true
		}
	}
	return false
}
