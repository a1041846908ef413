package accountrules

// Currency is what a page must know of a currency to write an amount of it
// before it has the service's Currency object (which carries the same facts
// and wins): the decimals (smallest units per major unit, as a power of ten)
// and the symbol. The BFF's GET /api/config carries them to the page;
// service/rates/rates.json must agree (its test holds it to them).
type Currency struct {
	Code     string `json:"code"`
	Decimals int    `json:"decimals"`
	Symbol   string `json:"symbol"`
}

// currencies are the currencies of the account types, and their facts.
var currencies = []Currency{
	{"USD", 2, "$"}, {"EUR", 2, "€"}, {"GBP", 2, "£"}, {"MXN", 2, "$"}, {"BRL", 2, "R$"},
	{"COP", 2, "$"}, {"INR", 2, "₹"}, {"PHP", 2, "₱"}, {"NGN", 2, "₦"}, {"ZAR", 2, "R"},
	{"CAD", 2, "$"}, {"AED", 2, "د.إ"}, {"KES", 2, "KSh"}, {"TZS", 2, "TSh"}, {"ZMW", 2, "K"},
	{"RWF", 0, "FRw"}, {"MWK", 2, "MK"}, {"UGX", 0, "USh"}, {"XOF", 0, "CFA"}, {"BTC", 8, "₿"},
}

// Currencies returns the facts of every currency an account type may hold
// (TestCurrencies: each type's currency has an entry). The slice is the
// caller's.
func Currencies() []Currency {
	return append([]Currency(nil), currencies...)
}

// TypeFacts is what a page needs of an account type to show a recipient
// before the wasm module (and its [Form]) is there: the currency it
// requires ("" = any), the country it pays into when it says, and whether
// it is a wallet (no beneficiary). GET /api/config carries them.
type TypeFacts struct {
	AccountType string `json:"accountType"`
	Currency    string `json:"currency"`
	Country     string `json:"country,omitempty"`
	Wallet      bool   `json:"wallet,omitempty"`
}

// Types returns the facts of every account type, in the spec's order.
func Types() []TypeFacts {
	out := make([]TypeFacts, len(variants))
	for i, v := range variants {
		out[i] = TypeFacts{AccountType: v.accountType, Currency: v.currency, Country: v.country, Wallet: v.wallet}
	}
	return out
}
