//go:build js && wasm

package main

// Tests of validateAccountInfo, accountTypes and requiredBeneficiaryFields,
// under Node like wallet_test.go. Every validation result is compared with
// accountrules.ValidateCreate run directly on the equivalent Go tree.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"syscall/js"
	"testing"

	"paywallet/shared/accountrules"
	"paywallet/shared/wire"
)

func tree(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// usdBody is a valid create body (the shape of accountrules' base("USD_ACCOUNT")).
func usdBody() map[string]any {
	return tree(
		"currency", "USD",
		"platformAccountId", "acct-001",
		"customerId", "Customer:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"accountInfo", tree(
			"accountType", "USD_ACCOUNT",
			"accountNumber", "123456789012",
			"routingNumber", "021000021",
			"bankAccountType", "CHECKING",
			"bankName", "Chase Bank",
			"beneficiary", tree(
				"beneficiaryType", "INDIVIDUAL",
				"fullName", "Ana Maria Diaz",
				"birthDate", "1990-04-01",
				"nationality", "US",
				"address", tree("line1", "1 Main Street", "city", "Springfield", "state", "IL", "postalCode", "62701", "country", "US"),
			),
		),
	)
}

// at returns the object at a dot path of a Go body.
func at(body map[string]any, path string) map[string]any {
	m := body
	if path != "" {
		for _, p := range strings.Split(path, ".") {
			m = m[p].(map[string]any)
		}
	}
	return m
}

// describe renders a FieldError canonically, constraint included.
func describe(e wire.FieldError) string {
	s := e.Field + " | " + e.Message
	if c := e.Constraint; c != nil {
		s += " | format=" + c.Format + " pattern=" + c.Pattern + " enum=" + strings.Join(c.Enum, ",")
		if c.MinLength != nil {
			s += " min=" + strconv.Itoa(*c.MinLength)
		}
		if c.MaxLength != nil {
			s += " max=" + strconv.Itoa(*c.MaxLength)
		}
	}
	return s
}

func describeAll(errs []wire.FieldError) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, describe(e))
	}
	return out
}

// decodeErrors checks the shape of a validateAccountInfo result (an array
// of plain objects with only the documented members, no empty ones) and
// converts it back to FieldErrors.
func decodeErrors(t *testing.T, v js.Value) []wire.FieldError {
	t.Helper()
	if !js.Global().Get("Array").Call("isArray", v).Bool() {
		t.Fatalf("result is %s, want an array", v.Type())
	}
	plain := js.Global().Get("Object").Get("prototype")
	out := []wire.FieldError{}
	for i := 0; i < v.Length(); i++ {
		e := v.Index(i)
		if !js.Global().Get("Object").Call("getPrototypeOf", e).Equal(plain) {
			t.Fatalf("result[%d] is not a plain object", i)
		}
		fe := wire.FieldError{Field: stringField(t, e, "field"), Message: stringField(t, e, "message")}
		for _, k := range ownKeys(t, e) {
			switch k {
			case "field", "message":
			case "constraint":
				fe.Constraint = decodeConstraint(t, e.Get(k))
			default:
				t.Fatalf("result[%d] has member %q", i, k)
			}
		}
		out = append(out, fe)
	}
	return out
}

func decodeConstraint(t *testing.T, c js.Value) *wire.FieldConstraint {
	t.Helper()
	fc := &wire.FieldConstraint{}
	for _, k := range ownKeys(t, c) {
		switch k {
		case "format":
			fc.Format = stringField(t, c, k)
		case "pattern":
			fc.Pattern = stringField(t, c, k)
		case "enum":
			enum := c.Get(k)
			if !js.Global().Get("Array").Call("isArray", enum).Bool() || enum.Length() == 0 {
				t.Fatalf("constraint.enum is not a non-empty array")
			}
			for i := 0; i < enum.Length(); i++ {
				fc.Enum = append(fc.Enum, enum.Index(i).String())
			}
		case "minLength", "maxLength":
			if c.Get(k).Type() != js.TypeNumber {
				t.Fatalf("constraint.%s is %s, want number", k, c.Get(k).Type())
			}
			n := c.Get(k).Int()
			if k == "minLength" {
				fc.MinLength = &n
			} else {
				fc.MaxLength = &n
			}
		default:
			t.Fatalf("constraint has member %q", k)
		}
	}
	if fc.Format == "" && fc.Pattern == "" && fc.Enum == nil && fc.MinLength == nil && fc.MaxLength == nil {
		t.Fatal("constraint is empty")
	}
	return fc
}

// validateJS calls paywallet.validateAccountInfo(body) and decodes the result.
func validateJS(t *testing.T, body js.Value) []wire.FieldError {
	t.Helper()
	return decodeErrors(t, mustCall(t, "validateAccountInfo", body))
}

// sameAsGo validates body through JavaScript and directly in Go and requires
// identical results; it returns them.
func sameAsGo(t *testing.T, body map[string]any) []string {
	t.Helper()
	got := describeAll(validateJS(t, js.ValueOf(body)))
	want := describeAll(accountrules.ValidateCreate(body))
	if !slices.Equal(got, want) {
		t.Fatalf("wasm result differs from accountrules.ValidateCreate\n got: %q\nwant: %q", got, want)
	}
	return got
}

func fields(errs []wire.FieldError) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestValidateAccountInfoValid(t *testing.T) {
	if got := sameAsGo(t, usdBody()); len(got) != 0 {
		t.Fatalf("valid USD body: %q, want []", got)
	}
	// Optional members may be absent.
	body := usdBody()
	delete(body, "platformAccountId")
	delete(body, "customerId")
	if got := sameAsGo(t, body); len(got) != 0 {
		t.Fatalf("minimal USD body: %q, want []", got)
	}
}

func TestValidateAccountInfoFourBadFields(t *testing.T) {
	body := usdBody()
	at(body, "accountInfo")["routingNumber"] = "12345"
	at(body, "accountInfo.beneficiary")["birthDate"] = "1990-02-30"
	at(body, "accountInfo.beneficiary.address")["country"] = "XX"
	body["ownershipType"] = "MINE"

	goErrs := accountrules.ValidateCreate(body)
	jsErrs := validateJS(t, js.ValueOf(body))
	want := []string{
		"accountInfo.beneficiary.address.country",
		"accountInfo.beneficiary.birthDate",
		"accountInfo.routingNumber",
		"ownershipType",
	}
	if got := fields(goErrs); !slices.Equal(got, want) {
		t.Fatalf("Go validator fields = %q, want %q", got, want)
	}
	if got := fields(jsErrs); !slices.Equal(got, want) {
		t.Fatalf("wasm fields = %q, want %q", got, want)
	}
	if got, want := describeAll(jsErrs), describeAll(goErrs); !slices.Equal(got, want) {
		t.Fatalf("wasm errors = %q, want %q", got, want)
	}
	for _, e := range jsErrs {
		if e.Field == "accountInfo.routingNumber" && (e.Constraint == nil || e.Constraint.Pattern == "") {
			t.Errorf("routingNumber error carries no pattern: %s", describe(e))
		}
	}
}

func TestValidateAccountInfoUnknownField(t *testing.T) {
	body := usdBody()
	body["nickname"] = "savings"
	at(body, "accountInfo.beneficiary")["favouriteColour"] = "green"
	got := sameAsGo(t, body)
	want := []string{
		"accountInfo.beneficiary.favouriteColour | unknown field",
		"nickname | unknown field",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestValidateAccountInfoUndefinedMembers(t *testing.T) {
	// undefined members are absent: optional ones pass, unknown names are
	// not reported.
	body := js.ValueOf(usdBody())
	body.Set("nickname", js.Undefined())
	body.Set("ownershipType", js.Undefined())
	body.Get("accountInfo").Set("bankName", js.Undefined())
	body.Get("accountInfo").Get("beneficiary").Set("email", js.Undefined())
	if got := validateJS(t, body); len(got) != 0 {
		t.Fatalf("got %q, want []", describeAll(got))
	}
	// A required member set to undefined is missing, as if deleted.
	body.Get("accountInfo").Set("routingNumber", js.Undefined())
	goBody := usdBody()
	delete(at(goBody, "accountInfo"), "routingNumber")
	got, want := describeAll(validateJS(t, body)), describeAll(accountrules.ValidateCreate(goBody))
	if !slices.Equal(got, want) || len(want) != 1 || want[0] != "accountInfo.routingNumber | required" {
		t.Fatalf("got %q, want %q (accountInfo.routingNumber required)", got, want)
	}
}

func TestValidateAccountInfoMatchesGo(t *testing.T) {
	// Wrong JSON types, nulls, numbers, arrays and booleans reach the
	// validator exactly as encoding/json would decode them.
	cases := []func(b map[string]any){
		func(b map[string]any) { b["currency"] = 840.0 },
		func(b map[string]any) { b["currency"] = nil },
		func(b map[string]any) { b["currency"] = "EUR" },
		func(b map[string]any) { b["accountInfo"] = []any{"USD_ACCOUNT", 1.5, true, nil} },
		func(b map[string]any) { b["accountInfo"] = nil },
		func(b map[string]any) { b["customerId"] = nil },
		func(b map[string]any) { b["customerId"] = "Customer:nope" },
		func(b map[string]any) { b["defaultUmaDepositAccount"] = true },
		func(b map[string]any) { b["defaultUmaDepositAccount"] = "yes" },
		func(b map[string]any) { b["platformAccountId"] = "" },
		func(b map[string]any) { at(b, "accountInfo")["accountType"] = "NOPE_ACCOUNT" },
		func(b map[string]any) { at(b, "accountInfo")["accountNumber"] = 123456789012.0 },
		func(b map[string]any) { at(b, "accountInfo")["bankAccountType"] = "CURRENT" },
		func(b map[string]any) { at(b, "accountInfo")["bankName"] = strings.Repeat("B", 141) },
		func(b map[string]any) { at(b, "accountInfo")["beneficiary"] = tree("beneficiaryType", "BUSINESS") },
		func(b map[string]any) { at(b, "accountInfo.beneficiary")["address"] = map[string]any{} },
		func(b map[string]any) { at(b, "accountInfo.beneficiary")["email"] = "not an email" },
		func(b map[string]any) { at(b, "accountInfo.beneficiary")["fullName"] = "Ana\u0000Diaz" },
		func(b map[string]any) { at(b, "accountInfo.beneficiary")["fullName"] = " Ana Diaz ñ 漢字 🙂" },
	}
	for i, change := range cases {
		body := usdBody()
		change(body)
		got := sameAsGo(t, body)
		if i != 5 && i != 7 && i != 18 && len(got) == 0 {
			t.Errorf("case %d: no errors, want some", i)
		}
	}
}

func TestValidateAccountInfoJSONEdgeCases(t *testing.T) {
	// Non-finite numbers become null, as JSON.stringify writes them;
	// undefined array elements and holes are null too.
	body := js.ValueOf(usdBody())
	body.Set("currency", math.NaN())
	goBody := usdBody()
	goBody["currency"] = nil
	if got, want := describeAll(validateJS(t, body)), describeAll(accountrules.ValidateCreate(goBody)); !slices.Equal(got, want) {
		t.Fatalf("NaN currency: got %q, want %q", got, want)
	}
	body = js.ValueOf(usdBody())
	arr := js.Global().Get("Array").New(3)
	arr.SetIndex(0, js.Undefined())
	body.Set("accountInfo", arr)
	goBody = usdBody()
	goBody["accountInfo"] = []any{nil, nil, nil}
	if got, want := describeAll(validateJS(t, body)), describeAll(accountrules.ValidateCreate(goBody)); !slices.Equal(got, want) {
		t.Fatalf("sparse array: got %q, want %q", got, want)
	}
	// An object without a prototype is still an object.
	bare := js.Global().Get("Object").Call("create", js.Null())
	for k, v := range usdBody() {
		bare.Set(k, js.ValueOf(v))
	}
	if got := validateJS(t, bare); len(got) != 0 {
		t.Fatalf("prototype-less body: %q, want []", describeAll(got))
	}
}

func TestValidateAccountInfoRefusals(t *testing.T) {
	withAt := func(path string, v js.Value) js.Value {
		body := js.ValueOf(usdBody())
		parts := strings.Split(path, ".")
		o := body
		for _, p := range parts[:len(parts)-1] {
			o = o.Get(p)
		}
		o.Set(parts[len(parts)-1], v)
		return body
	}
	fn := js.Global().Get("Object")
	sym := js.Global().Get("Symbol").Invoke("x")
	big := js.Global().Get("BigInt").Invoke(5)

	// 40 nested arrays.
	deep := js.ValueOf([]any{})
	for i := 0; i < 40; i++ {
		deep = js.ValueOf([]any{deep})
	}
	// A cycle is caught by the depth limit.
	loop := js.Global().Get("Object").New()
	loop.Set("self", loop)
	cyclic := withAt("loop", loop)

	tests := []struct {
		args []any
		want string
	}{
		{[]any{withAt("accountInfo.beneficiary.fullName", fn.Get("keys"))}, "body.accountInfo.beneficiary.fullName is a function, which JSON cannot carry"},
		{[]any{withAt("accountInfo.bankName", sym)}, "body.accountInfo.bankName is a symbol, which JSON cannot carry"},
		{[]any{withAt("currency", big)}, "body.currency is a bigint, which JSON cannot carry"},
		{[]any{withAt("extra", js.ValueOf([]any{1, fn}))}, "body.extra[1] is a function, which JSON cannot carry"},
		{[]any{withAt("accountInfo.deep", deep)}, "body.accountInfo.deep" + strings.Repeat("[0]", 30) + " is nested deeper than 32 levels"},
		{[]any{cyclic}, "body.loop" + strings.Repeat(".self", 31) + " is nested deeper than 32 levels"},
		{[]any{withAt("extra", js.Global().Get("Array").New(maxBodyValues+1))}, "body has more than 10000 values"},
		{[]any{withAt("extra", js.ValueOf(strings.Repeat("x", maxBodyBytes+1)))}, "body holds more than 1048576 bytes of text"},

		{nil, "expected 1 argument (body), got 0"},
		{[]any{js.ValueOf(usdBody()), 1}, "expected 1 argument (body), got 2"},
		{[]any{js.Null()}, "body must be an object, got null"},
		{[]any{js.Undefined()}, "body must be an object, got undefined"},
		{[]any{`{"currency":"USD"}`}, "body must be an object, got string"},
		{[]any{js.ValueOf([]any{})}, "body must be an object, got array"},
		{[]any{fn}, "body must be an object, got function"},
		{[]any{big}, "body must be an object, got bigint"},
	}
	for _, tt := range tests {
		wantReject(t, "validateAccountInfo: "+tt.want, "validateAccountInfo", tt.args...)
	}
	// Exactly 32 levels are fine: the body and 31 nested arrays.
	ok := js.ValueOf([]any{})
	for i := 0; i < 30; i++ {
		ok = js.ValueOf([]any{ok})
	}
	got := validateJS(t, withAt("extra", ok))
	if d := describeAll(got); !slices.Equal(d, []string{"extra | unknown field"}) {
		t.Fatalf("31 nested arrays: %q", d)
	}
}

func TestAccountTypes(t *testing.T) {
	v := mustCall(t, "accountTypes")
	want := accountrules.AccountTypes()
	if len(want) != 21 {
		t.Fatalf("accountrules has %d types, want 21", len(want))
	}
	if !js.Global().Get("Array").Call("isArray", v).Bool() || v.Length() != len(want) {
		t.Fatalf("accountTypes is not an array of %d", len(want))
	}
	for i, w := range want {
		if e := v.Index(i); e.Type() != js.TypeString || e.String() != w {
			t.Errorf("accountTypes[%d] = %v, want %q", i, e, w)
		}
	}
	wantReject(t, "accountTypes: expected 0 arguments, got 1", "accountTypes", "USD")
}

// TestAccountForm: the page gets accountrules.Form as a plain object, member
// for member (numbers as numbers, false as false, lists as arrays).
func TestAccountForm(t *testing.T) {
	v := mustCall(t, "accountForm")
	var same func(path string, js js.Value, want any)
	same = func(path string, got js.Value, want any) {
		switch w := want.(type) {
		case map[string]any:
			if got.Type() != js.TypeObject {
				t.Errorf("%s is %v, want an object", path, got.Type())
				return
			}
			if n := js.Global().Get("Object").Call("keys", got).Length(); n != len(w) {
				t.Errorf("%s has %d members, want %d", path, n, len(w))
			}
			for k, e := range w {
				same(path+"."+k, got.Get(k), e)
			}
		case []any:
			if !js.Global().Get("Array").Call("isArray", got).Bool() || got.Length() != len(w) {
				t.Errorf("%s is not an array of %d", path, len(w))
				return
			}
			for i, e := range w {
				same(path+"["+strconv.Itoa(i)+"]", got.Index(i), e)
			}
		case string:
			if got.Type() != js.TypeString || got.String() != w {
				t.Errorf("%s = %v, want %q", path, got, w)
			}
		case bool:
			if got.Type() != js.TypeBoolean || got.Bool() != w {
				t.Errorf("%s = %v, want %v", path, got, w)
			}
		case int:
			if got.Type() != js.TypeNumber || got.Int() != w {
				t.Errorf("%s = %v, want %d", path, got, w)
			}
		default:
			t.Errorf("%s: unexpected %T in the form", path, want)
		}
	}
	form := accountrules.Form()
	if n := len(form["types"].([]any)); n != 21 {
		t.Fatalf("the form has %d types", n)
	}
	same("form", v, form)
	wantReject(t, "accountForm: expected 0 arguments, got 1", "accountForm", "USD")
}

func TestRequiredBeneficiaryFields(t *testing.T) {
	for _, tc := range [][3]string{
		{"USD_ACCOUNT", "USD", "INDIVIDUAL"},
		{"USD_ACCOUNT", "USD", "BUSINESS"},
		{"EUR_ACCOUNT", "EUR", "BUSINESS"},
		{"NGN_ACCOUNT", "NGN", "BUSINESS"},
		{"AED_ACCOUNT", "", "BUSINESS"},
		{"AED_ACCOUNT", "USD", "BUSINESS"},
		{"MXN_ACCOUNT", "MXN", "INDIVIDUAL"},
		{"SPARK_WALLET", "BTC", "INDIVIDUAL"},
		{"NOPE", "USD", "INDIVIDUAL"},
		{"USD_ACCOUNT", "USD", "ROBOT"},
	} {
		v := mustCall(t, "requiredBeneficiaryFields", tc[0], tc[1], tc[2])
		if !js.Global().Get("Array").Call("isArray", v).Bool() {
			t.Fatalf("%q: result is not an array", tc)
		}
		var got []string
		for i := 0; i < v.Length(); i++ {
			got = append(got, v.Index(i).String())
		}
		want := accountrules.RequiredBeneficiaryFields(tc[0], tc[1], tc[2])
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", tc, got, want)
		}
		if tc[0] == "USD_ACCOUNT" && tc[2] == "INDIVIDUAL" && !slices.Contains(got, "address.postalCode") {
			t.Errorf("%q: %q lacks address.postalCode", tc, got)
		}
	}
	for _, tt := range []struct {
		args []any
		want string
	}{
		{[]any{"USD_ACCOUNT", "USD"}, "expected 3 arguments (accountType, currency, beneficiaryType), got 2"},
		{[]any{1, "USD", "INDIVIDUAL"}, "accountType must be a string, got number"},
		{[]any{"USD_ACCOUNT", js.Null(), "INDIVIDUAL"}, "currency must be a string, got null"},
		{[]any{"USD_ACCOUNT", "USD", js.Undefined()}, "beneficiaryType must be a string, got undefined"},
		{[]any{strings.Repeat("A", 65), "USD", "INDIVIDUAL"}, "accountType is longer than 64 bytes"},
	} {
		wantReject(t, "requiredBeneficiaryFields: "+tt.want, "requiredBeneficiaryFields", tt.args...)
	}
}
