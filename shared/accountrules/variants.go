package accountrules

import (
	"slices"
	"strings"
)

// fieldSpec is one member of accountInfo besides accountType and beneficiary.
type fieldSpec struct {
	name     string
	required bool
	rule     *rule
	forbid   string // when not "", the member is refused with this message if present
}

// variant is one accountInfo shape, keyed by accountType.
type variant struct {
	accountType string
	currency    string   // the currency the type requires; "" = any
	allowed     []string // members besides accountType and beneficiary
	// fields gives the members to check. For most variants it is fixed; COP and
	// SLV pick the bank-transfer or mobile-money shape, reporting shape problems.
	fields func(info map[string]any, path string, r *report) []fieldSpec
	// after runs once the members are checked (XOF region agreement).
	after      func(info map[string]any, path string, r *report)
	wallet     bool     // no beneficiary
	identifier []string // members that hold the primary identifier, in order
	// individualAddress: individuals need an address with line1, city,
	// postalCode and country (the spec's US, UK and Europe rows).
	individualAddress bool
}

func fixed(specs ...fieldSpec) func(map[string]any, string, *report) []fieldSpec {
	return func(map[string]any, string, *report) []fieldSpec { return specs }
}

func req(name string, ru *rule) fieldSpec { return fieldSpec{name: name, required: true, rule: ru} }
func opt(name string, ru *rule) fieldSpec { return fieldSpec{name: name, rule: ru} }

func names(specs ...fieldSpec) []string {
	out := make([]string, len(specs))
	for i, f := range specs {
		out[i] = f.name
	}
	return out
}

func simple(accountType, currency string, identifier []string, specs ...fieldSpec) *variant {
	return &variant{
		accountType: accountType,
		currency:    currency,
		allowed:     names(specs...),
		fields:      fixed(specs...),
		identifier:  identifier,
	}
}

// mobileMoney is the variant of the African mobile-money currencies.
func mobileMoney(currency string, phone *rule, providers ...string) *variant {
	return simple(currency+"_ACCOUNT", currency, []string{"phoneNumber"},
		req("phoneNumber", phone), req("provider", enum(providers...)))
}

// bankOrMobile is the variant of COP_ACCOUNT and SLV_ACCOUNT, which hold
// either a bank transfer (accountNumber) or mobile money (phoneNumber).
// bankNameForMobile says whether mobile money needs bankName (the provider).
func bankOrMobile(accountType, country, currency string, bankNameForMobile bool) *variant {
	ruleBankName := knownBank(country, currency)
	return &variant{
		accountType: accountType,
		currency:    currency,
		allowed:     []string{"bankName", "accountNumber", "bankAccountType", "phoneNumber"},
		identifier:  []string{"accountNumber", "phoneNumber"},
		fields: func(info map[string]any, path string, r *report) []fieldSpec {
			bank, mobile := has(info, "accountNumber"), has(info, "phoneNumber")
			switch {
			case bank && mobile:
				r.add(join(path, "accountNumber"), "must not be given with phoneNumber: accountNumber is for a bank transfer, phoneNumber for mobile money", nil)
				r.add(join(path, "phoneNumber"), "must not be given with accountNumber: accountNumber is for a bank transfer, phoneNumber for mobile money", nil)
			case !bank && !mobile:
				r.add(join(path, "accountNumber"), "required: accountNumber for a bank transfer, or phoneNumber for mobile money", nil)
				r.add(join(path, "phoneNumber"), "required: phoneNumber for mobile money, or accountNumber for a bank transfer", nil)
			case bank:
				return []fieldSpec{
					req("bankName", ruleBankName),
					req("accountNumber", ruleAccountNumber),
					req("bankAccountType", ruleBankAccountType),
				}
			default:
				return []fieldSpec{
					{name: "bankName", required: bankNameForMobile, rule: ruleBankName},
					req("phoneNumber", ruleIntlPhone),
					{name: "bankAccountType", forbid: "not allowed for mobile money (phoneNumber given)"},
				}
			}
			// Shape unknown: check what is there, require what both shapes need.
			return []fieldSpec{
				{name: "bankName", required: bankNameForMobile, rule: ruleBankName},
				opt("bankAccountType", ruleBankAccountType),
			}
		},
	}
}

// variants is the spec's accountInfo table, one entry per accountType, in the
// spec's order.
var variants = []*variant{
	{
		accountType: "USD_ACCOUNT", currency: "USD",
		allowed:    []string{"accountNumber", "routingNumber", "bankAccountType", "bankName"},
		identifier: []string{"accountNumber"},
		fields: fixed(
			req("accountNumber", ruleAccountNumber),
			req("routingNumber", ruleRoutingNumber),
			opt("bankAccountType", ruleBankAccountType),
			opt("bankName", knownBank("US", "USD")),
		),
		individualAddress: true,
	},
	simple("MXN_ACCOUNT", "MXN", []string{"clabeNumber"},
		req("clabeNumber", ruleClabe), opt("bankName", knownBank("MX", "MXN"))),
	simple("BRL_ACCOUNT", "BRL", []string{"pixKey"},
		req("pixKey", rulePixKey), req("pixKeyType", rulePixKeyType), opt("bankName", knownBank("BR", "BRL")), req("taxId", ruleBRLTaxID)),
	bankOrMobile("COP_ACCOUNT", "CO", "COP", true),
	bankOrMobile("SLV_ACCOUNT", "SV", "USD", false),
	func() *variant {
		v := simple("EUR_ACCOUNT", "EUR", []string{"iban"},
			req("iban", ruleIBAN), opt("swiftCode", ruleSwift), opt("bankName", knownBank("", "EUR")))
		v.individualAddress = true
		return v
	}(),
	simple("PHP_ACCOUNT", "PHP", []string{"accountNumber"},
		req("bankName", knownBank("PH", "PHP")), req("accountNumber", rulePHPAccount)),
	func() *variant {
		v := simple("GBP_ACCOUNT", "GBP", []string{"accountNumber"},
			req("sortCode", ruleSortCode), req("accountNumber", ruleGBPAccount))
		v.individualAddress = true
		return v
	}(),
	simple("INR_ACCOUNT", "INR", []string{"vpa"},
		req("vpa", ruleVPA)),
	simple("NGN_ACCOUNT", "NGN", []string{"accountNumber"},
		req("accountNumber", ruleNGNAccount), req("bankName", knownBank("NG", "NGN"))),
	simple("ZAR_ACCOUNT", "ZAR", []string{"accountNumber"},
		req("accountNumber", ruleZARAccount), req("bankName", knownBank("ZA", "ZAR"))),
	mobileMoney("KES", prefixedPhone("254", 9, 9), "M-PESA"),
	mobileMoney("TZS", prefixedPhone("255", 9, 9), "AIRTEL", "VODACOM"),
	mobileMoney("ZMW", prefixedPhone("260", 9, 9), "TNM", "AIRTEL", "ZAMTEL", "MTN"),
	mobileMoney("RWF", prefixedPhone("250", 9, 9), "MTN", "AIRTEL"),
	mobileMoney("MWK", prefixedPhone("265", 9, 9), "AIRTEL", "TNM"),
	mobileMoney("UGX", prefixedPhone("256", 9, 9), "MTN", "AIRTEL"),
	{
		accountType: "XOF_ACCOUNT", currency: "XOF",
		allowed:    []string{"phoneNumber", "provider", "region"},
		identifier: []string{"phoneNumber"},
		fields: fixed(
			req("phoneNumber", ruleXOFPhone),
			req("provider", enum("MTN", "ORANGE", "WAVE", "MOOV", "FREE")),
			opt("region", ruleXOFRegion),
		),
		after: xofRegionAgrees,
	},
	simple("CAD_ACCOUNT", "CAD", []string{"accountNumber"},
		req("bankCode", ruleCADBankCode), req("branchCode", ruleCADBranchCode), req("accountNumber", ruleCADAccount)),
	simple("AED_ACCOUNT", "", []string{"iban"},
		req("iban", ruleAEDIBAN), opt("swiftCode", ruleSwift)),
	{
		accountType: "SPARK_WALLET", currency: "BTC",
		allowed:    []string{"address"},
		identifier: []string{"address"},
		fields:     fixed(req("address", ruleSparkAddress)),
		wallet:     true,
	},
}

func lookup(accountType string) *variant {
	for _, v := range variants {
		if v.accountType == accountType {
			return v
		}
	}
	return nil
}

// xofRegionAgrees reports a region that is not the country of the phone
// number's prefix (+221 SN, +225 CI, +229 BJ). The spec gives no number form
// for Togo, so TG never agrees.
func xofRegionAgrees(info map[string]any, path string, r *report) {
	region, ok := info["region"].(string)
	if !ok || !slices.Contains(ruleXOFRegion.enum, region) {
		return
	}
	phone, _ := info["phoneNumber"].(string)
	want := xofRegion(phone)
	if want == "" || want == region {
		return
	}
	r.add(join(path, "region"), "must be "+want+", the country of phoneNumber "+phone[:4], constraintEnum(want))
}

// AccountTypes returns the 21 accountType values of the spec, in the spec's
// order. The slice is the caller's.
func AccountTypes() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.accountType
	}
	return out
}

// RequiredCurrency returns the currency an accountType requires: USD for
// USD_ACCOUNT and SLV_ACCOUNT, BTC for SPARK_WALLET, the type's own code for the
// others, and "" for AED_ACCOUNT (any currency) and for an unknown type.
func RequiredCurrency(accountType string) string {
	if v := lookup(accountType); v != nil {
		return v.currency
	}
	return ""
}

// PrimaryIdentifier returns the value whose last three digits drive the
// sandbox outcomes of an account: accountNumber, clabeNumber, pixKey, iban,
// vpa, phoneNumber or address, according to accountInfo.accountType (COP and
// SLV: accountNumber, else phoneNumber). For an e-mail-like value (a pixKey
// or vpa with @) it returns the part before the last @, where the sandbox
// digits go. It is meant for an accountInfo that [ValidateAccountInfo]
// accepted; otherwise it returns what it finds, or "".
func PrimaryIdentifier(info map[string]any) string {
	t, _ := info["accountType"].(string)
	v := lookup(t)
	if v == nil {
		return ""
	}
	for _, name := range v.identifier {
		s, ok := info[name].(string)
		if !ok || s == "" {
			continue
		}
		if i := strings.LastIndexByte(s, '@'); i > 0 {
			return s[:i]
		}
		return s
	}
	return ""
}
