package accountrules

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// testNow is the clock of every test: 2026-06-15 12:00 UTC.
var testNow = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	now = func() time.Time { return testNow }
	os.Exit(m.Run())
}

// absent, as a value to set, deletes the member.
type absentT struct{}

var absent = absentT{}

// deepCopy copies a decoded JSON tree.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// set changes the member at a dot path of body (creating objects on the way);
// the value absent deletes it.
func set(body map[string]any, path string, value any) {
	parts := strings.Split(path, ".")
	m := body
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	last := parts[len(parts)-1]
	if value == absent {
		delete(m, last)
	} else {
		m[last] = value
	}
}

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// Beneficiaries used by the base bodies.
func individual(country string) map[string]any {
	return obj(
		"beneficiaryType", "INDIVIDUAL",
		"fullName", "Ana Maria Diaz",
		"birthDate", "1990-04-01",
		"nationality", country,
		"address", obj("line1", "1 Main Street", "city", "Springfield", "state", "IL", "postalCode", "62701", "country", country),
	)
}

func minimalIndividual() map[string]any {
	return obj("beneficiaryType", "INDIVIDUAL", "fullName", "Ana Maria Diaz")
}

func business(country string) map[string]any {
	return obj(
		"beneficiaryType", "BUSINESS",
		"businessInfo", obj("legalName", "Acme Trading Ltd", "registrationNumber", "RC-123456", "taxId", "TX-98765"),
		"address", obj("line1", "2 Market Road", "city", "Lagos", "postalCode", "100001", "country", country),
		"email", "payments@acme.example",
		"phoneNumber", "+2348012345678",
		"countryOfResidence", country,
	)
}

// Spark addresses, made here so that the checksum is computed, not copied.
func sparkEncode(data []byte, constant uint32) string {
	values := append(slices.Clone(data), 0, 0, 0, 0, 0, 0)
	chk := bech32Polymod(sparkHRP, values) ^ constant
	var b strings.Builder
	b.WriteString(sparkHRP + "1")
	for _, v := range data {
		b.WriteByte(bech32Alphabet[v])
	}
	for i := 0; i < 6; i++ {
		b.WriteByte(bech32Alphabet[(chk>>(5*(5-i)))&31])
	}
	return b.String()
}

// sparkData is 75 five-bit values, so that the address is 87 characters.
func sparkData(seed byte) []byte {
	d := make([]byte, 75)
	for i := range d {
		d[i] = byte((int(seed) + i*7 + i*i) % 32)
	}
	return d
}

var (
	sparkM = sparkEncode(sparkData(3), bech32mConst) // bech32m, as Spark SDKs write
	sparkB = sparkEncode(sparkData(9), bech32Const)  // bech32
)

// corrupt changes one character of a bech32 string at i to another
// character of the alphabet.
func corrupt(s string, i int) string {
	c := s[i]
	j := strings.IndexByte(bech32Alphabet, c)
	return s[:i] + string(bech32Alphabet[(j+1)%32]) + s[i+1:]
}

// withCheckDigits computes the check digits of an IBAN written with "00".
func withCheckDigits(iban string) string {
	rem := 0
	for _, c := range []byte(iban[4:] + iban[:2] + "00") {
		if c >= '0' && c <= '9' {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	cd := 98 - rem
	return iban[:2] + string(rune('0'+cd/10)) + string(rune('0'+cd%10)) + iban[4:]
}

var aeIBAN = withCheckDigits("AE000331234567890123456")

// base returns a valid create body of a kind: an accountType, or COP_MOBILE /
// SLV_MOBILE for the mobile-money shapes.
func base(kind string) map[string]any {
	info := func(kv ...any) map[string]any { return obj(kv...) }
	var currency string
	var ai map[string]any
	switch kind {
	case "USD_ACCOUNT":
		currency = "USD"
		ai = info("accountNumber", "123456789012", "routingNumber", "021000021", "bankAccountType", "CHECKING", "bankName", "Chase Bank", "beneficiary", individual("US"))
	case "MXN_ACCOUNT":
		currency = "MXN"
		ai = info("clabeNumber", "002010077777777771", "bankName", "BBVA Mexico", "beneficiary", minimalIndividual())
	case "BRL_ACCOUNT":
		currency = "BRL"
		ai = info("pixKey", "ana.002@example.com", "pixKeyType", "EMAIL", "bankName", "Nubank", "taxId", "12345678901", "beneficiary", minimalIndividual())
	case "COP_ACCOUNT":
		currency = "COP"
		b := minimalIndividual()
		b["documentType"], b["documentNumber"] = "CC", "1020304050"
		ai = info("bankName", "Bancolombia", "accountNumber", "1234567890", "bankAccountType", "SAVINGS", "beneficiary", b)
	case "COP_MOBILE":
		currency = "COP"
		kind = "COP_ACCOUNT"
		ai = info("bankName", "Nequi", "phoneNumber", "+573001234567", "beneficiary", minimalIndividual())
	case "SLV_ACCOUNT":
		currency = "USD"
		ai = info("bankName", "Banco Cuscatlan", "accountNumber", "1234567890", "bankAccountType", "CHECKING", "beneficiary", minimalIndividual())
	case "SLV_MOBILE":
		currency = "USD"
		kind = "SLV_ACCOUNT"
		ai = info("phoneNumber", "+50370001234", "beneficiary", minimalIndividual())
	case "EUR_ACCOUNT":
		currency = "EUR"
		ai = info("iban", "DE89370400440532013000", "swiftCode", "DEUTDEFF", "bankName", "Deutsche Bank", "beneficiary", individual("DE"))
	case "PHP_ACCOUNT":
		currency = "PHP"
		ai = info("bankName", "BDO Unibank", "accountNumber", "001234567890", "beneficiary", minimalIndividual())
	case "GBP_ACCOUNT":
		currency = "GBP"
		ai = info("sortCode", "040004", "accountNumber", "12345678", "beneficiary", individual("GB"))
	case "INR_ACCOUNT":
		currency = "INR"
		ai = info("vpa", "ana.diaz@okhdfc", "beneficiary", minimalIndividual())
	case "NGN_ACCOUNT":
		currency = "NGN"
		ai = info("accountNumber", "0123456789", "bankName", "First Bank of Nigeria", "beneficiary", minimalIndividual())
	case "ZAR_ACCOUNT":
		currency = "ZAR"
		ai = info("accountNumber", "123456789", "bankName", "Standard Bank", "beneficiary", minimalIndividual())
	case "KES_ACCOUNT":
		currency = "KES"
		ai = info("phoneNumber", "+254712345678", "provider", "M-PESA", "beneficiary", minimalIndividual())
	case "TZS_ACCOUNT":
		currency = "TZS"
		ai = info("phoneNumber", "+255712345678", "provider", "AIRTEL", "beneficiary", minimalIndividual())
	case "ZMW_ACCOUNT":
		currency = "ZMW"
		ai = info("phoneNumber", "+260971234567", "provider", "MTN", "beneficiary", minimalIndividual())
	case "RWF_ACCOUNT":
		currency = "RWF"
		ai = info("phoneNumber", "+250781234567", "provider", "MTN", "beneficiary", minimalIndividual())
	case "MWK_ACCOUNT":
		currency = "MWK"
		ai = info("phoneNumber", "+265991234567", "provider", "AIRTEL", "beneficiary", minimalIndividual())
	case "UGX_ACCOUNT":
		currency = "UGX"
		ai = info("phoneNumber", "+256771234567", "provider", "MTN", "beneficiary", minimalIndividual())
	case "XOF_ACCOUNT":
		currency = "XOF"
		ai = info("phoneNumber", "+221771234567", "provider", "ORANGE", "region", "SN", "beneficiary", minimalIndividual())
	case "CAD_ACCOUNT":
		currency = "CAD"
		ai = info("bankCode", "001", "branchCode", "00011", "accountNumber", "1234567", "beneficiary", minimalIndividual())
	case "AED_ACCOUNT":
		currency = "AED"
		ai = info("iban", aeIBAN, "swiftCode", "EBILAEAD", "beneficiary", minimalIndividual())
	case "SPARK_WALLET":
		currency = "BTC"
		ai = info("address", sparkM)
	default:
		panic("no base body for " + kind)
	}
	ai["accountType"] = kind
	return obj(
		"currency", currency,
		"platformAccountId", "acct-001",
		"customerId", "Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"accountInfo", ai,
	)
}

// baseKinds is every base body.
var baseKinds = []string{
	"USD_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT", "COP_ACCOUNT", "COP_MOBILE", "SLV_ACCOUNT", "SLV_MOBILE",
	"EUR_ACCOUNT", "PHP_ACCOUNT", "GBP_ACCOUNT", "INR_ACCOUNT", "NGN_ACCOUNT", "ZAR_ACCOUNT",
	"KES_ACCOUNT", "TZS_ACCOUNT", "ZMW_ACCOUNT", "RWF_ACCOUNT", "MWK_ACCOUNT", "UGX_ACCOUNT",
	"XOF_ACCOUNT", "CAD_ACCOUNT", "AED_ACCOUNT", "SPARK_WALLET",
}

func fieldsOf(errs []wire.FieldError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Field
	}
	return out
}

// kindOf classifies an error the way the rows of the tables name it.
func kindOf(e wire.FieldError) string {
	c := e.Constraint
	switch {
	case e.Message == msgRequired && c == nil:
		return "required"
	case e.Message == msgUnknown:
		return "unknown"
	case e.Message == msgString || e.Message == msgObject || e.Message == msgBool:
		return "type"
	case c == nil:
		return "other"
	case c.Pattern != "":
		return "pattern"
	case len(c.Enum) > 0:
		return "enum"
	case c.MinLength != nil || c.MaxLength != nil:
		return "length"
	case c.Format != "":
		return "format"
	}
	return "other"
}

func dump(errs []wire.FieldError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n\t" + e.Field + ": " + e.Message)
		if c := e.Constraint; c != nil {
			b.WriteString(" [" + c.Pattern + c.Format + strings.Join(c.Enum, "|"))
			if c.MinLength != nil {
				b.WriteString(" len " + itoa(*c.MinLength) + "-" + itoa(*c.MaxLength))
			}
			b.WriteString("]")
		}
	}
	return b.String()
}

// row is one line of a rules table: a base body, changes at dot paths, and
// the exact fields refused (none: accepted) with the kind of every error.
type row struct {
	name string
	kind string         // base body
	set  map[string]any // dot path from the body → value (absent deletes)
	want []string       // refused fields, sorted; nil = accepted
	how  string         // kind of every error: required, type, unknown, pattern, enum, length, format, other; "" = not checked
}

func runRows(t *testing.T, rows []row) {
	t.Helper()
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			body := base(tc.kind)
			for p, v := range tc.set {
				set(body, p, v)
			}
			errs := ValidateCreate(body)
			got := fieldsOf(errs)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("refused %q, want %q%s", got, want, dump(errs))
			}
			if tc.how != "" {
				for _, e := range errs {
					if k := kindOf(e); k != tc.how {
						t.Errorf("%s: %s error, want %s%s", e.Field, k, tc.how, dump(errs))
					}
				}
			}
		})
	}
}

// ai prefixes accountInfo.
func ai(p string) string { return "accountInfo." + p }

// ben prefixes accountInfo.beneficiary.
func ben(p string) string {
	if p == "" {
		return "accountInfo.beneficiary"
	}
	return "accountInfo.beneficiary." + p
}

type wireError = wire.FieldError

func compareErrors(a, b wire.FieldError) int {
	if c := strings.Compare(a.Field, b.Field); c != 0 {
		return c
	}
	return strings.Compare(a.Message, b.Message)
}
