package accountrules

import (
	"slices"
	"strings"
)

// field is one member of accountInfo besides accountType and beneficiary (or,
// in the form's other parts, of the beneficiary): the rule the validator
// applies to it and the input the page's form draws for it. The form draws
// a variant's fields in the order of its table entry.
type field struct {
	name       string
	required   bool
	rule       *rule
	forbid     string // when not "", the member is refused with this message if present (not drawn)
	identifier bool   // it holds the primary identifier ([PrimaryIdentifier])

	label  string // message key of the input's label in the page's catalogue
	params []any  // the label's parameters: name, value, … (a value is a string or an int)
	list   bool   // a <select> of the rule's enum (or of regions)
	choose string // message key of the list's first, empty choice ("" for none)
	// regions: a list of these country codes, named in the page's language.
	regions   []string
	countries bool // a list of every country
	hints     hints
}

// hints are the input's attributes that help a person type the value.
type hints struct {
	inputMode, autocomplete, autocapitalize, placeholder, typ string
	maxLength                                                 int
	noSpellcheck                                              bool
}

// shape is one of the two forms of COP_ACCOUNT and SLV_ACCOUNT: a bank
// transfer (accountNumber) or mobile money (phoneNumber).
type shape struct {
	key     string // BANK or MOBILE, the form's value
	label   string // message key
	marker  string // the member whose presence means this shape
	what    string // the shape in the validator's messages: "a bank transfer"
	rails   []string
	members []field
}

// variant is one accountInfo shape, keyed by accountType: one entry of the
// table below holds everything about an account type, for the validator,
// the service (currency, rails, identifier) and the page's form (labels,
// inputs, the country shown for it).
type variant struct {
	accountType string
	currency    string // the currency the type requires; "" = any
	// defaultCurrency is the form's suggestion when currency is "" (AED).
	defaultCurrency string
	// country is the country the type pays into, when the type says: the
	// page names it for a recipient whose holder gave no address.
	country string
	rails   []string // the payment rails it is paid on (shapes: each its own)
	members []field  // the fields, in the form's order; for shapes, empty
	shapes  []shape  // COP and SLV: the bank transfer, then mobile money
	// after runs once the members are checked (XOF region agreement).
	after  func(info map[string]any, path string, r *report)
	wallet bool // no beneficiary
	// individualAddress: individuals need an address with line1, city,
	// postalCode and country (the spec's US, UK and Europe rows).
	individualAddress bool
	// documents: individuals may give an identity document (Colombia).
	documents bool
}

// hint is an option of a field in the table.
type hint func(*field)

func req(name string, ru *rule, label string, hs ...hint) field {
	return member(field{name: name, required: true, rule: ru, label: label}, hs)
}

func opt(name string, ru *rule, label string, hs ...hint) field {
	return member(field{name: name, rule: ru, label: label}, hs)
}

func member(f field, hs []hint) field {
	for _, h := range hs {
		h(&f)
	}
	return f
}

// The table's hints.
var (
	id      hint = func(f *field) { f.identifier = true }
	numeric hint = func(f *field) { f.hints.inputMode = "numeric" }
	// code: typed as written, in capitals (IBAN, SWIFT).
	code   hint = func(f *field) { f.hints.autocapitalize = "characters"; f.hints.noSpellcheck = true }
	listed hint = func(f *field) { f.list = true }
)

func choose(key string) hint { return func(f *field) { f.list, f.choose = true, key } }

// params gives the label's parameters: name, value, name, value…
func params(kv ...any) hint { return func(f *field) { f.params = kv } }

func inputs(h hints) hint {
	return func(f *field) {
		f.hints.inputMode, f.hints.autocomplete, f.hints.autocapitalize = h.inputMode, h.autocomplete, h.autocapitalize
		f.hints.placeholder, f.hints.typ, f.hints.maxLength = h.placeholder, h.typ, h.maxLength
		f.hints.noSpellcheck = h.noSpellcheck
	}
}

// Fields several variants have.

const (
	labelAccountNumber = "recipients.form.field.accountNumber"
	labelBank          = "recipients.form.field.bank"
	labelProvider      = "recipients.form.field.provider"
)

// accountNumber is an account number of min to max digits, so labelled.
func accountNumber(ru *rule, min, max int) field {
	if min == max {
		return req("accountNumber", ru, "recipients.form.field.accountNumberDigits", numeric, id, params("count", min))
	}
	return req("accountNumber", ru, "recipients.form.field.accountNumberDigitsBetween", numeric, id, params("min", min, "max", max))
}

// bankName is a bank (or a provider: label) from the discovery list of
// country and currency.
func bankName(required bool, country, currency, label string) field {
	return field{name: "bankName", required: required, rule: knownBank(country, currency), label: label}
}

func phone(prefix string, ru *rule) field {
	return req("phoneNumber", ru, "recipients.form.field.phone", id, params("prefix", prefix),
		inputs(hints{inputMode: "tel", autocomplete: "tel", placeholder: prefix}))
}

func provider(values ...string) field {
	return req("provider", enum(values...), labelProvider, choose("recipients.form.choose.provider"))
}

func iban(ru *rule) field { return req("iban", ru, "recipients.form.field.iban", id, code) }

var swift = opt("swiftCode", ruleSwift, "recipients.form.field.swift", code)

// mobileMoney is the variant of the African mobile-money currencies:
// +<code> and 9 digits, and a provider.
func mobileMoney(currency, code string, providers ...string) *variant {
	return &variant{
		accountType: currency + "_ACCOUNT", currency: currency, rails: []string{"MOBILE_MONEY"},
		members: []field{phone("+"+code, prefixedPhone(code, 9, 9)), provider(providers...)},
	}
}

// bankOrMobile is the variant of COP_ACCOUNT and SLV_ACCOUNT: a bank
// transfer (bankName, accountNumber, bankAccountType) or mobile money, whose
// fields are given.
func bankOrMobile(accountType, country, currency string, mobile ...field) *variant {
	return &variant{
		accountType: accountType, currency: currency,
		shapes: []shape{
			{key: "BANK", label: "recipients.form.shape.bank", marker: "accountNumber", what: "a bank transfer", rails: []string{"BANK_TRANSFER"},
				members: []field{
					bankName(true, country, currency, labelBank),
					req("accountNumber", ruleAccountNumber, labelAccountNumber, numeric, id),
					req("bankAccountType", ruleBankAccountType, "recipients.form.field.bankAccountType", choose("recipients.form.choose.one")),
				}},
			{key: "MOBILE", label: "recipients.form.shape.mobile", marker: "phoneNumber", what: "mobile money", rails: []string{"MOBILE_MONEY"},
				members: mobile},
		},
	}
}

// variants is the spec's accountInfo table, one entry per accountType, in the
// spec's order (the order of the form's list of types).
var variants = []*variant{
	{
		accountType: "USD_ACCOUNT", currency: "USD", country: "US", rails: []string{"ACH", "WIRE", "RTP", "FEDNOW"},
		members: []field{
			req("accountNumber", ruleAccountNumber, labelAccountNumber, numeric, id),
			req("routingNumber", ruleRoutingNumber, "recipients.form.field.routingNumber", numeric),
			opt("bankAccountType", ruleBankAccountType, "recipients.form.field.bankAccountType", choose("recipients.form.choose.notSpecified")),
			bankName(false, "US", "USD", labelBank),
		},
		individualAddress: true,
	},
	{
		accountType: "MXN_ACCOUNT", currency: "MXN", rails: []string{"SPEI"},
		members: []field{
			req("clabeNumber", ruleClabe, "recipients.form.field.clabe", numeric, id),
			bankName(false, "MX", "MXN", labelBank),
		},
	},
	{
		accountType: "BRL_ACCOUNT", currency: "BRL", rails: []string{"PIX"},
		members: []field{
			req("pixKey", rulePixKey, "recipients.form.field.pixKey", id, inputs(hints{noSpellcheck: true})),
			req("pixKeyType", rulePixKeyType, "recipients.form.field.pixKeyType", choose("recipients.form.choose.keyType")),
			req("taxId", ruleBRLTaxID, "recipients.form.field.cpfOrCnpj", numeric),
			bankName(false, "BR", "BRL", labelBank),
		},
	},
	func() *variant {
		v := bankOrMobile("COP_ACCOUNT", "CO", "COP", bankName(true, "CO", "COP", labelProvider), phone("+57", ruleIntlPhone))
		v.documents = true
		return v
	}(),
	bankOrMobile("SLV_ACCOUNT", "SV", "USD", phone("+503", ruleIntlPhone), bankName(false, "SV", "USD", labelProvider)),
	{
		accountType: "EUR_ACCOUNT", currency: "EUR", country: "DE", rails: []string{"SEPA", "SEPA_INSTANT"},
		members:           []field{iban(ruleIBAN), swift, bankName(false, "", "EUR", labelBank)},
		individualAddress: true,
	},
	{
		accountType: "PHP_ACCOUNT", currency: "PHP", rails: []string{"BANK_TRANSFER"},
		members: []field{bankName(true, "PH", "PHP", labelBank), accountNumber(rulePHPAccount, 8, 16)},
	},
	{
		accountType: "GBP_ACCOUNT", currency: "GBP", country: "GB", rails: []string{"FASTER_PAYMENTS"},
		members: []field{
			req("sortCode", ruleSortCode, "recipients.form.field.sortCode", numeric),
			accountNumber(ruleGBPAccount, 8, 8),
		},
		individualAddress: true,
	},
	{
		accountType: "INR_ACCOUNT", currency: "INR", rails: []string{"UPI"},
		members: []field{req("vpa", ruleVPA, "recipients.form.field.upiId", id,
			inputs(hints{inputMode: "email", autocapitalize: "off", noSpellcheck: true}))},
	},
	{
		accountType: "NGN_ACCOUNT", currency: "NGN", rails: []string{"BANK_TRANSFER"},
		members: []field{bankName(true, "NG", "NGN", labelBank), accountNumber(ruleNGNAccount, 10, 10)},
	},
	{
		accountType: "ZAR_ACCOUNT", currency: "ZAR", rails: []string{"BANK_TRANSFER"},
		members: []field{bankName(true, "ZA", "ZAR", labelBank), accountNumber(ruleZARAccount, 9, 13)},
	},
	mobileMoney("KES", "254", "M-PESA"),
	mobileMoney("TZS", "255", "AIRTEL", "VODACOM"),
	mobileMoney("ZMW", "260", "TNM", "AIRTEL", "ZAMTEL", "MTN"),
	mobileMoney("RWF", "250", "MTN", "AIRTEL"),
	mobileMoney("MWK", "265", "AIRTEL", "TNM"),
	mobileMoney("UGX", "256", "MTN", "AIRTEL"),
	{
		accountType: "XOF_ACCOUNT", currency: "XOF", rails: []string{"MOBILE_MONEY"},
		members: []field{
			member(phone("+221", ruleXOFPhone), []hint{func(f *field) {
				f.label, f.params = "recipients.form.field.phoneXof", []any{"first", "+221", "second", "+225", "last", "+229"}
			}}),
			provider("MTN", "ORANGE", "WAVE", "MOOV", "FREE"),
			// TG is in the enum, but no Togo number is accepted: not offered.
			opt("region", ruleXOFRegion, "recipients.form.field.country", choose("recipients.form.choose.fromPhone"),
				func(f *field) { f.regions = []string{"BJ", "CI", "SN"} }),
		},
		after: xofRegionAgrees,
	},
	{
		accountType: "CAD_ACCOUNT", currency: "CAD", country: "CA", rails: []string{"BANK_TRANSFER"},
		members: []field{
			req("bankCode", ruleCADBankCode, "recipients.form.field.institutionNumber", numeric),
			req("branchCode", ruleCADBranchCode, "recipients.form.field.transitNumber", numeric),
			accountNumber(ruleCADAccount, 7, 12),
		},
	},
	{
		accountType: "AED_ACCOUNT", defaultCurrency: "AED", country: "AE", rails: []string{"BANK_TRANSFER"},
		members: []field{iban(ruleAEDIBAN), swift},
	},
	{
		accountType: "SPARK_WALLET", currency: "BTC", rails: []string{}, wallet: true,
		members: []field{req("address", ruleSparkAddress, "recipients.form.field.sparkAddress", id,
			inputs(hints{autocapitalize: "off", noSpellcheck: true}))},
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

// all is every field of the variant, of every shape.
func (v *variant) all() []field {
	out := v.members
	for _, s := range v.shapes {
		out = append(slices.Clip(out), s.members...)
	}
	return out
}

// allows reports whether name is a member of the variant's accountInfo
// (besides accountType and beneficiary).
func (v *variant) allows(name string) bool {
	return slices.ContainsFunc(v.all(), func(f field) bool { return f.name == name })
}

// fields gives the members to check. For most variants it is fixed; COP and
// SLV pick the bank-transfer or mobile-money shape, reporting shape problems.
func (v *variant) fields(info map[string]any, path string, r *report) []field {
	if len(v.shapes) == 0 {
		return v.members
	}
	a, b := &v.shapes[0], &v.shapes[1]
	hasA, hasB := has(info, a.marker), has(info, b.marker)
	switch {
	case hasA && hasB:
		why := a.marker + " is for " + a.what + ", " + b.marker + " for " + b.what
		r.add(join(path, a.marker), "must not be given with "+b.marker+": "+why, nil)
		r.add(join(path, b.marker), "must not be given with "+a.marker+": "+why, nil)
	case !hasA && !hasB:
		r.add(join(path, a.marker), "required: "+a.marker+" for "+a.what+", or "+b.marker+" for "+b.what, nil)
		r.add(join(path, b.marker), "required: "+b.marker+" for "+b.what+", or "+a.marker+" for "+a.what, nil)
	case hasA:
		return a.against(b)
	default:
		return b.against(a)
	}
	// Shape unknown: check what is there, require what both shapes need.
	var out []field
	for _, f := range v.all() {
		if f.name == a.marker || f.name == b.marker || slices.ContainsFunc(out, func(g field) bool { return g.name == f.name }) {
			continue
		}
		for _, s := range v.shapes {
			i := slices.IndexFunc(s.members, func(g field) bool { return g.name == f.name })
			f.required = f.required && i >= 0 && s.members[i].required
		}
		out = append(out, f)
	}
	return out
}

// against is the shape's fields, and the other shape's members refused.
func (s *shape) against(other *shape) []field {
	out := slices.Clip(s.members)
	for _, f := range other.members {
		if f.name != other.marker && !slices.ContainsFunc(s.members, func(g field) bool { return g.name == f.name }) {
			out = append(out, field{name: f.name, forbid: "not allowed for " + s.what + " (" + s.marker + " given)"})
		}
	}
	return out
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

// Rails returns the payment rails an account of accountType with accountInfo
// info is paid on: for COP and SLV, mobile money (a phoneNumber in info)
// MOBILE_MONEY, else BANK_TRANSFER; an empty list for SPARK_WALLET and nil
// for an unknown type. The slice is the caller's.
func Rails(accountType string, info map[string]any) []string {
	v := lookup(accountType)
	switch {
	case v == nil:
		return nil
	case len(v.shapes) > 0 && has(info, v.shapes[1].marker):
		return slices.Clone(v.shapes[1].rails)
	case len(v.shapes) > 0:
		return slices.Clone(v.shapes[0].rails)
	}
	return slices.Clone(v.rails)
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
	for _, f := range v.all() {
		if !f.identifier {
			continue
		}
		s, ok := info[f.name].(string)
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
