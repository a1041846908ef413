package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// localValidator adds validateAccountInfo and requiredBeneficiaryFields to
// the wallet stub: it reports a bad routing number, and records every body it
// was given; only USD, EUR and GBP individuals (and every business) need an
// address, as in the spec's beneficiary tables.
const localValidator = `(() => {
  const base = globalThis.paywallet;
  globalThis.validated = [];
  globalThis.paywallet = Object.freeze({ ...base,
    validateAccountInfo: async (body) => {
      globalThis.validated.push(JSON.stringify(body));
      const info = body.accountInfo || {};
      if (info.accountType !== "USD_ACCOUNT" || info.routingNumber === "021000021") return [];
      return [{ field: "accountInfo.routingNumber", message: "must be 9 digits", constraint: { pattern: "^[0-9]{9}$" } }];
    },
    requiredBeneficiaryFields: async (type, currency, holder) => {
      const address = ["address", "address.country", "address.line1", "address.postalCode"];
      if (holder === "BUSINESS") return ["beneficiaryType", "businessInfo", "businessInfo.legalName"].concat(address);
      if (["USD_ACCOUNT", "EUR_ACCOUNT", "GBP_ACCOUNT"].includes(type)) return ["beneficiaryType", "fullName", "address.city"].concat(address);
      return ["beneficiaryType", "fullName"];
    },
  });
})();`

const serviceErrors = `{"status":400,"code":"INVALID_INPUT","message":"invalid input","details":{"errors":[` +
	`{"field":"accountInfo.beneficiary.address.postalCode","message":"required"},` +
	`{"field":"accountInfo.routingNumber","message":"must be 9 digits","constraint":{"pattern":"^[0-9]{9}$"}},` +
	`{"field":"currency","message":"must be USD for USD_ACCOUNT"}]}}`

func errorShown(field string) string {
	return `(() => { const el = document.querySelector('[data-error-for="` + field + `"]');
  return !!el && !el.hidden && el.offsetParent !== null && el.textContent.trim() !== ""; })()`
}

// setField sets the value of the input with this data-field as typing would.
func setField(t *testing.T, ctx context.Context, field, value string) {
	t.Helper()
	b, _ := json.Marshal(value)
	if !eval[bool](t, ctx, `(() => { const el = document.querySelector('[data-field="`+field+`"]');
  if (!el) return false; el.value = `+string(b)+`; el.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`) {
		t.Fatalf("no input for %s", field)
	}
}

func chooseType(t *testing.T, ctx context.Context, typ string) {
	t.Helper()
	choose(t, ctx, "#account-type", typ)
}

// choose picks value in the <select> matching the CSS selector, as a
// person would (a change event).
func choose(t *testing.T, ctx context.Context, selector, value string) {
	t.Helper()
	sel, _ := json.Marshal(selector)
	v, _ := json.Marshal(value)
	eval[chromedp.Void](t, ctx, `(() => { const s = document.querySelector(`+string(sel)+`); s.value = `+string(v)+`;
  s.dispatchEvent(new Event("change", {bubbles: true})); })()`)
}

func fillUSD(t *testing.T, ctx context.Context, routing, postal string) {
	t.Helper()
	chooseType(t, ctx, "USD_ACCOUNT")
	for field, v := range map[string]string{
		"accountInfo.accountNumber":                  "12345678",
		"accountInfo.routingNumber":                  routing,
		"accountInfo.beneficiary.fullName":           "Ada Lovelace",
		"accountInfo.beneficiary.address.line1":      "1 Main Street",
		"accountInfo.beneficiary.address.city":       "New York",
		"accountInfo.beneficiary.address.postalCode": postal,
		"accountInfo.beneficiary.address.country":    "US",
	} {
		setField(t, ctx, field, v)
	}
}

// TestAccountsServiceErrors: without a local validator the form posts, and
// the service's details.errors land next to their inputs (the rest on the
// form's error line); the fixed form adds the account to the list.
func TestAccountsServiceErrors(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	api.set(func(f *fakeAPI) {
		f.external = []string{`{"id":"ExternalAccount:0199a000-0000-7000-8000-0000000000e1","customerId":"Customer:0199a000-0000-7000-8000-0000000000cc",` +
			`"status":"UNDER_REVIEW","currency":"GBP","accountInfo":{"accountType":"GBP_ACCOUNT","sortCode":"123456","accountNumber":"87654321"}}`}
		f.create = []reply{{status: 400, body: serviceErrors}}
	})
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/recipients", "recipients")
	waitFor(t, ctx, shown("accounts"))
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 1`)
	if got := eval[string](t, ctx, `document.querySelector("#accounts-list li .badge").textContent`); got != "Under review" {
		t.Errorf("badge %q, want Under review", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("#accounts-list li").textContent`); !strings.Contains(got, "4321") || strings.Contains(got, "87654321") {
		t.Errorf("list item %q: want the account number masked to its last 4", got)
	}

	goTo(t, ctx, "/recipients/new", "recipient-new")
	fillUSD(t, ctx, "12345", "")
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, errorShown("accountInfo.routingNumber"))
	waitFor(t, ctx, errorShown("accountInfo.beneficiary.address.postalCode"))
	waitFor(t, ctx, shown("account-form-error"))
	if got := eval[string](t, ctx, `document.getElementById("account-form-error").textContent`); !strings.Contains(got, "currency") {
		t.Errorf("form error %q does not carry the currency error", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-field="accountInfo.routingNumber"]').getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("routing number aria-invalid %q", got)
	}
	posts := api.requests("/api/customers/external-accounts")
	var sent []apiCall
	for _, c := range posts {
		if c.method == "POST" {
			sent = append(sent, c)
		}
	}
	if len(sent) != 1 {
		t.Fatalf("%d POSTs, want 1", len(sent))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(sent[0].body), &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["customerId"]; ok || body["currency"] != "USD" {
		t.Errorf("body %s: want currency USD and no customerId (the BFF sets it)", sent[0].body)
	}
	addr := body["accountInfo"].(map[string]any)["beneficiary"].(map[string]any)["address"].(map[string]any)
	if _, ok := addr["postalCode"]; ok || addr["city"] != "New York" {
		t.Errorf("address sent %v", addr)
	}

	setField(t, ctx, "accountInfo.routingNumber", "021000021")
	setField(t, ctx, "accountInfo.beneficiary.address.postalCode", "10001")
	// Corrected fields lose their errors as they are typed (checked again
	// after a short pause); wait for that, so that the click does not race
	// the form's layout.
	waitFor(t, ctx, `!(`+errorShown("accountInfo.routingNumber")+`) && !(`+errorShown("accountInfo.beneficiary.address.postalCode")+`)`)
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 2`)
	if got := eval[string](t, ctx, `document.querySelector("#accounts-list li:last-child .badge").textContent`); got != "Pending" {
		t.Errorf("new account badge %q, want Pending", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#add-account [data-error-for]:not([hidden])").length`); n != 0 {
		t.Errorf("%d field errors left after success", n)
	}
	if v := eval[string](t, ctx, `document.querySelector('[data-field="accountInfo.routingNumber"]').value`); v != "" {
		t.Errorf("form not reset: routing number %q", v)
	}
}

// posts returns the bodies POSTed to the create endpoint.
func posts(api *fakeAPI) []string {
	var out []string
	for _, c := range api.requests("/api/customers/external-accounts") {
		if c.method == "POST" {
			out = append(out, c.body)
		}
	}
	return out
}

// visible is a JavaScript condition: the input of this data-field is laid
// out (present and not in a hidden box).
func visible(field string) string {
	return `(() => { const el = document.querySelector('[data-field="` + field + `"]'); return !!el && el.offsetParent !== null; })()`
}

// allTypes is the spec's accountInfo table, in its order.
var allTypes = []string{"USD_ACCOUNT", "MXN_ACCOUNT", "BRL_ACCOUNT", "COP_ACCOUNT", "SLV_ACCOUNT", "EUR_ACCOUNT",
	"PHP_ACCOUNT", "GBP_ACCOUNT", "INR_ACCOUNT", "NGN_ACCOUNT", "ZAR_ACCOUNT", "KES_ACCOUNT", "TZS_ACCOUNT",
	"ZMW_ACCOUNT", "RWF_ACCOUNT", "MWK_ACCOUNT", "UGX_ACCOUNT", "XOF_ACCOUNT", "CAD_ACCOUNT", "AED_ACCOUNT", "SPARK_WALLET"}

// TestAccountsLocalValidation: with paywallet.validateAccountInfo the
// errors are shown without sending anything; PHP bank names come from the
// discovery as a <select>; the address is asked only where the wallet
// module's table requires it; every type of the spec is offered.
func TestAccountsLocalValidation(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t, localValidator)
	signIn(t, ctx, site)
	goTo(t, ctx, "/recipients/new", "recipient-new")
	waitFor(t, ctx, shown("add-account"))

	fillUSD(t, ctx, "12345", "10001")
	// Filling fields may schedule the check of a field left (200 ms later):
	// let it run first, so that what is counted is the submit's own check.
	time.Sleep(400 * time.Millisecond)
	waitFor(t, ctx, `!document.querySelector("form[data-checking]")`)
	eval[chromedp.Void](t, ctx, `globalThis.validated.length = 0`)
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, errorShown("accountInfo.routingNumber"))
	if p := posts(api); len(p) != 0 {
		t.Fatalf("the form was sent although the local validator refused it: %s", p)
	}
	if n := eval[int](t, ctx, `globalThis.validated.length`); n != 1 {
		t.Errorf("validator called %d times by one submit", n)
	}

	chooseType(t, ctx, "PHP_ACCOUNT")
	waitFor(t, ctx, `(() => { const s = document.querySelector('select[data-field="accountInfo.bankName"]');
  return !!s && [...s.options].some((o) => o.value === "BDO Unibank, Inc."); })()`)
	if d := api.requests("/api/discoveries"); len(d) == 0 {
		t.Error("bank names were not asked of /api/discoveries")
	}
	if got := eval[string](t, ctx, `document.querySelector('[data-field="accountInfo.beneficiary.fullName"]').value`); got != "Ada Lovelace" {
		t.Errorf("the holder's name was lost on changing type: %q", got)
	}
	waitFor(t, ctx, `!(`+visible("accountInfo.beneficiary.address.line1")+`)`)

	chooseType(t, ctx, "SPARK_WALLET")
	if eval[bool](t, ctx, `!!document.querySelector('[data-field^="accountInfo.beneficiary"]')`) {
		t.Error("a Spark wallet has no beneficiary, but the form asks for one")
	}
	offered := eval[[]string](t, ctx, `[...document.getElementById("account-type").options].map((o) => o.value)`)
	if strings.Join(offered, " ") != strings.Join(allTypes, " ") {
		t.Errorf("types offered %v, want the spec's %v", offered, allTypes)
	}
}

// TestAccountsCheckedAsTyped: a field is checked when the person leaves it,
// not while they type it the first time, and its error goes as soon as it
// is corrected; nothing is sent.
func TestAccountsCheckedAsTyped(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t, localValidator)
	signIn(t, ctx, site)
	goTo(t, ctx, "/recipients/new", "recipient-new")
	waitFor(t, ctx, shown("add-account"))
	chooseType(t, ctx, "USD_ACCOUNT")

	routing := `[data-field="accountInfo.routingNumber"]`
	do(t, ctx, chromedp.SendKeys(chromedp.CSS(routing), "12345"))
	time.Sleep(400 * time.Millisecond) // longer than the form's pause before checking
	if eval[bool](t, ctx, errorShown("accountInfo.routingNumber")) {
		t.Error("the routing number was called wrong while it was being typed the first time")
	}
	do(t, ctx, chromedp.Focus(chromedp.CSS(`[data-field="accountInfo.accountNumber"]`)))
	waitFor(t, ctx, errorShown("accountInfo.routingNumber"))
	if eval[bool](t, ctx, errorShown("accountInfo.accountNumber")) || eval[bool](t, ctx, errorShown("accountInfo.beneficiary.fullName")) {
		t.Error("fields not yet visited show errors")
	}
	do(t, ctx, chromedp.Focus(chromedp.CSS(routing)))
	eval[chromedp.Void](t, ctx, `document.querySelector('`+routing+`').value = ""`)
	do(t, ctx, chromedp.SendKeys(chromedp.CSS(routing), "021000021"))
	waitFor(t, ctx, `!(`+errorShown("accountInfo.routingNumber")+`)`)
	if got := eval[string](t, ctx, `document.querySelector('`+routing+`').getAttribute("aria-invalid") || ""`); got != "" {
		t.Errorf("aria-invalid %q after the fix", got)
	}
	if p := posts(api); len(p) != 0 {
		t.Fatalf("checking as typed sent the form: %s", p)
	}
}

// TestAccountsShapesAndBusiness: COP offers the bank-transfer and the
// mobile-money shape with their own fields; a business holder is asked for
// its legal name and address instead of a person's name, and the body sent
// carries beneficiaryType BUSINESS with businessInfo.
func TestAccountsShapesAndBusiness(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t, localValidator)
	signIn(t, ctx, site)
	goTo(t, ctx, "/recipients/new", "recipient-new")
	waitFor(t, ctx, shown("add-account"))

	chooseType(t, ctx, "COP_ACCOUNT")
	waitFor(t, ctx, visible("accountInfo.accountNumber"))
	if eval[bool](t, ctx, visible("accountInfo.phoneNumber")) {
		t.Error("the bank-transfer shape asks for a phone number")
	}
	choose(t, ctx, "#account-shape", "MOBILE")
	waitFor(t, ctx, visible("accountInfo.phoneNumber"))
	if eval[bool](t, ctx, visible("accountInfo.accountNumber")) || eval[bool](t, ctx, visible("accountInfo.bankAccountType")) {
		t.Error("the mobile-money shape asks for bank-account fields")
	}
	if eval[bool](t, ctx, visible("accountInfo.beneficiary.documentType")) != true {
		t.Error("a Colombian individual is not offered an identity document")
	}

	// Euro bank names come from every euro country: the discovery is asked
	// by currency alone, and the bank is optional.
	chooseType(t, ctx, "EUR_ACCOUNT")
	waitFor(t, ctx, `(() => { const s = document.querySelector('select[data-field="accountInfo.bankName"]');
  return !!s && s.options.length > 1 && s.options[0].textContent === "Not specified"; })()`)
	euro := false
	for _, c := range api.requests("/api/discoveries") {
		euro = euro || c.query == "currency=EUR"
	}
	if !euro {
		t.Errorf("EUR banks not asked as /api/discoveries?currency=EUR: %v", api.requests("/api/discoveries"))
	}

	chooseType(t, ctx, "GBP_ACCOUNT")
	choose(t, ctx, `[data-field="accountInfo.beneficiary.beneficiaryType"]`, "BUSINESS")
	waitFor(t, ctx, visible("accountInfo.beneficiary.businessInfo.legalName"))
	if eval[bool](t, ctx, visible("accountInfo.beneficiary.fullName")) {
		t.Error("a business holder is asked for a person's full name")
	}
	waitFor(t, ctx, visible("accountInfo.beneficiary.address.line1"))
	for field, v := range map[string]string{
		"accountInfo.sortCode":                           "123456",
		"accountInfo.accountNumber":                      "87654321",
		"accountInfo.beneficiary.businessInfo.legalName": "Acme Ltd",
		"accountInfo.beneficiary.address.line1":          "1 High Street",
		"accountInfo.beneficiary.address.postalCode":     "EC1A 1BB",
		"accountInfo.beneficiary.address.country":        "GB",
	} {
		setField(t, ctx, field, v)
	}
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 1`)
	p := posts(api)
	if len(p) != 1 {
		t.Fatalf("%d POSTs, want 1", len(p))
	}
	var body struct {
		Currency    string `json:"currency"`
		AccountInfo struct {
			AccountType string `json:"accountType"`
			Beneficiary struct {
				BeneficiaryType string            `json:"beneficiaryType"`
				FullName        *string           `json:"fullName"`
				BusinessInfo    map[string]string `json:"businessInfo"`
				Address         map[string]string `json:"address"`
			} `json:"beneficiary"`
		} `json:"accountInfo"`
	}
	if err := json.Unmarshal([]byte(p[0]), &body); err != nil {
		t.Fatal(err)
	}
	b := body.AccountInfo.Beneficiary
	if body.Currency != "GBP" || body.AccountInfo.AccountType != "GBP_ACCOUNT" || b.BeneficiaryType != "BUSINESS" ||
		b.FullName != nil || b.BusinessInfo["legalName"] != "Acme Ltd" || b.Address["country"] != "GB" {
		t.Errorf("body sent %s", p[0])
	}
}
