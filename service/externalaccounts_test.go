package service

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

const sparkAddress = "spark1rt4p0l39mndf88fdnm93l0p4traehheart4p0l39mndf88fdnm93l0p4traehheart4p0l39mndhrq52n"

// usdBody is a valid USD account for the customer; the account number's
// last three digits choose sandbox outcomes.
func usdBody(customerID, accountNumber string) map[string]any {
	b := map[string]any{
		"currency":          "USD",
		"platformAccountId": "acct-" + accountNumber,
		"accountInfo": map[string]any{
			"accountType":     "USD_ACCOUNT",
			"accountNumber":   accountNumber,
			"routingNumber":   "021000021",
			"bankAccountType": "CHECKING",
			"bankName":        "Chase Bank",
			"beneficiary": map[string]any{
				"beneficiaryType": "INDIVIDUAL",
				"fullName":        "Ana Maria Diaz",
				"address":         map[string]any{"line1": "1 Main Street", "city": "Springfield", "postalCode": "62701", "country": "US"},
			},
		},
	}
	if customerID != "" {
		b["customerId"] = customerID
	}
	return b
}

func (e *env) createAccount(body map[string]any) wire.ExternalAccount {
	e.t.Helper()
	r := e.do("POST", "/customers/external-accounts", body, nil)
	e.mustStatus(r, http.StatusCreated)
	var a wire.ExternalAccount
	r.decode(e.t, &a)
	return a
}

func (e *env) getAccount(id string) wire.ExternalAccount {
	e.t.Helper()
	r := e.do("GET", "/customers/external-accounts/"+id, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var a wire.ExternalAccount
	r.decode(e.t, &a)
	return a
}

func (e *env) verify() {
	e.t.Helper()
	if _, err := e.svc.VerifyPending(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func TestDiscoveries(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/discoveries?country=PH&currency=PHP", nil, nil)
	e.mustStatus(r, 200)
	var list wire.Data[map[string]string]
	r.decode(t, &list)
	if len(list.Data) < 10 {
		t.Fatalf("%d Philippine banks", len(list.Data))
	}
	for _, b := range list.Data {
		if b["country"] != "PH" || b["currency"] != "PHP" || b["bankName"] == "" || b["displayName"] == "" {
			t.Fatalf("entry %v", b)
		}
	}
	r = e.do("GET", "/discoveries?country=ZZ", nil, nil)
	e.mustStatus(r, 200)
	if strings.TrimSpace(string(r.body)) != `{"data":[]}` {
		t.Fatalf("unknown country: %s", r.body)
	}
	r = e.do("GET", "/discoveries?currency=NGN", nil, nil)
	r.decode(t, &list)
	if len(list.Data) < 10 || list.Data[0]["country"] != "NG" {
		t.Fatalf("currency filter: %s", r.body)
	}
	for _, bad := range []string{"country=ph", "currency=pesos"} {
		if r := e.do("GET", "/discoveries?"+bad, nil, nil); r.status != 400 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
}

func TestCreateExternalAccount(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("ea@example.com")
	a := e.createAccount(usdBody(w.customer.ID, "000123456789"))
	if !strings.HasPrefix(a.ID, "ExternalAccount:") || a.Status != "PENDING" || a.CustomerID != w.customer.ID || a.Currency != "USD" {
		t.Fatalf("created %+v", a)
	}
	if a.AccountInfo["routingNumber"] != "021000021" || a.PlatformAccountID != "acct-000123456789" {
		t.Fatalf("accountInfo not echoed: %+v", a.AccountInfo)
	}
	rails, _ := a.AccountInfo["paymentRails"].([]any)
	if len(rails) == 0 || rails[0] != "ACH" {
		t.Fatalf("paymentRails %v", a.AccountInfo["paymentRails"])
	}
	// Production has no name-check provider: verification ends UNSUPPORTED, usable.
	e.verify()
	got := e.getAccount(a.ID)
	if got.Status != "ACTIVE" || got.BeneficiaryVerificationStatus != "UNSUPPORTED" {
		t.Fatalf("after verification %+v", got)
	}

	// An exact duplicate for the same customer is refused; the same account
	// for another customer is fine.
	r := e.do("POST", "/customers/external-accounts", usdBody(w.customer.ID, "000123456789"), nil)
	if r.status != 409 || r.errorBody(t).Code != "CONFLICT" {
		t.Fatalf("duplicate: %d %s", r.status, r.body)
	}
	other := e.newWallet("other@example.com")
	e.createAccount(usdBody(other.customer.ID, "000123456789"))

	// A SPARK_WALLET is ACTIVE at creation and has no beneficiary.
	spark := e.createAccount(map[string]any{"currency": "BTC", "customerId": w.customer.ID,
		"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress}})
	if spark.Status != "ACTIVE" || spark.CreatedAt == "" {
		t.Fatalf("spark %+v", spark)
	}
	// Duplicates are found whatever the case of a Spark address and
	// whatever platformAccountId the platform gives the same destination.
	r = e.do("POST", "/customers/external-accounts", map[string]any{"currency": "BTC", "customerId": w.customer.ID,
		"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": strings.ToUpper(sparkAddress)}}, nil)
	if r.status != 409 {
		t.Fatalf("the same Spark address in upper case: %d %s", r.status, r.body)
	}
	again := usdBody(w.customer.ID, "000123456789")
	again["platformAccountId"] = "another-reference"
	if r = e.do("POST", "/customers/external-accounts", again, nil); r.status != 409 {
		t.Fatalf("the same account under another platformAccountId: %d %s", r.status, r.body)
	}

	r = e.do("GET", "/customers/external-accounts?customerId="+w.customer.ID, nil, nil)
	e.mustStatus(r, 200)
	var list wire.List[wire.ExternalAccount]
	r.decode(t, &list)
	if len(list.Data) != 2 || *list.TotalCount != 2 || list.Data[0].ID != a.ID || list.Data[1].ID != spark.ID {
		t.Fatalf("list %s", r.body)
	}
	r = e.do("GET", "/customers/external-accounts?customerId="+w.customer.ID+"&currency=BTC", nil, nil)
	r.decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].ID != spark.ID {
		t.Fatalf("currency filter %s", r.body)
	}
}

func TestCreateExternalAccountRefusals(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("bad@example.com")
	many := usdBody(w.customer.ID, "12")
	info := many["accountInfo"].(map[string]any)
	info["routingNumber"] = "12345"
	info["bankAccountType"] = "CURRENT"
	info["beneficiary"].(map[string]any)["address"].(map[string]any)["postalCode"] = ""
	many["currency"] = "EUR"
	tests := []struct {
		name   string
		body   any
		fields []string
	}{
		{"every bad field at once", many, []string{"accountInfo.bankAccountType", "accountInfo.beneficiary.address.postalCode", "accountInfo.routingNumber", "currency"}},
		{"unknown customer", usdBody("Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", "000123456789"), []string{"customerId"}},
		{"missing accountInfo", map[string]any{"currency": "USD", "customerId": w.customer.ID}, []string{"accountInfo"}},
		{"spark with a beneficiary", map[string]any{"currency": "BTC", "customerId": w.customer.ID,
			"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress, "beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "X"}}},
			[]string{"accountInfo.beneficiary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("POST", "/customers/external-accounts", tt.body, nil)
			if r.status != 400 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			eb := r.errorBody(t)
			var got []string
			for _, fe := range eb.Details["errors"].([]any) {
				got = append(got, fe.(map[string]any)["field"].(string))
			}
			if eb.Code != "INVALID_INPUT" || strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("code %s fields %v, want %v", eb.Code, got, tt.fields)
			}
		})
	}
	r := e.do("GET", "/customers/external-accounts?customerId="+w.customer.ID, nil, nil)
	if !strings.Contains(string(r.body), `"data":[]`) {
		t.Fatalf("a refused request stored an account: %s", r.body)
	}
}

func TestSandboxVerificationPatterns(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = ModeSandbox })
	w := e.newWallet("sb@example.com")
	tests := []struct {
		number, status, verification string
	}{
		{"000000000101", "ACTIVE", "MATCHED"},
		{"000000000102", "UNDER_REVIEW", "NOT_MATCHED"},
		{"000000000103", "UNDER_REVIEW", "PARTIAL_MATCH"},
		{"000000000104", "PENDING", "PENDING"},
		{"000000000106", "ACTIVE", "UNSUPPORTED"},
		{"000000000107", "ACTIVE", "CHECKED_BY_RECEIVING_FI"},
	}
	ids := map[string]string{}
	for _, tt := range tests {
		ids[tt.number] = e.createAccount(usdBody(w.customer.ID, tt.number)).ID
	}
	e.verify()
	e.verify() // a second pass changes nothing (104 is not re-picked)
	for _, tt := range tests {
		a := e.getAccount(ids[tt.number])
		if a.Status != tt.status || a.BeneficiaryVerificationStatus != tt.verification {
			t.Errorf("%s: %s/%s, want %s/%s", tt.number, a.Status, a.BeneficiaryVerificationStatus, tt.status, tt.verification)
		}
	}
	if a := e.getAccount(ids["000000000101"]); a.BeneficiaryVerifiedData["fullName"] != "Ana Maria Diaz" {
		t.Errorf("verified data %v", a.BeneficiaryVerifiedData)
	}
	if a := e.getAccount(ids["000000000103"]); a.BeneficiaryVerifiedData["fullName"] != "Ana M. Diaz" {
		t.Errorf("partial match: verified data %v, want the name on file Ana M. Diaz", a.BeneficiaryVerifiedData)
	}
	if a := e.getAccount(ids["000000000102"]); a.BeneficiaryVerifiedData != nil {
		t.Errorf("not matched: verified data %v, want none", a.BeneficiaryVerifiedData)
	}
	before := len(e.listAccounts("/customers/external-accounts?customerId=" + w.customer.ID))
	r := e.do("POST", "/customers/external-accounts", usdBody(w.customer.ID, "000000000105"), nil)
	if r.status != 400 || r.errorBody(t).Code != "INVALID_BANK_ACCOUNT" {
		t.Fatalf("105: %d %s", r.status, r.body)
	}
	if after := len(e.listAccounts("/customers/external-accounts?customerId=" + w.customer.ID)); after != before {
		t.Fatalf("the refused 105 account was stored: %d accounts, were %d", after, before)
	}
}

// listAccounts follows a list endpoint's pages (path has its query, without
// limit and cursor) two at a time and returns every id in order; between
// pages it runs between(page number).
func (e *env) listAccounts(path string, between ...func(page int)) []string {
	e.t.Helper()
	var out []string
	cursor := ""
	for page := 0; ; page++ {
		q := path + "&limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r := e.do("GET", q, nil, nil)
		e.mustStatus(r, http.StatusOK)
		var list wire.List[wire.ExternalAccount]
		r.decode(e.t, &list)
		if len(list.Data) > 2 {
			e.t.Fatalf("page of %d with limit 2", len(list.Data))
		}
		for _, a := range list.Data {
			out = append(out, a.ID)
		}
		if !list.HasMore {
			if list.NextCursor != "" {
				e.t.Fatalf("last page with a cursor: %s", r.body)
			}
			return out
		}
		if list.NextCursor == "" || page > 50 {
			e.t.Fatalf("hasMore without a cursor (or no end): %s", r.body)
		}
		cursor = list.NextCursor
		for _, f := range between {
			f(page)
		}
	}
}

// TestListPagesStableUnderInserts pages through a customer's accounts and
// the platform's two at a time while accounts are added between pages:
// every account is seen once, in creation order, the new ones at the end.
func TestListPagesStableUnderInserts(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("pages@example.com")
	var want []string
	for i := range 5 {
		want = append(want, e.createAccount(usdBody(w.customer.ID, fmt.Sprintf("00000000100%d", i))).ID)
	}
	added := 0
	got := e.listAccounts("/customers/external-accounts?customerId="+w.customer.ID, func(page int) {
		if page < 2 {
			want = append(want, e.createAccount(usdBody(w.customer.ID, fmt.Sprintf("00000000200%d", page))).ID)
			added++
		}
	})
	if added != 2 || !slices.Equal(got, want) {
		t.Fatalf("paged %v\nwant   %v", got, want)
	}

	var plat []string
	for i := range 3 {
		plat = append(plat, e.createAccount(usdBody("", fmt.Sprintf("00000000300%d", i))).ID)
	}
	got = e.listAccounts("/platform/external-accounts?currency=USD", func(page int) {
		if page == 0 {
			plat = append(plat, e.createAccount(usdBody("", "000000003009")).ID)
		}
	})
	if !slices.Equal(got, plat) {
		t.Fatalf("platform pages %v\nwant %v", got, plat)
	}

	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "cursor=nope"} {
		if r := e.do("GET", "/customers/external-accounts?customerId="+w.customer.ID+"&"+bad, nil, nil); r.status != 400 {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

func TestDefaultUmaDepositAccountMoves(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("d@example.com")
	first := usdBody(w.customer.ID, "000000000001")
	first["defaultUmaDepositAccount"] = true
	second := usdBody(w.customer.ID, "000000000002")
	second["defaultUmaDepositAccount"] = true
	a := e.createAccount(first)
	b := e.createAccount(second)
	if e.getAccount(a.ID).DefaultUmaDepositAccount || !e.getAccount(b.ID).DefaultUmaDepositAccount {
		t.Fatal("the newest default did not take the flag from the previous one")
	}
}

func TestPlatformExternalAccounts(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("p@example.com")
	r := e.do("POST", "/platform/external-accounts", usdBody("", "000000000777"), nil)
	e.mustStatus(r, 201)
	var pa wire.ExternalAccount
	r.decode(t, &pa)
	if pa.CustomerID != "" {
		t.Fatalf("platform account has customer %q", pa.CustomerID)
	}
	e.createAccount(usdBody(w.customer.ID, "000000000888"))
	r = e.do("POST", "/platform/external-accounts", usdBody(w.customer.ID, "000000000999"), nil)
	if r.status != 400 || r.errorBody(t).Code != "INVALID_INPUT" {
		t.Fatalf("platform account with customerId: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/platform/external-accounts", nil, nil)
	var list wire.List[wire.ExternalAccount]
	r.decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].ID != pa.ID {
		t.Fatalf("platform list %s", r.body)
	}
}

func TestDeactivateAndNotFound(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("x@example.com")
	body := usdBody(w.customer.ID, "000000000555")
	body["defaultUmaDepositAccount"] = true
	a := e.createAccount(body)
	if !a.DefaultUmaDepositAccount {
		t.Fatal("created without the default flag")
	}
	e.mustStatus(e.do("DELETE", "/customers/external-accounts/"+a.ID, nil, nil), 204)
	if got := e.getAccount(a.ID); got.Status != "INACTIVE" || got.DefaultUmaDepositAccount {
		t.Fatalf("status %s, default %v: want INACTIVE and no longer the default", got.Status, got.DefaultUmaDepositAccount)
	}
	e.verify() // the verifier leaves an INACTIVE account alone
	if got := e.getAccount(a.ID); got.Status != "INACTIVE" {
		t.Fatalf("verifier revived it: %s", got.Status)
	}
	for _, id := range []string{"ExternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", "nope"} {
		if r := e.do("GET", "/customers/external-accounts/"+id, nil, nil); r.status != 404 {
			t.Errorf("%s: %d", id, r.status)
		}
	}
	// Without customerId the list is every customer's accounts (the
	// reference's "if no filters are provided, returns all"; it was a 400
	// before issue 17): see TestListEveryCustomersExternalAccounts.
	if r := e.do("GET", "/customers/external-accounts", nil, nil); r.status != 200 {
		t.Errorf("list without customerId: %d", r.status)
	}
}
