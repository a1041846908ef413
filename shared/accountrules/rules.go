package accountrules

import (
	"strings"

	"paywallet/shared/banks"
	"paywallet/shared/wire"
)

// The matchers below are the patterns of the rules, written out so that the
// package needs no regexp (module size). TestPatternsAgree holds each one to
// its JavaScript pattern, compiled with regexp, on many inputs.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpperASCII(c byte) bool {
	return c >= 'A' && c <= 'Z'
}
func isAlnum(c byte) bool {
	return isDigit(c) || isUpperASCII(c) || (c >= 'a' && c <= 'z')
}

// allBytes reports whether every byte of s satisfies ok.
func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// digits reports whether s is min to max ASCII digits.
func digits(s string, min, max int) bool {
	return len(s) >= min && len(s) <= max && allBytes(s, isDigit)
}

func digitsRule(min, max int, want string) *rule {
	pattern := "^[0-9]{" + itoa(min) + "}$"
	if min != max {
		pattern = "^[0-9]{" + itoa(min) + "," + itoa(max) + "}$"
	}
	return &rule{pattern: pattern, match: func(s string) bool { return digits(s, min, max) }, want: want}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

func text(min, max int) *rule { return &rule{min: min, max: max} }

func enum(values ...string) *rule { return &rule{enum: values} }

// choice is one value of an enum and how the form shows it: a message key of
// the page's catalogue, a fixed text (codes and names shown as they are), or,
// with neither, the value itself.
type choice struct{ value, key, text string }

func say(value, key string) choice    { return choice{value: value, key: key} }
func shown(value, text string) choice { return choice{value: value, text: text} }

// choices is an enum whose values the form shows with their own words.
func choices(cs ...choice) *rule {
	ru := &rule{choices: cs}
	for _, c := range cs {
		ru.enum = append(ru.enum, c.value)
	}
	return ru
}

// prefixedPhone is "+<code>" then n digits (n from min to max).
func prefixedPhone(code string, min, max int) *rule {
	count := "{" + itoa(min) + "}"
	want := "must be +" + code + " followed by " + itoa(min) + " digits"
	if min != max {
		count = "{" + itoa(min) + "," + itoa(max) + "}"
		want = "must be +" + code + " followed by " + itoa(min) + " or " + itoa(max) + " digits"
	}
	return &rule{
		pattern: `^\+` + code + "[0-9]" + count + "$",
		match: func(s string) bool {
			rest, ok := strings.CutPrefix(s, "+"+code)
			return ok && digits(rest, min, max)
		},
		want: want,
	}
}

// Account fields.
var (
	ruleAccountNumber   = text(1, 34) // the generic accountNumber of USD, COP and SLV
	ruleBankAccountType = choices(say("CHECKING", "recipients.form.kind.checking"), say("SAVINGS", "recipients.form.kind.savings"))
	ruleRoutingNumber   = digitsRule(9, 9, "must be 9 digits")
	ruleClabe           = digitsRule(18, 18, "must be 18 digits")
	rulePixKey          = text(1, 77)
	rulePixKeyType      = choices(shown("CPF", "CPF"), shown("CNPJ", "CNPJ"), say("EMAIL", "recipients.form.pixKeyType.email"),
		say("PHONE", "recipients.form.pixKeyType.phone"), say("RANDOM", "recipients.form.pixKeyType.random"))
	ruleBRLTaxID      = digitsRule(11, 14, "must be 11 to 14 digits (CPF or CNPJ)")
	rulePHPAccount    = digitsRule(8, 16, "must be 8 to 16 digits")
	ruleSortCode      = digitsRule(6, 6, "must be 6 digits")
	ruleGBPAccount    = digitsRule(8, 8, "must be 8 digits")
	ruleNGNAccount    = digitsRule(10, 10, "must be exactly 10 digits")
	ruleZARAccount    = digitsRule(9, 13, "must be 9 to 13 digits")
	ruleCADBankCode   = digitsRule(3, 3, "must be 3 digits")
	ruleCADBranchCode = digitsRule(5, 5, "must be 5 digits")
	ruleCADAccount    = digitsRule(7, 12, "must be 7 to 12 digits")

	ruleIntlPhone = &rule{
		pattern: `^\+[0-9]{6,14}$`,
		match: func(s string) bool {
			rest, ok := strings.CutPrefix(s, "+")
			return ok && digits(rest, 6, 14)
		},
		want: "must be in international format: + followed by 6 to 14 digits",
	}

	ruleSwift = &rule{
		pattern: `^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`,
		match: func(s string) bool {
			return (len(s) == 8 || len(s) == 11) &&
				allBytes(s[:6], isUpperASCII) &&
				allBytes(s[6:], func(c byte) bool { return isUpperASCII(c) || isDigit(c) })
		},
		want: "must be a SWIFT/BIC code: 8 or 11 upper-case letters and digits",
	}

	ruleIBAN = &rule{
		pattern: `^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$`,
		match: func(s string) bool {
			return len(s) >= 15 && len(s) <= 34 &&
				allBytes(s[:2], isUpperASCII) && allBytes(s[2:4], isDigit) && allBytes(s[4:], isAlnum)
		},
		want:  "must be an IBAN: country code, 2 check digits and 11 to 30 letters or digits, without spaces",
		extra: ibanChecksum,
	}

	ruleAEDIBAN = &rule{
		pattern: `^AE[0-9]{21}$`,
		match: func(s string) bool {
			rest, ok := strings.CutPrefix(s, "AE")
			return ok && digits(rest, 21, 21)
		},
		want:  "must be a UAE IBAN: AE followed by 21 digits",
		extra: ibanChecksum,
	}

	ruleVPA = &rule{
		min: 3, max: 255,
		pattern: `^[a-zA-Z0-9.\-_]+@[a-zA-Z0-9]+$`,
		match: func(s string) bool {
			local, domain, ok := strings.Cut(s, "@")
			return ok && local != "" && domain != "" &&
				allBytes(local, func(c byte) bool { return isAlnum(c) || c == '.' || c == '-' || c == '_' }) &&
				allBytes(domain, isAlnum)
		},
		want: "must be a UPI address such as name@bank",
	}

	ruleXOFPhone = &rule{
		pattern: `^\+(221[0-9]{9}|225[0-9]{10}|229[0-9]{8,9})$`,
		match:   func(s string) bool { return xofRegion(s) != "" },
		want:    "must be +221 followed by 9 digits, +225 followed by 10 digits, or +229 followed by 8 or 9 digits",
	}
	ruleXOFRegion = enum("BJ", "CI", "SN", "TG")

	ruleSparkAddress = &rule{extra: sparkAddress}
)

// xofRegion gives the country of an XOF mobile-money number, or "" when the
// number has none of the allowed forms.
func xofRegion(s string) string {
	switch {
	case strings.HasPrefix(s, "+221") && digits(s[4:], 9, 9):
		return "SN"
	case strings.HasPrefix(s, "+225") && digits(s[4:], 10, 10):
		return "CI"
	case strings.HasPrefix(s, "+229") && digits(s[4:], 8, 9):
		return "BJ"
	}
	return ""
}

// knownBank is the bankName rule of every variant that takes one: the name
// must be, exactly, a bankName that GET /discoveries lists for the country and
// currency. An empty country means any country of the currency (EUR, whose
// accountInfo names no country).
func knownBank(country, currency string) *rule {
	return &rule{
		min: 1, max: 255,
		banks: &bankList{country: country, currency: currency},
		extra: func(s string) (string, *wire.FieldConstraint) {
			if banks.Known(country, currency, s) {
				return "", nil
			}
			var names []string
			for _, b := range banks.List(country, currency) {
				names = append(names, b.BankName)
			}
			query := "currency=" + currency
			if country != "" {
				query = "country=" + country + "&" + query
			}
			return "must be a bankName from GET /discoveries?" + query, &wire.FieldConstraint{Enum: names}
		},
	}
}

// Beneficiary fields.
var (
	ruleFullName = text(1, 255)
	// The Colombian documents keep their Spanish names, which are what the
	// holder calls them.
	ruleDocumentType = choices(shown("CC", "Cédula de ciudadanía (CC)"), shown("CE", "Cédula de extranjería (CE)"),
		shown("TI", "Tarjeta de identidad (TI)"), shown("NIT", "NIT"), say("PP", "recipients.form.document.passport"))
	ruleDocumentNumber = text(1, 50)
	ruleLine           = text(1, 255) // line1, line2, city, state
	rulePostalCode     = text(1, 32)
	ruleLegalName      = text(1, 255)
	ruleRegistration   = text(1, 255)
	ruleBusinessTaxID  = text(1, 255)

	ruleCountry = &rule{
		pattern: `^[A-Z]{2}$`,
		match:   func(s string) bool { return len(s) == 2 && allBytes(s, isUpperASCII) },
		want:    "must be a two-letter upper-case country code",
		extra: func(s string) (string, *wire.FieldConstraint) {
			if countryAssigned(s) {
				return "", nil
			}
			return "must be an assigned ISO 3166-1 alpha-2 country code", &wire.FieldConstraint{Format: "iso-3166-1-alpha-2"}
		},
	}

	ruleBirthDate = &rule{
		pattern: `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`,
		match: func(s string) bool {
			return len(s) == 10 && digits(s[:4], 4, 4) && s[4] == '-' && digits(s[5:7], 2, 2) && s[7] == '-' && digits(s[8:], 2, 2)
		},
		want:  "must be a date YYYY-MM-DD",
		extra: birthDate,
	}

	ruleEmail = &rule{
		min: 3, max: 255,
		pattern: `^[^\s@]+@[^\s@]+\.[^\s@]+$`,
		match:   emailLike,
		want:    "must be an e-mail address",
	}

	rulePhoneE164 = &rule{
		pattern: `^\+[1-9][0-9]{1,14}$`,
		match: func(s string) bool {
			return len(s) >= 3 && s[0] == '+' && s[1] != '0' && digits(s[1:], 2, 15)
		},
		want: "must be an E.164 phone number: + followed by 2 to 15 digits, the first not 0",
	}
)

// emailLike is a deliberately loose e-mail check, the pattern
// ^[^\s@]+@[^\s@]+\.[^\s@]+$: no white space, one @, a dot in the domain with
// something on both sides.
func emailLike(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(domain, "@") || strings.ContainsAny(s, " \t\n\f\r") {
		return false
	}
	for i := 1; i < len(domain)-1; i++ {
		if domain[i] == '.' {
			return true
		}
	}
	return false
}
