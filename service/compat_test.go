package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"paywallet/shared/wire"
)

// Issue 17: the smaller incompatibilities with the reference API's own
// clients, and the platform's accounts.

// TestTransactionDirection: every transaction carries the reference's
// required direction, in answers and in webhooks alike: CREDIT for an
// INCOMING one (sandbox funding), DEBIT for an OUTGOING one (a quote's
// payment).
func TestTransactionDirection(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	p := e.newPayer("dir@example.com", 50_000)
	dst := e.destination(p, "00001")
	q := e.quote(quoteBody(p, dst.ID, "SENDING", 1000))

	r := e.do("GET", "/transactions?customerId="+p.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list struct {
		Data []map[string]any `json:"data"`
	}
	r.decode(t, &list)
	want := map[string]string{"INCOMING": "CREDIT", "OUTGOING": "DEBIT"}
	seen := map[string]bool{}
	for _, x := range list.Data {
		typ, _ := x["type"].(string)
		if x["direction"] != want[typ] {
			t.Errorf("%s transaction %v has direction %v, want %s", typ, x["id"], x["direction"], want[typ])
		}
		seen[typ] = true
	}
	if !seen["INCOMING"] || !seen["OUTGOING"] {
		t.Fatalf("listed %s", r.body)
	}
	if x := e.transaction(q.TransactionID); x.Direction != "DEBIT" {
		t.Errorf("GET /transactions/{id}: direction %q", x.Direction)
	}

	e.deliver()
	events := 0
	for _, ev := range rc.events() {
		if !strings.HasPrefix(string(ev.Type), "INCOMING_PAYMENT.") && !strings.HasPrefix(string(ev.Type), "OUTGOING_PAYMENT.") {
			continue
		}
		var x map[string]any
		if err := json.Unmarshal(ev.Data, &x); err != nil {
			t.Fatal(err)
		}
		typ, _ := x["type"].(string)
		if x["direction"] != want[typ] {
			t.Errorf("webhook %s: %s transaction with direction %v", ev.Type, typ, x["direction"])
		}
		events++
	}
	if events < 2 {
		t.Fatalf("%d transaction webhooks", events)
	}
}

// TestExchangeRatePaymentRails: every row names its destinationPaymentRail
// (required by the reference); a BTC row names SPARK, the network its
// SPARK_WALLET destination is paid over.
func TestExchangeRatePaymentRails(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		query string
		want  map[string][]string // destination currency -> rails, in order
	}{
		{"destinationCurrency=BTC", map[string][]string{"BTC": {"SPARK"}}},
		{"destinationCurrency=BTC&destinationCurrency=MXN", map[string][]string{"BTC": {"SPARK"}, "MXN": {"SPEI"}}},
		{"sourceCurrency=EUR&destinationCurrency=BTC&sendingAmount=5000", map[string][]string{"BTC": {"SPARK"}}},
		{"", nil}, // every currency: checked for a rail on each row
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := e.do("GET", "/exchange-rates?"+tc.query, nil, nil)
			e.mustStatus(r, http.StatusOK)
			var rows wire.Data[map[string]any]
			r.decode(t, &rows)
			got := map[string][]string{}
			for _, row := range rows.Data {
				rail, _ := row["destinationPaymentRail"].(string)
				if rail == "" {
					t.Errorf("row without destinationPaymentRail: %v", row)
				}
				code := row["destinationCurrency"].(map[string]any)["code"].(string)
				got[code] = append(got[code], rail)
			}
			if tc.want != nil && fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("rails %v, want %v", got, tc.want)
			}
			if tc.want == nil && !slices.Equal(got["BTC"], []string{"SPARK"}) {
				t.Errorf("BTC rails %v in the full list", got["BTC"])
			}
		})
	}
}

// TestNotFoundCodes: every 404 the service answers uses the reference's
// Error404 code where that enum names the resource (a customer is
// USER_NOT_FOUND), and NOT_FOUND for the resources it names none of.
func TestNotFoundCodes(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("nf@example.com", 10_000)
	other := e.newWallet("nf-other@example.com")
	theirs := e.createAccount(usdBody(other.customer.ID, "000000000321"))
	const (
		noCustomer = "Customer:0199a3c4-0000-7000-8000-000000000001"
		noQuote    = "Quote:0199a3c4-0000-7000-8000-000000000001"
		noTx       = "Transaction:0199a3c4-0000-7000-8000-000000000001"
		noAccount  = "ExternalAccount:0199a3c4-0000-7000-8000-000000000001"
		noInternal = "InternalAccount:0199a3c4-0000-7000-8000-000000000001"
		noSession  = "Session:0199a3c4-0000-7000-8000-000000000001"
		noCred     = "AuthMethod:0199a3c4-0000-7000-8000-000000000001"
		noAgent    = "Agent:0199a3c4-0000-7000-8000-000000000001"
		noDelivery = "Webhook:0199a3c4-0000-7000-8000-000000000001"
	)
	cases := []struct {
		name, method, path string
		body               any
		code               string
	}{
		{"customer", "GET", "/customers/" + noCustomer, nil, "USER_NOT_FOUND"},
		{"customer, malformed", "GET", "/customers/nope", nil, "USER_NOT_FOUND"},
		{"customer update", "PATCH", "/customers/" + noCustomer, map[string]any{"customerType": "INDIVIDUAL", "fullName": "X"}, "USER_NOT_FOUND"},
		{"receiver lookup's customer", "GET", "/receiver/external-account/" + noAccount + "?customerId=" + noCustomer, nil, "USER_NOT_FOUND"},
		{"quote", "GET", "/quotes/" + noQuote, nil, "QUOTE_NOT_FOUND"},
		{"quote execute", "POST", "/quotes/" + noQuote + "/execute", nil, "QUOTE_NOT_FOUND"},
		{"transaction", "GET", "/transactions/" + noTx, nil, "TRANSACTION_NOT_FOUND"},
		{"transaction confirm", "POST", "/transactions/" + noTx + "/confirm", nil, "TRANSACTION_NOT_FOUND"},
		{"lookup of a quote", "POST", "/quotes", withLookup(quoteBody(p, theirs.ID, "SENDING", 100), "Lookup:0199a3c4-0000-8000-8000-000000000001"), ""},
		{"external account", "GET", "/customers/external-accounts/" + noAccount, nil, "NOT_FOUND"},
		{"external account delete", "DELETE", "/customers/external-accounts/" + noAccount, nil, "NOT_FOUND"},
		{"platform external account", "GET", "/platform/external-accounts/" + noAccount, nil, "NOT_FOUND"},
		{"receiver lookup's account", "GET", "/receiver/external-account/" + theirs.ID + "?customerId=" + p.customer.ID, nil, "NOT_FOUND"},
		{"internal account", "POST", "/sandbox/internal-accounts/" + noInternal + "/fund", map[string]any{"amount": 1}, "NOT_FOUND"},
		{"session", "DELETE", "/auth/sessions/" + noSession, nil, "NOT_FOUND"},
		{"credential", "POST", "/auth/credentials/" + noCred + "/challenge", map[string]any{}, "NOT_FOUND"},
		{"agent", "GET", "/agents/" + noAgent, nil, "NOT_FOUND"},
		{"webhook delivery", "POST", "/webhooks/deliveries/" + noDelivery + "/replay", nil, "NOT_FOUND"},
		{"webhook endpoint", "GET", "/webhooks/endpoints/WebhookEndpoint:0199a3c4-0000-7000-8000-000000000001", nil, "NOT_FOUND"},
		{"event", "GET", "/events/" + noDelivery, nil, "NOT_FOUND"},
		{"unknown path", "GET", "/no/such/path", nil, "NOT_FOUND"},
	}
	enum := []string{"TRANSACTION_NOT_FOUND", "INVITATION_NOT_FOUND", "USER_NOT_FOUND", "QUOTE_NOT_FOUND", "LOOKUP_REQUEST_NOT_FOUND",
		"TOKEN_NOT_FOUND", "BULK_UPLOAD_JOB_NOT_FOUND", "REFERENCE_NOT_FOUND", "UMA_NOT_FOUND", "STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body, nil)
			if tc.code == "" {
				// The destination is another customer's: the quote is
				// refused on that (400) before any lookup is read.
				if r.status != http.StatusBadRequest {
					t.Fatalf("%d %s", r.status, r.body)
				}
				return
			}
			if r.status != http.StatusNotFound {
				t.Fatalf("%d %s", r.status, r.body)
			}
			code := r.errorBody(t).Code
			if code != tc.code {
				t.Fatalf("code %s, want %s", code, tc.code)
			}
			if code != "NOT_FOUND" && !slices.Contains(enum, code) {
				t.Fatalf("%s is not in the reference's Error404 enum", code)
			}
		})
	}
}

func withLookup(body map[string]any, lookupID string) map[string]any {
	body["lookupId"] = lookupID
	return body
}

// usdRails is a USD account body with accountInfo.paymentRails set to rails.
func usdRails(customerID, accountNumber string, rails any) map[string]any {
	b := usdBody(customerID, accountNumber)
	b["accountInfo"].(map[string]any)["paymentRails"] = rails
	return b
}

func railsOf(a wire.ExternalAccount) []string {
	var out []string
	for _, r := range a.AccountInfo["paymentRails"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// TestExternalAccountPaymentRails: a create body may name the account's
// paymentRails (the reference's clients send it): rails of the account
// type, distinct, at least one (none for a SPARK_WALLET). The answer, the
// reads and quotes then honour them; a refusal names every bad field and
// stores nothing.
func TestExternalAccountPaymentRails(t *testing.T) { onBothStores(t, testExternalAccountPaymentRails) }

func testExternalAccountPaymentRails(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("rails@example.com", 100_000)
	spark := func(rails any) map[string]any {
		return map[string]any{"currency": "BTC", "customerId": p.customer.ID,
			"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress, "paymentRails": rails}}
	}
	ok := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"one rail", usdRails(p.customer.ID, "000000010001", []string{"RTP"}), []string{"RTP"}},
		{"the order given", usdRails(p.customer.ID, "000000010002", []string{"WIRE", "ACH"}), []string{"WIRE", "ACH"}},
		{"every rail", usdRails(p.customer.ID, "000000010003", []string{"ACH", "WIRE", "RTP", "FEDNOW"}), []string{"ACH", "WIRE", "RTP", "FEDNOW"}},
		{"none given", usdBody(p.customer.ID, "000000010004"), []string{"ACH", "WIRE", "RTP", "FEDNOW"}},
		{"spark, empty", spark([]string{}), []string{}},
	}
	made := map[string]wire.ExternalAccount{}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			a := e.createAccount(tc.body)
			if got := railsOf(a); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("created with paymentRails %v, want %v", got, tc.want)
			}
			if got := railsOf(e.getAccount(a.ID)); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("read back with paymentRails %v, want %v", got, tc.want)
			}
			made[tc.name] = a
		})
	}

	before := len(e.listAccounts("/customers/external-accounts?customerId=" + p.customer.ID))
	noRouting := usdRails(p.customer.ID, "000000010009", []string{"SPEI"})
	delete(noRouting["accountInfo"].(map[string]any), "routingNumber")
	bad := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"another type's rail", usdRails(p.customer.ID, "000000010005", []string{"SPEI"}), []string{"accountInfo.paymentRails"}},
		{"not a rail", usdRails(p.customer.ID, "000000010005", []string{"CARRIER_PIGEON"}), []string{"accountInfo.paymentRails"}},
		{"empty", usdRails(p.customer.ID, "000000010005", []string{}), []string{"accountInfo.paymentRails"}},
		{"a string", usdRails(p.customer.ID, "000000010005", "RTP"), []string{"accountInfo.paymentRails"}},
		{"a number in it", usdRails(p.customer.ID, "000000010005", []any{"ACH", 7}), []string{"accountInfo.paymentRails"}},
		{"twice", usdRails(p.customer.ID, "000000010005", []string{"ACH", "ACH"}), []string{"accountInfo.paymentRails"}},
		{"null", usdRails(p.customer.ID, "000000010005", nil), []string{"accountInfo.paymentRails"}},
		{"spark with a rail", spark([]string{"ACH"}), []string{"accountInfo.paymentRails"}},
		{"with other bad fields", noRouting, []string{"accountInfo.paymentRails", "accountInfo.routingNumber"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/customers/external-accounts", tc.body, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if got := fieldsOf(t, r); !slices.Equal(got, tc.fields) {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
		})
	}
	if after := len(e.listAccounts("/customers/external-accounts?customerId=" + p.customer.ID)); after != before {
		t.Fatalf("refused creates stored accounts: %d -> %d", before, after)
	}

	// The same destination on other rails is the same account.
	r := e.do("POST", "/customers/external-accounts", usdRails(p.customer.ID, "000000010001", []string{"ACH"}), nil)
	if r.status != http.StatusConflict {
		t.Fatalf("same account, other rails: %d %s", r.status, r.body)
	}
	// A platform account takes them too.
	r = e.do("POST", "/platform/external-accounts", usdRails("", "000000010006", []string{"FEDNOW"}), nil)
	e.mustStatus(r, http.StatusCreated)
	var pa wire.ExternalAccount
	r.decode(t, &pa)
	if got := railsOf(pa); !slices.Equal(got, []string{"FEDNOW"}) {
		t.Fatalf("platform account rails %v", got)
	}

	// Quotes pay on the account's first rail unless told, and only on its rails.
	e.verify()
	one := made["one rail"]
	if q := e.quote(quoteBody(p, one.ID, "SENDING", 1000)); q.Destination.PaymentRail != "RTP" {
		t.Fatalf("quote to an RTP-only account on %q", q.Destination.PaymentRail)
	}
	if q := e.quote(quoteBody(p, made["the order given"].ID, "SENDING", 1000)); q.Destination.PaymentRail != "WIRE" {
		t.Fatalf("quote to a WIRE-first account on %q", q.Destination.PaymentRail)
	}
	body := quoteBody(p, one.ID, "SENDING", 1000)
	body["destination"].(map[string]any)["paymentRail"] = "ACH"
	r = e.do("POST", "/quotes", body, nil)
	if r.status != http.StatusBadRequest || !slices.Equal(fieldsOf(t, r), []string{"destination.paymentRail"}) {
		t.Fatalf("quote on a rail the account was not given: %d %s", r.status, r.body)
	}
}

// TestListEveryCustomersExternalAccounts: GET /customers/external-accounts
// without customerId lists every customer's accounts, paged, never the
// platform's (those are at /platform/external-accounts).
func TestListEveryCustomersExternalAccounts(t *testing.T) {
	onBothStores(t, testListEveryCustomersExternalAccounts)
}

func testListEveryCustomersExternalAccounts(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	a := e.newWallet("all-a@example.com")
	b := e.newWallet("all-b@example.com")
	var want []string
	want = append(want, e.createAccount(usdBody(a.customer.ID, "000000020001")).ID)
	platform := e.createAccount(usdBody("", "000000020002")) // no customerId: the platform's
	want = append(want, e.createAccount(usdBody(b.customer.ID, "000000020003")).ID)
	want = append(want, e.createAccount(map[string]any{"currency": "BTC", "customerId": b.customer.ID,
		"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress}}).ID)

	if got := e.listAccounts("/customers/external-accounts?"); !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if got := e.listAccounts("/customers/external-accounts?currency=USD"); !slices.Equal(got, want[:2]) {
		t.Fatalf("USD: %v, want %v", got, want[:2])
	}
	r := e.do("GET", "/customers/external-accounts?limit=2", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var page wire.List[wire.ExternalAccount]
	r.decode(t, &page)
	if len(page.Data) != 2 || !page.HasMore || page.TotalCount == nil || *page.TotalCount != 3 {
		t.Fatalf("first page of 2: %s", r.body)
	}
	if got := e.listAccounts("/platform/external-accounts?"); !slices.Equal(got, []string{platform.ID}) {
		t.Fatalf("platform list %v", got)
	}
	for _, bad := range []string{"customerId=nope", "currency=usd", "limit=0"} {
		if r := e.do("GET", "/customers/external-accounts?"+bad, nil, nil); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

// TestPlatformExternalAccountByID: GET and DELETE
// /platform/external-accounts/{id} serve the platform's accounts only, and
// the customer paths its customers' only: an account of the other kind is
// the same 404 as an unknown id, and is left as it was.
func TestPlatformExternalAccountByID(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("pid@example.com")
	cust := e.createAccount(usdBody(w.customer.ID, "000000030001"))
	r := e.do("POST", "/platform/external-accounts", usdBody("", "000000030002"), nil)
	e.mustStatus(r, http.StatusCreated)
	var plat wire.ExternalAccount
	r.decode(t, &plat)

	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"platform GET", "GET", "/platform/external-accounts/" + plat.ID, 200},
		{"customer GET", "GET", "/customers/external-accounts/" + cust.ID, 200},
		{"customer account on the platform path", "GET", "/platform/external-accounts/" + cust.ID, 404},
		{"platform account on the customer path", "GET", "/customers/external-accounts/" + plat.ID, 404},
		{"customer account deleted on the platform path", "DELETE", "/platform/external-accounts/" + cust.ID, 404},
		{"platform account deleted on the customer path", "DELETE", "/customers/external-accounts/" + plat.ID, 404},
		{"malformed", "GET", "/platform/external-accounts/nope", 404},
		{"unknown", "DELETE", "/platform/external-accounts/ExternalAccount:0199a3c4-0000-7000-8000-000000000001", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, nil, nil)
			if r.status != tc.status {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tc.status == 404 && r.errorBody(t).Code != "NOT_FOUND" {
				t.Fatalf("%s", r.body)
			}
			if tc.status == 200 {
				var a wire.ExternalAccount
				r.decode(t, &a)
				if !strings.HasSuffix(tc.path, a.ID) {
					t.Fatalf("answered %s", a.ID)
				}
			}
		})
	}
	if got := e.getAccount(cust.ID); got.Status != "PENDING" {
		t.Fatalf("the customer's account became %s", got.Status)
	}
	e.mustStatus(e.do("DELETE", "/platform/external-accounts/"+plat.ID, nil, nil), http.StatusNoContent)
	e.mustStatus(e.do("DELETE", "/platform/external-accounts/"+plat.ID, nil, nil), http.StatusNoContent)
	r = e.do("GET", "/platform/external-accounts/"+plat.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var got wire.ExternalAccount
	r.decode(t, &got)
	if got.Status != "INACTIVE" {
		t.Fatalf("after DELETE: %s", got.Status)
	}
}

// TestPlatformInternalAccounts: the platform has one internal account per
// wallet currency, made at start once whatever the number of instances
// starting on the database; GET /platform/internal-accounts lists it with
// its filters; the operations meant for customers' accounts refuse it and
// say why.
func TestPlatformInternalAccounts(t *testing.T) { onBothStores(t, testPlatformInternalAccounts) }

func testPlatformInternalAccounts(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	list := func(query string) []wire.InternalAccount {
		t.Helper()
		r := e.do("GET", "/platform/internal-accounts"+query, nil, nil)
		e.mustStatus(r, http.StatusOK)
		var out wire.Data[wire.InternalAccount]
		r.decode(t, &out)
		if out.Data == nil {
			t.Fatalf("%s: data is not a list: %s", query, r.body)
		}
		return out.Data
	}
	all := list("")
	if len(all) != 1 {
		t.Fatalf("%d platform accounts", len(all))
	}
	pa := all[0]
	if pa.CustomerID != "" || pa.Type != "INTERNAL_FIAT" || pa.Status != "ACTIVE" || pa.Balance.Currency.Code != "USD" ||
		pa.Balance.Amount != 0 || pa.TotalBalance.Amount != 0 || pa.FundingPaymentInstructions == nil || pa.PrivateEnabled != nil {
		t.Fatalf("platform account %+v", pa)
	}
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?type=INTERNAL_FIAT", 1}, {"?currency=USD", 1}, {"?type=INTERNAL_FIAT&currency=USD", 1},
		{"?type=EMBEDDED_WALLET", 0}, {"?type=INTERNAL_CRYPTO", 0}, {"?currency=EUR", 0},
	} {
		if got := list(tc.query); len(got) != tc.n {
			t.Errorf("%s: %d accounts, want %d", tc.query, len(got), tc.n)
		}
	}
	r := e.do("GET", "/platform/internal-accounts?type=WALLET&currency=usd", nil, nil)
	if r.status != http.StatusBadRequest || !slices.Equal(fieldsOf(t, r), []string{"currency", "type"}) {
		t.Fatalf("bad filters: %d %s", r.status, r.body)
	}

	// Further starts, one after the other and several at once, make no
	// second account.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			_, err := New(context.Background(), e.cfg)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if again := list(""); len(again) != 1 || again[0].ID != pa.ID {
		t.Fatalf("after more starts: %+v", again)
	}

	// A customer's wallet is not a platform account, nor the reverse.
	p := e.newPayer("pia@example.com", 10_000)
	if got := list(""); len(got) != 1 {
		t.Fatalf("a customer's wallet is listed: %+v", got)
	}
	dst := e.destination(p, "00001")

	// What only a customer's account can do is refused, with the reason.
	fromPlatform := quoteBody(p, dst.ID, "SENDING", 100)
	fromPlatform["source"].(map[string]any)["accountId"] = pa.ID
	for _, tc := range []struct {
		name, method, path string
		body               any
		fields             []string
		says               string
	}{
		{"sandbox funding", "POST", "/sandbox/internal-accounts/" + pa.ID + "/fund", map[string]any{"amount": 100}, nil, "platform internal account"},
		// The destination is the customer's, not the (customerless) source's.
		{"a quote from it", "POST", "/quotes", fromPlatform, []string{"destination.accountId", "source.accountId"}, "is a platform account"},
		{"a credential on it", "POST", "/auth/credentials", map[string]any{"type": "EMAIL_OTP", "accountId": pa.ID}, []string{"accountId"}, "platform internal account"},
		{"wallet settings", "PATCH", "/internal-accounts/" + pa.ID, map[string]any{"privateEnabled": true}, nil, "EMBEDDED_WALLET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.body, nil)
			if r.status != http.StatusBadRequest {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tc.fields != nil && !slices.Equal(fieldsOf(t, r), tc.fields) {
				t.Fatalf("fields %v: %s", fieldsOf(t, r), r.body)
			}
			if !strings.Contains(string(r.body), tc.says) {
				t.Fatalf("the refusal does not say why (%q): %s", tc.says, r.body)
			}
		})
	}
	if got := list(""); got[0].Balance.Amount != 0 {
		t.Fatalf("refused funding changed the balance: %+v", got[0])
	}
	r = e.do("GET", "/transactions?accountId="+pa.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var txs wire.List[wire.Transaction]
	r.decode(t, &txs)
	if len(txs.Data) != 0 {
		t.Fatalf("transactions of the platform account: %s", r.body)
	}
}

// TestReceiverExternalAccountLookup: GET /receiver/external-account/{id}
// tells a customer what it can pay its ACTIVE external account in, and its
// lookupId is taken by a quote of that customer to that account only.
func TestReceiverExternalAccountLookup(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("lookup@example.com", 100_000)
	other := e.newWallet("lookup-other@example.com")
	usd := e.destination(p, "00001")
	mxn := e.createAccount(map[string]any{"currency": "MXN", "customerId": p.customer.ID, "accountInfo": map[string]any{
		"accountType": "MXN_ACCOUNT", "clabeNumber": "002010077777777771",
		"beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Diaz",
			"address": map[string]any{"line1": "1 Calle", "city": "CDMX", "postalCode": "01000", "country": "MX"}}}})
	btc := e.createAccount(map[string]any{"currency": "BTC", "customerId": p.customer.ID,
		"accountInfo": map[string]any{"accountType": "SPARK_WALLET", "address": sparkAddress}})
	pending := e.createAccount(usdBody(p.customer.ID, "000000000104")) // sandbox 104: stays PENDING
	e.verify()
	theirs := e.createAccount(usdBody(other.customer.ID, "000000000001"))
	r := e.do("POST", "/platform/external-accounts", usdBody("", "000000040001"), nil)
	e.mustStatus(r, http.StatusCreated)
	var plat wire.ExternalAccount
	r.decode(t, &plat)

	lookup := func(accountID, query string) response {
		return e.do("GET", "/receiver/external-account/"+accountID+"?"+query, nil, nil)
	}
	var lookups []wire.ReceiverExternalAccountLookup
	for _, tc := range []struct {
		account  wire.ExternalAccount
		currency string
	}{{usd, "USD"}, {mxn, "MXN"}, {btc, "BTC"}} {
		r := lookup(tc.account.ID, "customerId="+p.customer.ID)
		e.mustStatus(r, http.StatusOK)
		var l wire.ReceiverExternalAccountLookup
		r.decode(t, &l)
		if l.AccountID != tc.account.ID || len(l.SupportedCurrencies) != 1 || !strings.HasPrefix(l.LookupID, "Lookup:") {
			t.Fatalf("%s lookup %s", tc.currency, r.body)
		}
		c := l.SupportedCurrencies[0]
		if c.Currency.Code != tc.currency || c.EstimatedExchangeRate <= 0 || c.Min < 1 || c.Max <= c.Min {
			t.Fatalf("%s currency %+v", tc.currency, c)
		}
		lookups = append(lookups, l)
	}
	if lookups[0].LookupID == lookups[1].LookupID {
		t.Fatal("two accounts share a lookupId")
	}
	// The customer's own UMA address is accepted beside customerId.
	if p.customer.UmaAddress == "" {
		t.Fatal("the customer has no umaAddress")
	}
	{
		r := lookup(usd.ID, "customerId="+p.customer.ID+"&senderUmaAddress="+strings.ReplaceAll(p.customer.UmaAddress, "$", "%24"))
		e.mustStatus(r, http.StatusOK)
		var l wire.ReceiverExternalAccountLookup
		r.decode(t, &l)
		if l.LookupID != lookups[0].LookupID {
			t.Fatalf("the same lookup has another lookupId: %s", r.body)
		}
	}

	// Without customerId the sender is the account's own customer (the
	// reference makes customerId optional; before, it was required): the
	// same answer and lookupId, with or without the customer's UMA address.
	for _, query := range []string{"", "senderUmaAddress=" + strings.ReplaceAll(p.customer.UmaAddress, "$", "%24")} {
		r := lookup(usd.ID, query)
		e.mustStatus(r, http.StatusOK)
		var l wire.ReceiverExternalAccountLookup
		r.decode(t, &l)
		if l.LookupID != lookups[0].LookupID || l.AccountID != usd.ID {
			t.Fatalf("lookup without customerId (%q): %s", query, r.body)
		}
	}

	for _, tc := range []struct {
		name, account, query string
		status               int
		code                 string
		fields               []string
	}{
		{"another's UMA address alone", usd.ID, "senderUmaAddress=%24ana%40example.com", 400, "INVALID_INPUT", []string{"senderUmaAddress"}},
		{"the platform's account, no sender", plat.ID, "", 404, "NOT_FOUND", nil},
		{"malformed sender", usd.ID, "customerId=nope&senderUmaAddress=nope", 400, "INVALID_INPUT", []string{"customerId", "senderUmaAddress"}},
		{"another's UMA address", usd.ID, "customerId=" + p.customer.ID + "&senderUmaAddress=%24someone%40else.example", 400, "INVALID_INPUT", []string{"senderUmaAddress"}},
		{"unknown sender", usd.ID, "customerId=Customer:0199a3c4-0000-7000-8000-000000000001", 404, "USER_NOT_FOUND", nil},
		{"another customer's account", theirs.ID, "customerId=" + p.customer.ID, 404, "NOT_FOUND", nil},
		{"the platform's account", plat.ID, "customerId=" + p.customer.ID, 404, "NOT_FOUND", nil},
		{"malformed account", "nope", "customerId=" + p.customer.ID, 404, "NOT_FOUND", nil},
		{"a pending account", pending.ID, "customerId=" + p.customer.ID, 400, "INVALID_INPUT", []string{"accountId"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lookup(tc.account, tc.query)
			if r.status != tc.status || r.errorBody(t).Code != tc.code {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tc.fields != nil && !slices.Equal(fieldsOf(t, r), tc.fields) {
				t.Fatalf("fields %v", fieldsOf(t, r))
			}
		})
	}

	// The quote takes the lookupId of its own customer and destination.
	q := e.quote(withLookup(quoteBody(p, usd.ID, "SENDING", 1000), lookups[0].LookupID))
	if q.Destination.AccountID != usd.ID {
		t.Fatalf("quote %+v", q)
	}
	r = e.do("POST", "/quotes", withLookup(quoteBody(p, usd.ID, "SENDING", 1000), lookups[1].LookupID), nil)
	if r.status != http.StatusNotFound || r.errorBody(t).Code != "LOOKUP_REQUEST_NOT_FOUND" {
		t.Fatalf("another account's lookupId: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/quotes", withLookup(quoteBody(p, usd.ID, "SENDING", 1000), "LookupRequest:1"), nil)
	if r.status != http.StatusBadRequest || !slices.Equal(fieldsOf(t, r), []string{"lookupId"}) {
		t.Fatalf("malformed lookupId: %d %s", r.status, r.body)
	}
}
