package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/service"
)

const sparkAddress = "spark1rt4p0l39mndf88fdnm93l0p4traehheart4p0l39mndf88fdnm93l0p4traehheart4p0l39mndhrq52n"

// TestExternalAccounts adds accounts through the Accounts section: field
// errors (from the wasm validator when the module has it, otherwise from the
// service) are shown next to their inputs and nothing is stored; the fixed
// form creates a PENDING USD account for the signed-in customer, a Spark
// wallet is listed as Active at once, a PHP account takes its bank from the
// discovery list, and another customer's account stays out of reach.
func TestExternalAccounts(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := newBrowser(t)
	const email = "lin@example.com"
	s.signIn(ctx, email)
	customer := s.customerOf(email)

	goTo(t, ctx, "/recipients/new", "recipient-new")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("add-account"))); err != nil {
		t.Fatal(err)
	}
	chooseType(t, ctx, "USD_ACCOUNT")
	// A wrong routing number is flagged by the wasm validator as soon as the
	// person moves on to the next field, before anything is sent.
	fill(t, ctx, map[string]string{"accountInfo.routingNumber": "12345"}) // 5 digits: wrong
	fill(t, ctx, map[string]string{"accountInfo.accountNumber": "12345678"})
	msg := waitFieldError(t, ctx, "accountInfo.routingNumber")
	if !strings.Contains(msg, "9") {
		t.Errorf("routing number flagged with %q; want the 9-digit rule", msg)
	}
	fill(t, ctx, map[string]string{
		"accountInfo.beneficiary.fullName":           "Lin Example",
		"accountInfo.beneficiary.address.line1":      "1 Main Street",
		"accountInfo.beneficiary.address.city":       "New York",
		"accountInfo.beneficiary.address.country":    "US",
		"accountInfo.beneficiary.address.postalCode": "", // missing
	})
	click(t, ctx, "account-submit")
	for _, field := range []string{"accountInfo.routingNumber", "accountInfo.beneficiary.address.postalCode"} {
		msg := waitFieldError(t, ctx, field)
		t.Logf("%s: %s", field, msg)
	}
	if n := len(s.externalAccounts(customer)); n != 0 {
		t.Fatalf("%d external accounts stored after a form with errors", n)
	}

	fill(t, ctx, map[string]string{
		"accountInfo.routingNumber":                  "021000021",
		"accountInfo.beneficiary.address.postalCode": "10001",
	})
	click(t, ctx, "account-submit")
	usd := waitListed(t, ctx, 1)
	if usd.status != "Pending" {
		t.Errorf("USD account listed as %q, want Pending", usd.status)
	}
	if !strings.Contains(usd.text, "5678") || strings.Contains(usd.text, "12345678") {
		t.Errorf("USD account shown as %q, want the account number masked to its last 4", usd.text)
	}
	held := s.externalAccounts(customer)
	if len(held) != 1 || held[0].ID != usd.id || held[0].AccountType != "USD_ACCOUNT" || held[0].CustomerID != customer {
		t.Fatalf("service holds %+v, want the listed USD account %s of %s", held, usd.id, customer)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#add-account [data-error-for]:not([hidden])").length`)); err != nil || n != 0 {
		t.Errorf("%d field errors still shown after a successful submit (%v)", n, err)
	}
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`[data-field="accountInfo.accountNumber"]`))); err != nil || v != "" {
		t.Errorf("the form was not reset: account number %q (%v)", v, err)
	}

	goTo(t, ctx, "/recipients/new", "recipient-new") // an added account takes the page to the list
	chooseType(t, ctx, "SPARK_WALLET")
	fill(t, ctx, map[string]string{"accountInfo.address": sparkAddress})
	click(t, ctx, "account-submit")
	spark := waitListed(t, ctx, 2)
	if spark.status != "Active" {
		t.Errorf("Spark wallet listed as %q, want Active", spark.status)
	}
	if len(s.externalAccounts(customer)) != 2 {
		t.Errorf("the service does not hold both accounts")
	}

	// A Philippine account: the bank is picked from the discovery list.
	goTo(t, ctx, "/recipients/new", "recipient-new") // an added account takes the page to the list
	chooseType(t, ctx, "PHP_ACCOUNT")
	const bank = "BDO Unibank"
	pick := fmt.Sprintf(`(() => { const s = document.querySelector('select[data-field="accountInfo.bankName"]');
  if (!s || ![...s.options].some((o) => o.value === %q)) return false;
  s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, bank, bank)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](pick, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the PHP form does not offer %q from the discovery: %v", bank, err)
	}
	fill(t, ctx, map[string]string{
		"accountInfo.accountNumber":        "001234567890",
		"accountInfo.beneficiary.fullName": "Lin Example",
	})
	click(t, ctx, "account-submit")
	php := waitListed(t, ctx, 3)
	if php.status != "Pending" || !strings.Contains(php.text, "7890") {
		t.Errorf("PHP account listed as %q (%q), want Pending ending in 7890", php.status, php.text)
	}
	held = s.externalAccounts(customer)
	if len(held) != 3 {
		t.Fatalf("the service holds %d accounts, want 3", len(held))
	}
	for _, a := range held {
		if a.ID == php.id && (a.AccountType != "PHP_ACCOUNT" || a.Currency != "PHP") {
			t.Errorf("the PHP account is held as %s %s", a.AccountType, a.Currency)
		}
	}

	// Another customer's account, asked for by id through the BFF from this
	// browser, is 404 exactly as an id nobody holds.
	other := s.otherCustomersAccount()
	for _, id := range []string{other, "ExternalAccount:0199a000-0000-7000-8000-00000000dead"} {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/customers/external-accounts/`+id+`", {headers: {"X-CSRF": "1"}}).then((r) => r.status)`, chromedp.EvalAwaitPromise))
		if err != nil || status != 404 {
			t.Errorf("GET /api/customers/external-accounts/%s from the browser: %d %v, want 404", id, status, err)
		}
	}
	listed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/api/customers/external-accounts?limit=100", {headers: {"X-CSRF": "1"}}).then((r) => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil || strings.Contains(listed, other) {
		t.Errorf("the browser's list holds the other customer's account (%v): %s", err, listed)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 gives PNG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), "accounts.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// On a phone-sized screen, with the form showing errors, nothing spills sideways.
	goTo(t, ctx, "/recipients/new", "recipient-new") // an added account takes the page to the list
	chooseType(t, ctx, "USD_ACCOUNT")
	fill(t, ctx, map[string]string{"accountInfo.routingNumber": "1"})
	click(t, ctx, "account-submit")
	waitFieldError(t, ctx, "accountInfo.routingNumber")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Error("the accounts section scrolls sideways at 390 px wide")
	}
	png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), "accounts-phone.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// chooseType picks the account type as a person would, once the form
// lists it (the types come from the wasm module: the form waits for it).
func chooseType(t *testing.T, ctx context.Context, typ string) {
	t.Helper()
	listed := fmt.Sprintf(`[...document.getElementById("account-type").options].some((o) => o.value === %q)`, typ)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](listed, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the form does not list %s: %v", typ, err)
	}
	js := fmt.Sprintf(`(() => { const s = document.getElementById("account-type"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})); return s.value; })()`, typ)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil || got != typ {
		t.Fatalf("choose %s: %q %v", typ, got, err)
	}
}

// fill types values into the inputs with these data-field paths, replacing
// what they hold.
func fill(t *testing.T, ctx context.Context, values map[string]string) {
	t.Helper()
	for field, v := range values {
		sel := chromedp.CSS(`[data-field="` + field + `"]`)
		// chromedp.Clear only resets the value attribute, not what was typed.
		clear := fmt.Sprintf(`document.querySelector('[data-field=%q]').value = ""`, field)
		if err := chromedp.Do(ctx, chromedp.WaitVisible(sel)); err != nil {
			t.Fatalf("fill %s: %v", field, err)
		}
		// A list (a country, a bank) is chosen by its value, as a person
		// picks a name; typed keys would pick by the first letters of names.
		choose := fmt.Sprintf(`(() => { const s = document.querySelector('[data-field=%q]'); if (s.tagName !== "SELECT") return false;
  s.value = %q; s.dispatchEvent(new Event("input", {bubbles: true})); s.dispatchEvent(new Event("change", {bubbles: true})); return s.value === %q; })()`, field, v, v)
		if picked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](choose)); err != nil || picked {
			if err != nil {
				t.Fatalf("fill %s: %v", field, err)
			}
			continue
		}
		steps := []chromedp.Action[chromedp.Void]{chromedp.Evaluate[chromedp.Void](clear)}
		if v != "" {
			steps = append(steps, chromedp.SendKeys(sel, v))
		}
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("fill %s: %v", field, err)
		}
	}
}

// click clicks the element with this id as a pointer would, once no form
// check is pending (a check shows or hides field errors, which moves what
// is below them).
func click(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	settled := `!document.querySelector("form[data-checking]")`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](settled, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("click #%s: a form check did not settle: %v", id, err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitEnabled(chromedp.ID(id)), chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("click #%s: %v", id, err)
	}
}

// waitFieldError waits until the error element of field is visible with a
// message, and returns the message.
func waitFieldError(t *testing.T, ctx context.Context, field string) string {
	t.Helper()
	js := fmt.Sprintf(`(() => {
  const el = document.querySelector('[data-error-for=%q]');
  return el && !el.hidden && el.offsetParent !== null ? el.textContent.trim() : "";
})()`, field)
	msg, err := chromedp.Run(ctx, chromedp.Poll[string](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil || msg == "" {
		form, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("account-form-error")))
		t.Fatalf("no error shown for %s (%v); form error %q", field, err, form)
	}
	return msg
}

type listedAccount struct{ id, status, text string }

// waitListed waits until #accounts-list has n entries and returns the last.
func waitListed(t *testing.T, ctx context.Context, n int) listedAccount {
	t.Helper()
	js := `(() => {
  const items = document.querySelectorAll("#accounts-list > li[data-id]");
  if (items.length !== ` + strconv.Itoa(n) + `) return null;
  const li = items[items.length - 1];
  const badge = li.querySelector(".badge");
  return {id: li.dataset.id, status: badge ? badge.textContent.trim() : "", text: li.textContent};
})()`
	var v struct{ ID, Status, Text string }
	v, err := chromedp.Run(ctx, chromedp.Poll[struct{ ID, Status, Text string }](js,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		form, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("account-form-error").textContent + " | " + [...document.querySelectorAll("[data-error-for]:not([hidden])")].map(e => e.dataset.errorFor + ": " + e.textContent).join("; ")`))
		t.Fatalf("the list does not show %d accounts: %v; errors: %s", n, err, form)
	}
	return listedAccount{id: v.ID, status: v.Status, text: v.Text}
}
