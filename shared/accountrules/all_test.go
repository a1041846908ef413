package accountrules

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

// TestAllProblemsAtOnce: a body with several problems reports each of them,
// with its path, in one answer.
func TestAllProblemsAtOnce(t *testing.T) {
	body := base("USD_ACCOUNT")
	set(body, "currency", "usd")
	set(body, ai("routingNumber"), "12345")
	set(body, ben("address.postalCode"), absent)
	set(body, "customerId", "Customer:42")
	errs := ValidateCreate(body)
	want := []string{"accountInfo.beneficiary.address.postalCode", "accountInfo.routingNumber", "currency", "customerId"}
	if got := fieldsOf(errs); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q%s", got, want, dump(errs))
	}
	wantKinds := []string{"required", "pattern", "pattern", "pattern"}
	for i, e := range errs {
		if k := kindOf(e); k != wantKinds[i] {
			t.Errorf("%s: %s, want %s", e.Field, k, wantKinds[i])
		}
	}

	// More at once, across every level.
	body = base("EUR_ACCOUNT")
	set(body, "ownershipType", "MINE")
	set(body, "defaultUmaDepositAccount", "yes")
	set(body, "extra", 1.0)
	set(body, ai("iban"), "DE89370400440532013001")
	set(body, ai("swiftCode"), "deutdeff")
	set(body, ben("fullName"), absent)
	set(body, ben("birthDate"), "2023-02-29")
	set(body, ben("nationality"), "XX")
	set(body, ben("address.country"), absent)
	set(body, ben("address.city"), absent)
	set(body, ben("address.zip"), "10115")
	errs = ValidateCreate(body)
	want = []string{
		"accountInfo.beneficiary.address.city", "accountInfo.beneficiary.address.country", "accountInfo.beneficiary.address.zip",
		"accountInfo.beneficiary.birthDate", "accountInfo.beneficiary.fullName", "accountInfo.beneficiary.nationality",
		"accountInfo.iban", "accountInfo.swiftCode", "defaultUmaDepositAccount", "extra", "ownershipType",
	}
	if got := fieldsOf(errs); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q%s", got, want, dump(errs))
	}

	// The currency mismatch is reported beside the accountInfo problems.
	body = base("SLV_ACCOUNT")
	set(body, "currency", "EUR")
	set(body, ai("bankAccountType"), "X")
	if got := fieldsOf(ValidateCreate(body)); !slices.Equal(got, []string{"accountInfo.bankAccountType", "currency"}) {
		t.Errorf("got %q", got)
	}

	// Nothing at all.
	if got := fieldsOf(ValidateCreate(nil)); !slices.Equal(got, []string{"accountInfo", "currency"}) {
		t.Errorf("empty body: %q", got)
	}
}

// TestUnknownFields: a member the shape does not have is refused at every
// level, with the message "unknown field".
func TestUnknownFields(t *testing.T) {
	body := base("NGN_ACCOUNT")
	set(body, "nickname", "x")
	set(body, ai("iban"), "x")
	set(body, ben(""), business("NG"))
	set(body, ben("vat"), "x")
	set(body, ben("address.county"), "x")
	set(body, ben("businessInfo.website"), "x")
	errs := ValidateCreate(body)
	want := []string{"accountInfo.beneficiary.address.county", "accountInfo.beneficiary.businessInfo.website", "accountInfo.beneficiary.vat", "accountInfo.iban", "nickname"}
	if got := fieldsOf(errs); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q%s", got, want, dump(errs))
	}
	for _, e := range errs {
		if e.Message != "unknown field" || e.Constraint != nil {
			t.Errorf("%s: %q", e.Field, e.Message)
		}
	}
	// Every account type refuses a member it does not have; paymentRails is
	// a response member, never a create one.
	for _, k := range baseKinds {
		body := base(k)
		set(body, ai("paymentRails"), []any{"ACH"})
		if got := fieldsOf(ValidateCreate(body)); !slices.Equal(got, []string{"accountInfo.paymentRails"}) {
			t.Errorf("%s: %q", k, got)
		}
	}
}

// TestPrefix: ValidateAccountInfo paths start at the prefix given.
func TestPrefix(t *testing.T) {
	info := base("GBP_ACCOUNT")["accountInfo"].(map[string]any)
	set(info, "sortCode", "1")
	set(info, "beneficiary.address.line1", absent)
	if got := fieldsOf(ValidateAccountInfo("GBP", info, "")); !slices.Equal(got, []string{"beneficiary.address.line1", "sortCode"}) {
		t.Errorf("prefix \"\": %q", got)
	}
	if got := fieldsOf(ValidateAccountInfo("GBP", info, "data.accountInfo")); !slices.Equal(got, []string{"data.accountInfo.beneficiary.address.line1", "data.accountInfo.sortCode"}) {
		t.Errorf("prefix data.accountInfo: %q", got)
	}
}

// TestConstraints: the constraint values a client renders.
func TestConstraints(t *testing.T) {
	body := base("USD_ACCOUNT")
	set(body, ai("routingNumber"), "1")
	set(body, ai("bankAccountType"), "X")
	set(body, ai("accountNumber"), strings.Repeat("1", 40))
	errs := ValidateCreate(body)
	byField := map[string]wire.FieldError{}
	for _, e := range errs {
		byField[e.Field] = e
	}
	if c := byField["accountInfo.routingNumber"].Constraint; c == nil || c.Pattern != "^[0-9]{9}$" {
		t.Errorf("routingNumber constraint %+v", c)
	}
	if c := byField["accountInfo.bankAccountType"].Constraint; c == nil || !slices.Equal(c.Enum, []string{"CHECKING", "SAVINGS"}) {
		t.Errorf("bankAccountType constraint %+v", c)
	}
	if c := byField["accountInfo.accountNumber"].Constraint; c == nil || c.MinLength == nil || *c.MinLength != 1 || *c.MaxLength != 34 {
		t.Errorf("accountNumber constraint %+v", c)
	}
	// Changing a returned constraint does not change the next answer.
	byField["accountInfo.bankAccountType"].Constraint.Enum[0] = "changed"
	again := ValidateCreate(body)
	for _, e := range again {
		if e.Field == "accountInfo.bankAccountType" && e.Constraint.Enum[0] != "CHECKING" {
			t.Error("constraint enum is shared storage")
		}
	}
}

// patternRules is every rule with a written-out pattern, by name.
func patternRules() map[string]*rule {
	m := map[string]*rule{
		"routingNumber": ruleRoutingNumber, "clabe": ruleClabe, "brlTaxId": ruleBRLTaxID, "phpAccount": rulePHPAccount,
		"sortCode": ruleSortCode, "gbpAccount": ruleGBPAccount, "ngnAccount": ruleNGNAccount, "zarAccount": ruleZARAccount,
		"cadBank": ruleCADBankCode, "cadBranch": ruleCADBranchCode, "cadAccount": ruleCADAccount,
		"intlPhone": ruleIntlPhone, "swift": ruleSwift, "iban": ruleIBAN, "aedIban": ruleAEDIBAN, "vpa": ruleVPA,
		"xofPhone": ruleXOFPhone, "country": ruleCountry, "birthDate": ruleBirthDate, "email": ruleEmail,
		"phoneE164": rulePhoneE164, "currency": ruleCurrency, "customerId": ruleCustomerID,
	}
	// And every pattern rule of the variants (the mobile-money phones).
	for _, v := range variants {
		for _, shape := range []map[string]any{{}, {"accountNumber": ""}, {"phoneNumber": ""}} {
			for _, f := range v.fields(shape, "", &report{}) {
				if f.rule != nil && f.rule.match != nil {
					m[v.accountType+"."+f.name] = f.rule
				}
			}
		}
	}
	return m
}

// samples makes strings close to what the patterns accept.
func samples(rng *rand.Rand, seeds []string) []string {
	const alphabet = "0123456789+@.-_ AEZaez:\x00é"
	out := slices.Clone(seeds)
	for i := 0; i < 3000; i++ {
		var b []byte
		if i%2 == 0 && len(seeds) > 0 {
			b = []byte(seeds[rng.IntN(len(seeds))])
			for j := rng.IntN(3); j >= 0 && len(b) > 0; j-- {
				switch rng.IntN(3) {
				case 0:
					b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
				case 1:
					p := rng.IntN(len(b) + 1)
					b = append(b[:p], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[p:]...)...)
				default:
					p := rng.IntN(len(b))
					b = append(b[:p], b[p+1:]...)
				}
			}
		} else {
			for j := rng.IntN(40); j > 0; j-- {
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			}
		}
		out = append(out, string(b))
	}
	return out
}

// patternSeeds are valid values, one or more per pattern family.
var patternSeeds = []string{
	"021000021", "002010077777777771", "12345678901", "12345678000195", "001234567890", "040004", "12345678",
	"0123456789", "123456789", "001", "00011", "1234567", "+573001234567", "+254712345678", "+255712345678",
	"+260971234567", "+250781234567", "+265991234567", "+256771234567", "+221771234567", "+2250701234567",
	"+22997123456", "+229971234567", "DEUTDEFF", "DEUTDEFF500", "DE89370400440532013000", "FR1420041010050500013M02606",
	aeIBAN, "ana.diaz@okhdfc", "a-b_c@ybl", "US", "GB", "1990-04-01", "a@b.co", "x.y+z@mail.example.org",
	"+14155550123", "USD", "Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "Customer:0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B",
}

// TestPatternsAgree holds every written-out matcher to its JavaScript
// pattern, compiled with Go's regexp (the patterns use only syntax the two
// share), on valid values, their mutations and random strings.
func TestPatternsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := samples(rng, patternSeeds)
	for name, ru := range patternRules() {
		re := regexp.MustCompile(ru.pattern)
		accepted := 0
		for _, s := range inputs {
			if got, want := ru.match(s), re.MatchString(s); got != want {
				t.Errorf("%s: match(%q) = %v, pattern %s says %v", name, s, got, ru.pattern, want)
			}
			if re.MatchString(s) {
				accepted++
			}
		}
		if accepted == 0 {
			t.Errorf("%s: no sample matches %s", name, ru.pattern)
		}
	}
}

// FuzzPatterns is TestPatternsAgree on fuzzed strings.
func FuzzPatterns(f *testing.F) {
	for _, s := range patternSeeds {
		f.Add(s)
	}
	rules := patternRules()
	res := map[string]*regexp.Regexp{}
	for name, ru := range rules {
		res[name] = regexp.MustCompile(ru.pattern)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, ru := range rules {
			if got, want := ru.match(s), res[name].MatchString(s); got != want {
				t.Errorf("%s: match(%q) = %v, pattern %s says %v", name, s, got, ru.pattern, want)
			}
		}
	})
}
