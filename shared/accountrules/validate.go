package accountrules

import (
	"slices"
	"strings"

	"paywallet/shared/wire"
)

// topLevel is every member of a create body, in the spec's order.
var topLevel = []string{"currency", "accountInfo", "platformAccountId", "customerId", "defaultUmaDepositAccount", "ownershipType"}

var (
	ruleCurrency = &rule{
		pattern: `^[A-Z]{3}$`,
		match:   func(s string) bool { return len(s) == 3 && allBytes(s, isUpperASCII) },
		want:    "must be a three-letter upper-case currency code",
	}
	rulePlatformAccountID = text(1, 255)
	ruleCustomerID        = &rule{
		pattern: `^Customer:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`,
		match:   customerID,
		want:    "must be Customer:<uuid>",
	}
	ruleOwnershipType = enum("FIRST_PARTY", "THIRD_PARTY")
)

func customerID(s string) bool {
	id, ok := strings.CutPrefix(s, "Customer:")
	if !ok || len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func constraintEnum(values ...string) *wire.FieldConstraint {
	return &wire.FieldConstraint{Enum: values}
}

// ValidateCreate checks a whole external-account create body, the body of
// POST /customers/external-accounts: currency (required, three upper-case
// letters, the currency the accountType requires), accountInfo (required, see
// [ValidateAccountInfo]), platformAccountId (optional, 1 to 255 characters),
// customerId (optional, Customer:<uuid>; null counts as absent),
// defaultUmaDepositAccount (optional boolean) and ownershipType (optional,
// FIRST_PARTY or THIRD_PARTY). Other members are refused.
//
// It returns every problem found, sorted by field then message, or nil.
func ValidateCreate(body map[string]any) []wire.FieldError {
	r := &report{}
	r.unknown(body, "", func(k string) bool { return slices.Contains(topLevel, k) }, nil)

	currency, currencyOK := r.str(body, "", "currency", true, ruleCurrency)
	if info, ok := r.object(body, "", "accountInfo", true); ok {
		given := ""
		if currencyOK {
			given = currency
		}
		if v := checkInfo(given, info, "accountInfo", r); v != nil && currencyOK && v.currency != "" && currency != v.currency {
			r.add("currency", "must be "+v.currency+" for "+v.accountType, constraintEnum(v.currency))
		}
	}
	r.str(body, "", "platformAccountId", false, rulePlatformAccountID)
	if body["customerId"] != nil {
		r.str(body, "", "customerId", false, ruleCustomerID)
	}
	r.boolean(body, "", "defaultUmaDepositAccount", false)
	r.str(body, "", "ownershipType", false, ruleOwnershipType)
	return r.result()
}

// ValidateAccountInfo checks an accountInfo object alone; prefix is its dot
// path ("accountInfo" in a create body, "" for paths relative to it).
// Currency is the account's currency: it chooses the business-beneficiary
// minimums of an AED_ACCOUNT (AED when it is empty or not a currency code; for
// the other types the type's own currency is used, and ValidateCreate reports
// a currency that does not match).
//
// It returns every problem found, sorted by field then message, or nil.
func ValidateAccountInfo(currency string, info map[string]any, prefix string) []wire.FieldError {
	r := &report{}
	checkInfo(currency, info, prefix, r)
	return r.result()
}

var ruleAccountType = func() *rule { return enum(AccountTypes()...) }()

// checkInfo checks accountInfo and returns its variant, or nil when the
// accountType is missing or unknown (then nothing else is checked: which
// members are allowed depends on the type).
func checkInfo(currency string, info map[string]any, path string, r *report) *variant {
	t, ok := r.str(info, path, "accountType", true, ruleAccountType)
	if !ok {
		return nil
	}
	v := lookup(t)
	r.unknown(info, path, func(k string) bool {
		return k == "accountType" || k == "beneficiary" || v.allows(k)
	}, nil)
	for _, f := range v.fields(info, path, r) {
		if f.forbid != "" {
			if has(info, f.name) {
				r.add(join(path, f.name), f.forbid, nil)
			}
			continue
		}
		r.str(info, path, f.name, f.required, f.rule)
	}
	if v.after != nil {
		v.after(info, path, r)
	}
	if v.wallet {
		if has(info, "beneficiary") {
			r.add(join(path, "beneficiary"), "not allowed for "+v.accountType+": a self-custody wallet has no beneficiary", nil)
		}
		return v
	}
	effective := v.currency
	if effective == "" {
		effective = currency
		if !ruleCurrency.match(effective) {
			effective = "AED"
		}
	}
	if b, ok := r.object(info, path, "beneficiary", true); ok {
		checkBeneficiary(v, effective, b, join(path, "beneficiary"), r)
	}
	return v
}
