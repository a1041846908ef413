package payments

import (
	"encoding/json"
	"strconv"

	"paywallet/shared/wire"
)

// rateDetails reads a quote's or transaction's stored rate details (the
// JSON createQuote wrote with json.Marshal), nil when there are none or
// they do not decode.
//
// Why not just json.Unmarshal: every snapshot of a payment (each of its
// webhook events, recorded inside the API's transaction, and each GET)
// decodes them, and encoding/json's reflection took ~7 µs for these ~150
// bytes, about a third of building a payment's event. What createQuote
// writes (a flat object of known keys with numeric values, no spaces) is
// read here directly; anything else, however valid, goes to
// json.Unmarshal, so the answer is always the one json.Unmarshal gives
// (FuzzRateDetails).
func rateDetails(b []byte) *wire.RateDetails {
	if len(b) == 0 {
		return nil
	}
	if rd, ok := rateDetailsFast(b); ok {
		return rd
	}
	var rd wire.RateDetails
	if json.Unmarshal(b, &rd) != nil {
		return nil
	}
	return &rd
}

// rateDetailsFast reads b if it is a compact JSON object of distinct
// wire.RateDetails keys with number values; ok is false for anything else.
func rateDetailsFast(b []byte) (rd *wire.RateDetails, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	out := &wire.RateDetails{}
	var seen [6]bool
	i := 1
	if b[i] == '}' {
		return out, i == len(b)-1
	}
	for {
		// "key":
		if b[i] != '"' {
			return nil, false
		}
		j := i + 1
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		if j+1 >= len(b) || b[j] != '"' || b[j+1] != ':' {
			return nil, false
		}
		key := string(b[i+1 : j])
		i = j + 2
		// a number
		j = i
		for j < len(b) && b[j] != ',' && b[j] != '}' {
			j++
		}
		if j == len(b) || !jsonNumber(b[i:j]) {
			return nil, false
		}
		num := string(b[i:j])
		k := -1
		var err error
		switch key {
		case "counterpartyMultiplier":
			k = 0
			var f float64
			f, err = strconv.ParseFloat(num, 64)
			out.CounterpartyMultiplier = &f
		case "counterpartyFixedFee":
			k = 1
			var n int64
			n, err = strconv.ParseInt(num, 10, 64)
			out.CounterpartyFixedFee = &n
		case "serviceApiMultiplier":
			k = 2
			out.ServiceAPIMultiplier, err = strconv.ParseFloat(num, 64)
		case "serviceApiFixedFee":
			k = 3
			out.ServiceAPIFixedFee, err = strconv.ParseInt(num, 10, 64)
		case "serviceApiVariableFeeRate":
			k = 4
			out.ServiceAPIVariableFeeRate, err = strconv.ParseFloat(num, 64)
		case "serviceApiVariableFeeAmount":
			k = 5
			out.ServiceAPIVariableFeeAmount, err = strconv.ParseInt(num, 10, 64)
		}
		// An unknown or repeated key, or a number the field cannot hold
		// (an exponent in an integer, an overflow): json.Unmarshal says
		// what happens.
		if k < 0 || seen[k] || err != nil {
			return nil, false
		}
		seen[k] = true
		if b[j] == '}' {
			return out, j == len(b)-1
		}
		i = j + 1
		if i >= len(b) {
			return nil, false
		}
	}
}

// jsonNumber reports whether s is a number as JSON writes one (RFC 8259
// §6): strconv also takes forms JSON does not ("Inf", "0x1p3", "+1").
func jsonNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}
