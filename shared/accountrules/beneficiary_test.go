package accountrules

import (
	"slices"
	"strings"
	"testing"
)

// TestIndividualMinimums follows the spec's table "Minimum required
// beneficiary fields, individuals", row by row, plus the other currencies
// (beneficiaryType and fullName only).
func TestIndividualMinimums(t *testing.T) {
	rows := []struct {
		kind           string
		addressNeeded  bool
		addressMembers []string // required address members when an address is given
	}{
		{"USD_ACCOUNT", true, []string{"line1", "city", "postalCode", "country"}},
		{"MXN_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"BRL_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"PHP_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"GBP_ACCOUNT", true, []string{"line1", "city", "postalCode", "country"}},
		{"EUR_ACCOUNT", true, []string{"line1", "city", "postalCode", "country"}},
		// Other currencies.
		{"COP_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"SLV_ACCOUNT", false, []string{"line1", "postalCode", "country"}}, // El Salvador is not the US row
		{"INR_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"NGN_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"ZAR_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"KES_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"XOF_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"CAD_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
		{"AED_ACCOUNT", false, []string{"line1", "postalCode", "country"}},
	}
	var table []row
	for _, r := range rows {
		k := r.kind
		full := individual("US")
		table = append(table,
			row{name: k + " full individual", kind: k, set: map[string]any{ben(""): deepCopy(full)}},
			row{name: k + " beneficiary required", kind: k, set: map[string]any{ben(""): absent}, want: []string{ben("")}, how: "required"},
			row{name: k + " beneficiary is an object", kind: k, set: map[string]any{ben(""): "Ana"}, want: []string{ben("")}, how: "type"},
			row{name: k + " beneficiaryType required", kind: k, set: map[string]any{ben(""): deepCopy(full), ben("beneficiaryType"): absent}, want: []string{ben("beneficiaryType")}, how: "required"},
			row{name: k + " fullName required", kind: k, set: map[string]any{ben(""): deepCopy(full), ben("fullName"): absent}, want: []string{ben("fullName")}, how: "required"},
		)
		minimal := minimalIndividual()
		if r.addressNeeded {
			table = append(table, row{name: k + " address required", kind: k, set: map[string]any{ben(""): minimal}, want: []string{ben("address")}, how: "required"})
		} else {
			table = append(table, row{name: k + " beneficiaryType and fullName suffice", kind: k, set: map[string]any{ben(""): minimal}})
		}
		for _, f := range []string{"line1", "line2", "city", "state", "postalCode", "country"} {
			s := map[string]any{ben(""): deepCopy(full), ben("address." + f): absent}
			if slices.Contains(r.addressMembers, f) {
				table = append(table, row{name: k + " address." + f + " required", kind: k, set: s, want: []string{ben("address." + f)}, how: "required"})
			} else {
				table = append(table, row{name: k + " address." + f + " optional", kind: k, set: s})
			}
		}
	}
	runRowsOrdered(t, table)
}

// businessRows is the spec's table "Minimum required beneficiary fields,
// businesses, by destination currency", written again here so that the test
// holds the code to the spec. Currencies without their own account type are
// tested through AED_ACCOUNT, which takes any currency.
var businessRows = []struct {
	currencies []string
	required   []string
}{
	{[]string{"USD", "MXN"}, []string{"legalName", "address"}},
	{[]string{"EUR"}, []string{"legalName", "address", "registrationNumber"}},
	{[]string{"GBP", "INR", "BRL", "DKK", "PHP", "HKD", "IDR", "MYR", "SGD", "THB", "VND", "AED"}, []string{"legalName", "address"}},
	{[]string{"NGN", "ZAR", "KES", "TZS", "RWF", "ZMW", "UGX", "BWP", "MWK", "XOF", "XAF"}, []string{"legalName", "address", "registrationNumber", "taxId"}},
	{[]string{"COP", "CAD", "CHF"}, []string{"legalName"}}, // no row: legalName only
}

func kindFor(currency string) string {
	for _, k := range baseKinds {
		if k == currency+"_ACCOUNT" {
			return k
		}
	}
	return "AED_ACCOUNT"
}

func TestBusinessMinimums(t *testing.T) {
	paths := map[string]string{
		"legalName":          ben("businessInfo.legalName"),
		"registrationNumber": ben("businessInfo.registrationNumber"),
		"taxId":              ben("businessInfo.taxId"),
		"address":            ben("address"),
	}
	var table []row
	for _, r := range businessRows {
		for _, cur := range r.currencies {
			k := kindFor(cur)
			name := cur + " (" + k + ")"
			withCurrency := func(s map[string]any) map[string]any {
				s[ben("")] = business("NG")
				if k == "AED_ACCOUNT" {
					s["currency"] = cur
				}
				return s
			}
			table = append(table, row{name: name + " full business", kind: k, set: withCurrency(map[string]any{})})
			for _, f := range []string{"legalName", "registrationNumber", "taxId", "address"} {
				s := withCurrency(map[string]any{})
				s[paths[f]] = absent
				if slices.Contains(r.required, f) {
					table = append(table, row{name: name + " " + f + " required", kind: k, set: s, want: []string{paths[f]}, how: "required"})
				} else {
					table = append(table, row{name: name + " " + f + " optional", kind: k, set: s})
				}
			}
		}
	}
	// Also: the same through ValidateAccountInfo, whose currency argument
	// picks the row for AED_ACCOUNT.
	for _, r := range businessRows {
		for _, cur := range r.currencies {
			info := base("AED_ACCOUNT")["accountInfo"].(map[string]any)
			b := business("AE")
			delete(b, "address")
			info["beneficiary"] = b
			errs := ValidateAccountInfo(cur, info, "accountInfo")
			want := []string(nil)
			if slices.Contains(r.required, "address") {
				want = []string{ben("address")}
			}
			if !slices.Equal(fieldsOf(errs), want) {
				t.Errorf("AED_ACCOUNT in %s without address: %q, want %q", cur, fieldsOf(errs), want)
			}
		}
	}
	runRowsOrdered(t, table)
}

// runRowsOrdered is runRows for rows whose set must apply the beneficiary
// before the removal inside it.
func runRowsOrdered(t *testing.T, rows []row) {
	t.Helper()
	for i := range rows {
		s := rows[i].set
		b, ok := s[ben("")].(map[string]any)
		if !ok {
			continue
		}
		bb := deepCopy(b).(map[string]any)
		for p, v := range s {
			if rel, ok := strings.CutPrefix(p, ben("")+"."); ok {
				set(bb, rel, v)
				delete(s, p)
			}
		}
		s[ben("")] = bb
	}
	runRows(t, rows)
}

func TestBusinessBeneficiary(t *testing.T) {
	k := "NGN_ACCOUNT"
	b := business("NG")
	runRowsOrdered(t, []row{
		{name: "businessInfo required", kind: k, set: map[string]any{ben(""): b, ben("businessInfo"): absent}, want: []string{ben("businessInfo")}, how: "required"},
		{name: "businessInfo is an object", kind: k, set: map[string]any{ben(""): b, ben("businessInfo"): "Acme"}, want: []string{ben("businessInfo")}, how: "type"},
		{name: "legalName 255", kind: k, set: map[string]any{ben(""): b, ben("businessInfo.legalName"): strings.Repeat("l", 255)}},
		{name: "legalName 256", kind: k, set: map[string]any{ben(""): b, ben("businessInfo.legalName"): strings.Repeat("l", 256)}, want: []string{ben("businessInfo.legalName")}, how: "length"},
		{name: "legalName empty", kind: k, set: map[string]any{ben(""): b, ben("businessInfo.legalName"): ""}, want: []string{ben("businessInfo.legalName")}, how: "length"},
		{name: "registrationNumber empty", kind: k, set: map[string]any{ben(""): b, ben("businessInfo.registrationNumber"): ""}, want: []string{ben("businessInfo.registrationNumber")}, how: "length"},
		{name: "taxId is a string", kind: k, set: map[string]any{ben(""): b, ben("businessInfo.taxId"): 12.0}, want: []string{ben("businessInfo.taxId")}, how: "type"},
		{name: "fullName is for individuals", kind: k, set: map[string]any{ben(""): b, ben("fullName"): "Acme"}, want: []string{ben("fullName")}, how: "other"},
		{name: "birthDate is for individuals", kind: k, set: map[string]any{ben(""): b, ben("birthDate"): "2000-01-01"}, want: []string{ben("birthDate")}, how: "other"},
		{name: "legalName at the top is unknown", kind: k, set: map[string]any{ben(""): b, ben("legalName"): "Acme"}, want: []string{ben("legalName")}, how: "unknown"},
		{name: "email", kind: k, set: map[string]any{ben(""): b, ben("email"): "a.b+c@example.co.uk"}},
		{name: "email without @", kind: k, set: map[string]any{ben(""): b, ben("email"): "payments.acme.example"}, want: []string{ben("email")}, how: "pattern"},
		{name: "email without a dot in the domain", kind: k, set: map[string]any{ben(""): b, ben("email"): "payments@localhost"}, want: []string{ben("email")}, how: "pattern"},
		{name: "email with a space", kind: k, set: map[string]any{ben(""): b, ben("email"): "pay ments@acme.example"}, want: []string{ben("email")}, how: "pattern"},
		{name: "phoneNumber E.164", kind: k, set: map[string]any{ben(""): b, ben("phoneNumber"): "+14155550123"}},
		{name: "phoneNumber national", kind: k, set: map[string]any{ben(""): b, ben("phoneNumber"): "08012345678"}, want: []string{ben("phoneNumber")}, how: "pattern"},
		{name: "phoneNumber +0", kind: k, set: map[string]any{ben(""): b, ben("phoneNumber"): "+0123456"}, want: []string{ben("phoneNumber")}, how: "pattern"},
		{name: "phoneNumber 16 digits", kind: k, set: map[string]any{ben(""): b, ben("phoneNumber"): "+1234567890123456"}, want: []string{ben("phoneNumber")}, how: "pattern"},
		{name: "countryOfResidence unassigned", kind: k, set: map[string]any{ben(""): b, ben("countryOfResidence"): "XK"}, want: []string{ben("countryOfResidence")}, how: "format"},
	})
}

func TestIndividualBeneficiary(t *testing.T) {
	k := "MXN_ACCOUNT"
	b := individual("MX")
	bd := ben("birthDate")
	rows := []row{
		{name: "fullName 255", kind: k, set: map[string]any{ben(""): b, ben("fullName"): strings.Repeat("n", 255)}},
		{name: "fullName 255 non-ASCII characters", kind: k, set: map[string]any{ben(""): b, ben("fullName"): strings.Repeat("ñ", 255)}},
		{name: "fullName 256", kind: k, set: map[string]any{ben(""): b, ben("fullName"): strings.Repeat("n", 256)}, want: []string{ben("fullName")}, how: "length"},
		{name: "fullName empty", kind: k, set: map[string]any{ben(""): b, ben("fullName"): ""}, want: []string{ben("fullName")}, how: "length"},
		{name: "fullName with a newline", kind: k, set: map[string]any{ben(""): b, ben("fullName"): "Ana\nDiaz"}, want: []string{ben("fullName")}, how: "other"},
		{name: "fullName with invalid UTF-8", kind: k, set: map[string]any{ben(""): b, ben("fullName"): "Ana \xff"}, want: []string{ben("fullName")}, how: "other"},
		{name: "fullName is not trimmed, spaces are kept", kind: k, set: map[string]any{ben(""): b, ben("fullName"): " Ana "}},
		{name: "beneficiaryType other", kind: k, set: map[string]any{ben(""): b, ben("beneficiaryType"): "PERSON"}, want: []string{ben("beneficiaryType")}, how: "enum"},
		{name: "beneficiaryType lower case", kind: k, set: map[string]any{ben(""): b, ben("beneficiaryType"): "individual"}, want: []string{ben("beneficiaryType")}, how: "enum"},
		{name: "businessInfo is for businesses", kind: k, set: map[string]any{ben(""): b, ben("businessInfo"): map[string]any{"legalName": "x"}}, want: []string{ben("businessInfo")}, how: "other"},
		// birthDate
		{name: "birthDate optional", kind: k, set: map[string]any{ben(""): b, bd: absent}},
		{name: "birthDate 2024-02-29 (leap year)", kind: k, set: map[string]any{ben(""): b, bd: "2024-02-29"}},
		{name: "birthDate 2000-02-29 (leap century)", kind: k, set: map[string]any{ben(""): b, bd: "2000-02-29"}},
		{name: "birthDate 2023-02-29", kind: k, set: map[string]any{ben(""): b, bd: "2023-02-29"}, want: []string{bd}, how: "format"},
		{name: "birthDate 1900-02-29 (not a leap year)", kind: k, set: map[string]any{ben(""): b, bd: "1900-02-29"}, want: []string{bd}, how: "format"},
		{name: "birthDate 2021-04-31", kind: k, set: map[string]any{ben(""): b, bd: "2021-04-31"}, want: []string{bd}, how: "format"},
		{name: "birthDate month 13", kind: k, set: map[string]any{ben(""): b, bd: "1990-13-01"}, want: []string{bd}, how: "format"},
		{name: "birthDate day 00", kind: k, set: map[string]any{ben(""): b, bd: "1990-01-00"}, want: []string{bd}, how: "format"},
		{name: "birthDate one-digit month", kind: k, set: map[string]any{ben(""): b, bd: "1990-4-01"}, want: []string{bd}, how: "pattern"},
		{name: "birthDate with a time", kind: k, set: map[string]any{ben(""): b, bd: "1990-04-01T00:00:00Z"}, want: []string{bd}, how: "pattern"},
		{name: "birthDate day-month-year", kind: k, set: map[string]any{ben(""): b, bd: "01-04-1990"}, want: []string{bd}, how: "pattern"},
		{name: "birthDate today", kind: k, set: map[string]any{ben(""): b, bd: "2026-06-15"}},
		{name: "birthDate tomorrow in UTC, today in UTC+14", kind: k, set: map[string]any{ben(""): b, bd: "2026-06-16"}},
		{name: "birthDate in the future", kind: k, set: map[string]any{ben(""): b, bd: "2026-06-17"}, want: []string{bd}, how: "format"},
		{name: "birthDate far in the future", kind: k, set: map[string]any{ben(""): b, bd: "2999-01-01"}, want: []string{bd}, how: "format"},
		{name: "birthDate 1900-01-01", kind: k, set: map[string]any{ben(""): b, bd: "1900-01-01"}},
		{name: "birthDate 1899-12-31", kind: k, set: map[string]any{ben(""): b, bd: "1899-12-31"}, want: []string{bd}, how: "format"},
		// nationality and countries
		{name: "nationality MX", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "MX"}},
		{name: "nationality AQ (assigned)", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "AQ"}},
		{name: "nationality lower case", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "mx"}, want: []string{ben("nationality")}, how: "pattern"},
		{name: "nationality three letters", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "MEX"}, want: []string{ben("nationality")}, how: "pattern"},
		{name: "nationality unassigned XX", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "XX"}, want: []string{ben("nationality")}, how: "format"},
		{name: "nationality UK is not ISO (GB is)", kind: k, set: map[string]any{ben(""): b, ben("nationality"): "UK"}, want: []string{ben("nationality")}, how: "format"},
		{name: "countryOfResidence optional and checked", kind: k, set: map[string]any{ben(""): b, ben("countryOfResidence"): "ZZ"}, want: []string{ben("countryOfResidence")}, how: "format"},
		{name: "address.country unassigned", kind: k, set: map[string]any{ben(""): b, ben("address.country"): "EU"}, want: []string{ben("address.country")}, how: "format"},
		{name: "address.postalCode 32", kind: k, set: map[string]any{ben(""): b, ben("address.postalCode"): strings.Repeat("9", 32)}},
		{name: "address.postalCode 33", kind: k, set: map[string]any{ben(""): b, ben("address.postalCode"): strings.Repeat("9", 33)}, want: []string{ben("address.postalCode")}, how: "length"},
		{name: "address.line1 256", kind: k, set: map[string]any{ben(""): b, ben("address.line1"): strings.Repeat("l", 256)}, want: []string{ben("address.line1")}, how: "length"},
		{name: "address.line2 given", kind: k, set: map[string]any{ben(""): b, ben("address.line2"): "Apt 4"}},
		{name: "address.state empty", kind: k, set: map[string]any{ben(""): b, ben("address.state"): ""}, want: []string{ben("address.state")}, how: "length"},
		{name: "address is an object", kind: k, set: map[string]any{ben(""): b, ben("address"): "1 Main Street"}, want: []string{ben("address")}, how: "type"},
		// documents
		{name: "documentNumber 50", kind: k, set: map[string]any{ben(""): b, ben("documentType"): "PP", ben("documentNumber"): strings.Repeat("1", 50)}},
		{name: "documentNumber 51", kind: k, set: map[string]any{ben(""): b, ben("documentType"): "PP", ben("documentNumber"): strings.Repeat("1", 51)}, want: []string{ben("documentNumber")}, how: "length"},
		{name: "documentType other", kind: k, set: map[string]any{ben(""): b, ben("documentType"): "DNI", ben("documentNumber"): "123"}, want: []string{ben("documentType")}, how: "enum"},
		{name: "documentType without documentNumber", kind: k, set: map[string]any{ben(""): b, ben("documentType"): "CC"}, want: []string{ben("documentNumber")}, how: "required"},
		{name: "documentNumber without documentType", kind: k, set: map[string]any{ben(""): b, ben("documentNumber"): "123"}, want: []string{ben("documentType")}, how: "required"},
	}
	for _, dt := range []string{"CC", "CE", "TI", "NIT", "PP"} {
		rows = append(rows, row{name: "documentType " + dt, kind: k, set: map[string]any{ben(""): b, ben("documentType"): dt, ben("documentNumber"): "1020304050"}})
	}
	runRowsOrdered(t, rows)
}

// TestUnknownBeneficiaryType: with no valid beneficiaryType, the members of
// both types are checked but none of them is required.
func TestUnknownBeneficiaryType(t *testing.T) {
	k := "GBP_ACCOUNT"
	b := obj("fullName", "", "businessInfo", obj("registrationNumber", "1"), "foo", 1.0)
	runRowsOrdered(t, []row{{
		name: "all checked", kind: k, set: map[string]any{ben(""): b},
		want: []string{ben("beneficiaryType"), ben("businessInfo.legalName"), ben("foo"), ben("fullName")},
	}})
}

func TestRequiredBeneficiaryFields(t *testing.T) {
	for _, tc := range []struct {
		accountType, currency, beneficiaryType string
		want                                   []string
	}{
		{"USD_ACCOUNT", "", "INDIVIDUAL", []string{"address", "address.city", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "fullName"}},
		{"MXN_ACCOUNT", "", "INDIVIDUAL", []string{"beneficiaryType", "fullName"}},
		{"SLV_ACCOUNT", "", "INDIVIDUAL", []string{"beneficiaryType", "fullName"}},
		{"EUR_ACCOUNT", "", "BUSINESS", []string{"address", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "businessInfo", "businessInfo.legalName", "businessInfo.registrationNumber"}},
		{"KES_ACCOUNT", "", "BUSINESS", []string{"address", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "businessInfo", "businessInfo.legalName", "businessInfo.registrationNumber", "businessInfo.taxId"}},
		{"COP_ACCOUNT", "", "BUSINESS", []string{"beneficiaryType", "businessInfo", "businessInfo.legalName"}},
		{"AED_ACCOUNT", "", "BUSINESS", []string{"address", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "businessInfo", "businessInfo.legalName"}},
		{"AED_ACCOUNT", "XAF", "BUSINESS", []string{"address", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "businessInfo", "businessInfo.legalName", "businessInfo.registrationNumber", "businessInfo.taxId"}},
		{"AED_ACCOUNT", "CHF", "BUSINESS", []string{"beneficiaryType", "businessInfo", "businessInfo.legalName"}},
		{"USD_ACCOUNT", "EUR", "BUSINESS", []string{"address", "address.country", "address.line1", "address.postalCode", "beneficiaryType", "businessInfo", "businessInfo.legalName"}}, // the type fixes USD
		{"SPARK_WALLET", "", "INDIVIDUAL", nil},
		{"USD_ACCOUNT", "", "PERSON", nil},
		{"NOPE", "", "INDIVIDUAL", nil},
	} {
		if got := RequiredBeneficiaryFields(tc.accountType, tc.currency, tc.beneficiaryType); !slices.Equal(got, tc.want) {
			t.Errorf("RequiredBeneficiaryFields(%s, %q, %s) = %q, want %q", tc.accountType, tc.currency, tc.beneficiaryType, got, tc.want)
		}
	}
}

func TestSenderRequirements(t *testing.T) {
	for _, c := range []string{"GBP", "INR", "BRL", "DKK", "PHP", "HKD", "IDR", "MYR", "SGD", "THB", "VND", "AED"} {
		if got := SenderRequirements(c); !slices.Equal(got, []string{"registrationNumber"}) {
			t.Errorf("SenderRequirements(%s) = %q", c, got)
		}
	}
	for _, c := range []string{"USD", "EUR", "MXN", "NGN", "BTC", ""} {
		if got := SenderRequirements(c); got != nil {
			t.Errorf("SenderRequirements(%s) = %q, want nil", c, got)
		}
	}
	// Account creation does not ask the beneficiary for it: a GBP business
	// without registrationNumber is accepted.
	body := base("GBP_ACCOUNT")
	b := business("GB")
	delete(b["businessInfo"].(map[string]any), "registrationNumber")
	set(body, ben(""), b)
	if errs := ValidateCreate(body); errs != nil {
		t.Errorf("GBP business without registrationNumber:%s", dump(errs))
	}
}

func TestCountryCodes(t *testing.T) {
	if len(countryCodes) != 2*249 {
		t.Fatalf("%d country codes, want 249", len(countryCodes)/2)
	}
	for i := 2; i+1 < len(countryCodes); i += 2 {
		if countryCodes[i-2:i] >= countryCodes[i:i+2] {
			t.Errorf("country codes out of order at %s", countryCodes[i:i+2])
		}
	}
	for _, c := range []string{"US", "GB", "DE", "PH", "NG", "ZA", "SV", "CI", "SS", "BQ", "AX"} {
		if !countryAssigned(c) {
			t.Errorf("%s should be assigned", c)
		}
	}
	for _, c := range []string{"UK", "EU", "XK", "AN", "ZZ", "us", "U", "USA", "DEU"} {
		if countryAssigned(c) {
			t.Errorf("%s should not be assigned", c)
		}
	}
}
