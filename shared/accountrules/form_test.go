package accountrules

import (
	"slices"
	"testing"
)

// TestRails: the rails of every account type (facts §6), as the service
// answered them before they moved into the table.
func TestRails(t *testing.T) {
	want := map[string][]string{
		"USD_ACCOUNT": {"ACH", "WIRE", "RTP", "FEDNOW"}, "MXN_ACCOUNT": {"SPEI"}, "BRL_ACCOUNT": {"PIX"},
		"EUR_ACCOUNT": {"SEPA", "SEPA_INSTANT"}, "GBP_ACCOUNT": {"FASTER_PAYMENTS"}, "INR_ACCOUNT": {"UPI"},
		"COP_ACCOUNT": {"BANK_TRANSFER"}, "SLV_ACCOUNT": {"BANK_TRANSFER"},
		"PHP_ACCOUNT": {"BANK_TRANSFER"}, "NGN_ACCOUNT": {"BANK_TRANSFER"}, "ZAR_ACCOUNT": {"BANK_TRANSFER"},
		"CAD_ACCOUNT": {"BANK_TRANSFER"}, "AED_ACCOUNT": {"BANK_TRANSFER"},
		"KES_ACCOUNT": {"MOBILE_MONEY"}, "TZS_ACCOUNT": {"MOBILE_MONEY"}, "ZMW_ACCOUNT": {"MOBILE_MONEY"},
		"RWF_ACCOUNT": {"MOBILE_MONEY"}, "MWK_ACCOUNT": {"MOBILE_MONEY"}, "UGX_ACCOUNT": {"MOBILE_MONEY"},
		"XOF_ACCOUNT": {"MOBILE_MONEY"}, "SPARK_WALLET": {},
	}
	for _, at := range AccountTypes() {
		w, ok := want[at]
		if !ok {
			t.Errorf("%s: no rails in the test", at)
			continue
		}
		got := Rails(at, map[string]any{"accountNumber": "1"})
		if got == nil || !slices.Equal(got, w) {
			t.Errorf("Rails(%s) = %q, want %q", at, got, w)
		}
	}
	for _, at := range []string{"COP_ACCOUNT", "SLV_ACCOUNT"} {
		if got := Rails(at, map[string]any{"phoneNumber": "+57300"}); !slices.Equal(got, []string{"MOBILE_MONEY"}) {
			t.Errorf("Rails(%s mobile money) = %q", at, got)
		}
	}
	if got := Rails("NOPE", nil); got != nil {
		t.Errorf("Rails(unknown) = %q, want nil", got)
	}
	r := Rails("USD_ACCOUNT", nil)
	r[0] = "X"
	if Rails("USD_ACCOUNT", nil)[0] != "ACH" {
		t.Error("Rails returns the table's slice")
	}
}

// TestFormAgreesWithRules: the form offers, for every type and shape,
// exactly the members the validator accepts, marks required those it
// requires, offers the values of its enums and the banks of its bankName
// rule, and labels every input.
func TestFormAgreesWithRules(t *testing.T) {
	form := Form()
	types := form["types"].([]any)
	if len(types) != len(variants) {
		t.Fatalf("form has %d types, the table %d", len(types), len(variants))
	}
	for i, raw := range types {
		ft := raw.(map[string]any)
		v := variants[i]
		if ft["accountType"] != v.accountType || ft["label"] != TypeLabelKey(v.accountType) {
			t.Errorf("type %d = %v %v", i, ft["accountType"], ft["label"])
		}
		if c := ft["currency"].(string) + ft["defaultCurrency"].(string); c == "" {
			t.Errorf("%s: neither currency nor defaultCurrency", v.accountType)
		}
		var groups [][]any
		if fs, ok := ft["fields"].([]any); ok {
			groups = append(groups, fs)
		}
		for _, s := range asList(ft["shapes"]) {
			groups = append(groups, s.(map[string]any)["fields"].([]any))
		}
		if len(groups) == 0 {
			t.Errorf("%s: no fields", v.accountType)
		}
		seen := map[string]bool{}
		for g, fs := range groups {
			var shapeInfo map[string]any // a body of this shape
			if len(v.shapes) > 0 {
				shapeInfo = map[string]any{v.shapes[g].marker: ""}
			}
			for _, raw := range fs {
				f := raw.(map[string]any)
				name := f["path"].(string)[len("accountInfo."):]
				seen[name] = true
				spec := fieldNamed(v.fields(shapeInfo, "", &report{}), name)
				if spec == nil || spec.forbid != "" {
					t.Errorf("%s: the form offers %s, the validator does not take it", v.accountType, name)
					continue
				}
				if f["required"] != spec.required {
					t.Errorf("%s.%s: required %v in the form, %v in the rules", v.accountType, name, f["required"], spec.required)
				}
				if f["label"] == "" {
					t.Errorf("%s.%s: no label", v.accountType, name)
				}
				checkOffer(t, v.accountType+"."+name, f, spec.rule)
			}
		}
		for _, f := range v.all() {
			if f.forbid == "" && !seen[f.name] {
				t.Errorf("%s: the validator takes %s, the form does not offer it", v.accountType, f.name)
			}
		}
	}
}

// checkOffer: a list offers the enum's values (after its empty first
// choice, if any), a region list a part of them; a bank list is the rule's.
func checkOffer(t *testing.T, name string, f map[string]any, ru *rule) {
	t.Helper()
	if b, ok := f["banks"].(map[string]any); ok != (ru.banks != nil) || ok && (b["country"] != ru.banks.country || b["currency"] != ru.banks.currency) {
		t.Errorf("%s: banks %v, the rule's %v", name, f["banks"], ru.banks)
	}
	options, list := f["options"].([]any)
	if list != (ru.enum != nil) {
		t.Errorf("%s: a list %v, an enum %v", name, list, ru.enum)
	}
	if regions := asList(f["regions"]); regions != nil {
		for _, r := range regions {
			if !slices.Contains(ru.enum, r.(string)) {
				t.Errorf("%s: region %v is not in %v", name, r, ru.enum)
			}
		}
		return
	}
	var values []string
	for _, o := range options {
		if v := o.(map[string]any)["value"].(string); v != "" {
			values = append(values, v)
		}
	}
	if list && !slices.Equal(values, ru.enum) {
		t.Errorf("%s: offers %q, the rule takes %q", name, values, ru.enum)
	}
}

func fieldNamed(fs []field, name string) *field {
	for i := range fs {
		if fs[i].name == name {
			return &fs[i]
		}
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestFormUSD holds one type's description to what the page drew before it
// came from the table.
func TestFormUSD(t *testing.T) {
	usd := Form()["types"].([]any)[0].(map[string]any)
	fs := usd["fields"].([]any)
	want := []map[string]any{
		{"path": "accountInfo.accountNumber", "label": "recipients.form.field.accountNumber", "required": true, "inputMode": "numeric"},
		{"path": "accountInfo.routingNumber", "label": "recipients.form.field.routingNumber", "required": true, "inputMode": "numeric"},
		{"path": "accountInfo.bankAccountType", "label": "recipients.form.field.bankAccountType", "required": false, "options": []any{
			map[string]any{"value": "", "label": "recipients.form.choose.notSpecified"},
			map[string]any{"value": "CHECKING", "label": "recipients.form.kind.checking"},
			map[string]any{"value": "SAVINGS", "label": "recipients.form.kind.savings"},
		}},
		{"path": "accountInfo.bankName", "label": "recipients.form.field.bank", "required": false, "banks": map[string]any{"country": "US", "currency": "USD"}},
	}
	if len(fs) != len(want) {
		t.Fatalf("USD fields: %v", fs)
	}
	for i, w := range want {
		if got := fs[i].(map[string]any); !sameTree(got, w) {
			t.Errorf("USD field %d = %v, want %v", i, got, w)
		}
	}
	if usd["currency"] != "USD" || usd["country"] != "US" || usd["wallet"] != false || usd["documents"] != false {
		t.Errorf("USD = %v", usd)
	}
	gbp := Form()["types"].([]any)[7].(map[string]any)
	n := gbp["fields"].([]any)[1].(map[string]any)
	if !sameTree(n["labelParams"], map[string]any{"count": 8}) || n["label"] != "recipients.form.field.accountNumberDigits" {
		t.Errorf("GBP account number = %v", n)
	}
}

func sameTree(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if !sameTree(v, b[k]) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameTree(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// TestFormCountries: the form offers exactly the codes the validator takes.
func TestFormCountries(t *testing.T) {
	list := Form()["countries"].([]any)
	if len(list) != 249 {
		t.Fatalf("the form offers %d countries, want 249", len(list))
	}
	for _, c := range list {
		if !CountryCode(c.(string)) {
			t.Errorf("the form offers %v, which the validator refuses", c)
		}
	}
}

func TestTypeLabelKey(t *testing.T) {
	for in, want := range map[string]string{
		"USD_ACCOUNT": "recipients.type.usdAccount", "SPARK_WALLET": "recipients.type.sparkWallet", "X": "recipients.type.x",
	} {
		if got := TypeLabelKey(in); got != want {
			t.Errorf("TypeLabelKey(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestCurrencies: every type's currency has its facts, once.
func TestCurrencies(t *testing.T) {
	codes := map[string]bool{}
	for _, c := range Currencies() {
		if codes[c.Code] || !ruleCurrency.match(c.Code) || c.Symbol == "" || c.Decimals < 0 || c.Decimals > 18 {
			t.Errorf("currency %+v: duplicate or malformed", c)
		}
		codes[c.Code] = true
	}
	for _, v := range variants {
		if c := v.currency + v.defaultCurrency; !codes[c] {
			t.Errorf("%s: no facts for its currency %q", v.accountType, c)
		}
	}
}
