package accountrules

import (
	"slices"
)

// Beneficiary members by type. Both types take address, email, phoneNumber and
// countryOfResidence.
var (
	commonBeneficiary     = []string{"beneficiaryType", "address", "email", "phoneNumber", "countryOfResidence"}
	individualBeneficiary = []string{"fullName", "birthDate", "nationality", "documentType", "documentNumber"}
	businessBeneficiary   = []string{"businessInfo"}
	addressMembers        = []string{"line1", "line2", "city", "state", "postalCode", "country"}
	businessInfoMembers   = []string{"legalName", "taxId", "registrationNumber"}

	ruleBeneficiaryType = choices(say("INDIVIDUAL", "recipients.form.holderType.individual"), say("BUSINESS", "recipients.form.holderType.business"))
)

// addressRequired are the address members every given address needs (the
// reference API's Address schema), sorted; individuals of the US, UK and
// Europe rows need city too.
var addressRequired = []string{"country", "line1", "postalCode"}

// businessMinimums is the spec's table "Minimum required beneficiary fields,
// businesses, by destination currency", row by row. legalName is
// businessInfo.legalName; registrationNumber and taxId are in businessInfo.
var businessMinimums = []struct {
	currencies []string
	required   []string
}{
	{[]string{"USD", "MXN"}, []string{"legalName", "address"}},
	{[]string{"EUR"}, []string{"legalName", "address", "registrationNumber"}},
	{[]string{"GBP", "INR", "BRL", "DKK", "PHP", "HKD", "IDR", "MYR", "SGD", "THB", "VND", "AED"}, []string{"legalName", "address"}},
	{[]string{"NGN", "ZAR", "KES", "TZS", "RWF", "ZMW", "UGX", "BWP", "MWK", "XOF", "XAF"}, []string{"legalName", "address", "registrationNumber", "taxId"}},
}

// businessRequires returns the business minimum of a destination currency;
// currencies of no row need legalName only.
func businessRequires(currency string) []string {
	for _, row := range businessMinimums {
		if slices.Contains(row.currencies, currency) {
			return row.required
		}
	}
	return []string{"legalName"}
}

// senderCurrencies are the destination currencies for which the spec asks
// business senders (originators) for a registrationNumber.
var senderCurrencies = []string{"GBP", "INR", "BRL", "DKK", "PHP", "HKD", "IDR", "MYR", "SGD", "THB", "VND", "AED"}

// SenderRequirements returns what a business sender (the originator of a
// payment, not the beneficiary) must provide when sending to
// destinationCurrency: ["registrationNumber"] for GBP, INR, BRL, DKK, PHP,
// HKD, IDR, MYR, SGD, THB, VND and AED, nil otherwise. It concerns quotes, not
// account creation: ValidateCreate does not use it.
func SenderRequirements(destinationCurrency string) []string {
	if slices.Contains(senderCurrencies, destinationCurrency) {
		return []string{"registrationNumber"}
	}
	return nil
}

// RequiredBeneficiaryFields returns the beneficiary members that an account
// of accountType and currency requires for beneficiaryType (INDIVIDUAL or
// BUSINESS), as dot paths relative to accountInfo.beneficiary, sorted; it is
// the table the validator applies, for forms that mark required fields. The
// address members listed are those required when the address itself is; a
// SPARK_WALLET, an unknown type or an unknown beneficiaryType gives nil.
// currency matters only for AED_ACCOUNT (empty means AED).
func RequiredBeneficiaryFields(accountType, currency, beneficiaryType string) []string {
	v := lookup(accountType)
	if v == nil || v.wallet {
		return nil
	}
	if v.currency != "" {
		currency = v.currency
	} else if currency == "" {
		currency = "AED"
	}
	var business []string // required businessInfo members
	address := false
	switch beneficiaryType {
	case "INDIVIDUAL":
		address = v.individualAddress
	case "BUSINESS":
		for _, f := range businessRequires(currency) {
			if f == "address" {
				address = true
			} else {
				business = append(business, "businessInfo."+f)
			}
		}
	default:
		return nil
	}
	// The paths are appended in sorted order, which spares the wasm module a
	// sort (TestRequiredBeneficiaryFieldsSorted checks every combination):
	// address < address.city < the other address members < beneficiaryType <
	// businessInfo < businessInfo.* (legalName, registrationNumber, taxId in
	// the order of businessMinimums) < fullName.
	var out []string
	if address {
		out = append(out, "address")
		if beneficiaryType == "INDIVIDUAL" {
			out = append(out, "address.city")
		}
		for _, f := range addressRequired {
			out = append(out, "address."+f)
		}
	}
	out = append(out, "beneficiaryType")
	if beneficiaryType == "INDIVIDUAL" {
		return append(out, "fullName")
	}
	out = append(out, "businessInfo")
	return append(out, business...)
}

// checkBeneficiary checks accountInfo.beneficiary of a fiat variant.
func checkBeneficiary(v *variant, currency string, b map[string]any, path string, r *report) {
	bt, _ := r.str(b, path, "beneficiaryType", true, ruleBeneficiaryType)
	individual, business := bt == "INDIVIDUAL", bt == "BUSINESS"
	known := individual || business
	required := map[string]bool{}
	for _, f := range RequiredBeneficiaryFields(v.accountType, currency, bt) {
		required[f] = true
	}

	r.unknown(b, path,
		func(k string) bool {
			return slices.Contains(commonBeneficiary, k) ||
				(!business && slices.Contains(individualBeneficiary, k)) ||
				(!individual && slices.Contains(businessBeneficiary, k))
		},
		func(k string) string {
			if known && (slices.Contains(individualBeneficiary, k) || slices.Contains(businessBeneficiary, k)) {
				return "not allowed for beneficiaryType " + bt
			}
			return ""
		})

	// Members of both types. Before the type is known, nothing of one type is
	// required, but whatever is given is checked.
	if addr, ok := r.object(b, path, "address", required["address"]); ok {
		checkAddress(addr, join(path, "address"), required["address.city"], r)
	}
	r.str(b, path, "email", false, ruleEmail)
	r.str(b, path, "phoneNumber", false, rulePhoneE164)
	r.str(b, path, "countryOfResidence", false, ruleCountry)

	if !business {
		r.str(b, path, "fullName", required["fullName"], ruleFullName)
		r.str(b, path, "birthDate", false, ruleBirthDate)
		r.str(b, path, "nationality", false, ruleCountry)
		// A document is a type and a number; one without the other is refused.
		docType, docNumber := has(b, "documentType"), has(b, "documentNumber")
		r.str(b, path, "documentType", docNumber, ruleDocumentType)
		r.str(b, path, "documentNumber", docType, ruleDocumentNumber)
	}
	if !individual {
		if info, ok := r.object(b, path, "businessInfo", required["businessInfo"]); ok {
			p := join(path, "businessInfo")
			r.unknown(info, p, func(k string) bool { return slices.Contains(businessInfoMembers, k) }, nil)
			r.str(info, p, "legalName", required["businessInfo.legalName"] || !known, ruleLegalName)
			r.str(info, p, "registrationNumber", required["businessInfo.registrationNumber"], ruleRegistration)
			r.str(info, p, "taxId", required["businessInfo.taxId"], ruleBusinessTaxID)
		}
	}
}

// checkAddress checks a given address: line1, postalCode and country always
// required, city when withCity.
func checkAddress(a map[string]any, path string, withCity bool, r *report) {
	r.unknown(a, path, func(k string) bool { return slices.Contains(addressMembers, k) }, nil)
	r.str(a, path, "line1", true, ruleLine)
	r.str(a, path, "line2", false, ruleLine)
	r.str(a, path, "city", withCity, ruleLine)
	r.str(a, path, "state", false, ruleLine)
	r.str(a, path, "postalCode", true, rulePostalCode)
	r.str(a, path, "country", true, ruleCountry)
}
