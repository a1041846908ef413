package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// realtimeBody is a quote funded just in time in currency for the payer's
// customer, paying dest.
func realtimeBody(p payer, currency, dest, side string, amount int64) map[string]any {
	return map[string]any{
		"source":               map[string]any{"sourceType": "REALTIME_FUNDING", "customerId": p.customer.ID, "currency": currency},
		"destination":          map[string]any{"destinationType": "ACCOUNT", "accountId": dest},
		"lockedCurrencySide":   side,
		"lockedCurrencyAmount": amount,
	}
}

// fundingReferenceOf is the reference of a funded quote's paymentInstructions.
func fundingReferenceOf(t *testing.T, q wire.Quote) string {
	t.Helper()
	if len(q.PaymentInstructions) != 1 {
		t.Fatalf("quote %s has %d payment instructions", q.ID, len(q.PaymentInstructions))
	}
	info := q.PaymentInstructions[0].AccountOrWalletInfo
	ref, _ := info["reference"].(string)
	if got, ok := store.ParseDepositReference(ref); !ok || got != ref {
		t.Fatalf("funding reference %q", ref)
	}
	if _, has := info["payloadToSign"]; has {
		t.Fatalf("a funded quote carries a payloadToSign: %+v", info)
	}
	return ref
}

func (e *env) sandboxSend(body map[string]any) response {
	e.t.Helper()
	return e.do("POST", "/sandbox/send", body, nil)
}

// TestRealtimeQuoteValidation: every bad member of a REALTIME_FUNDING
// quote is named at once; an unknown customer, another customer's
// destination and an unpriced currency are refused; nothing is stored.
func TestRealtimeQuoteValidation(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("rt-valid@example.com", 0)
	other := e.newPayer("rt-other@example.com", 0)
	dest := e.destination(p, "12345")
	theirs := e.destination(other, "12345")

	r := e.do("POST", "/quotes", map[string]any{
		"source":               map[string]any{"sourceType": "REALTIME_FUNDING", "accountId": p.account.ID, "currency": "usd"},
		"destination":          map[string]any{"destinationType": "ACCOUNT", "accountId": dest.ID},
		"lockedCurrencySide":   "SENDING",
		"lockedCurrencyAmount": 1_000,
		"immediatelyExecute":   true,
	}, nil)
	want := []string{"immediatelyExecute", "source.accountId", "source.currency", "source.customerId"}
	if got := fieldsOf(t, r); !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v: %s", got, want, r.body)
	}
	cases := []struct {
		name   string
		mutate func(map[string]any)
		field  string
	}{
		{"unknown customer", func(b map[string]any) {
			b["source"].(map[string]any)["customerId"] = "Customer:00000000-0000-7000-8000-000000000000"
		}, "source.customerId"},
		{"malformed customer", func(b map[string]any) { b["source"].(map[string]any)["customerId"] = "me" }, "source.customerId"},
		{"other customer's destination", func(b map[string]any) { b["destination"].(map[string]any)["accountId"] = theirs.ID }, "destination.accountId"},
		{"no currency", func(b map[string]any) { delete(b["source"].(map[string]any), "currency") }, "source.currency"},
		{"rail not offered", func(b map[string]any) { b["destination"].(map[string]any)["paymentRail"] = "SPEI" }, "destination.paymentRail"},
	}
	for _, c := range cases {
		b := realtimeBody(p, "USD", dest.ID, "SENDING", 1_000)
		c.mutate(b)
		if got := fieldsOf(t, e.do("POST", "/quotes", b, nil)); len(got) != 1 || got[0] != c.field {
			t.Fatalf("%s: fields %v, want %s", c.name, got, c.field)
		}
	}
	r = e.do("POST", "/quotes", realtimeBody(p, "ZZZ", dest.ID, "SENDING", 1_000), nil)
	if r.status != http.StatusBadRequest || r.errorBody(t).Code != "INVALID_CURRENCY" {
		t.Fatalf("unpriced funding currency: %d %s", r.status, r.body)
	}
	var list wire.List[wire.Transaction]
	e.do("GET", "/transactions?customerId="+p.customer.ID, nil, nil).decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused quotes stored transactions: %+v", list.Data)
	}
}

// TestRealtimeSandboxFlow: quote → POST /sandbox/send → PROCESSING →
// the worker settles, on both stores, with the events; no wallet moves.
func TestRealtimeSandboxFlow(t *testing.T) { onBothStores(t, testRealtimeSandboxFlow) }

func testRealtimeSandboxFlow(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)
	p := e.newPayer("rt-flow@example.com", 0)
	dest := e.destination(p, "12345")
	q := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 10_000))
	switch {
	case q.Status != "PENDING", q.Source.SourceType != "REALTIME_FUNDING", q.Source.CustomerID != p.customer.ID,
		q.Source.Currency != "USD", q.Source.AccountID != "", q.SendingCurrency.Code != "USD", q.TotalSendingAmount != 10_000:
		t.Fatalf("quote %+v", q)
	}
	ref := fundingReferenceOf(t, q)
	info := q.PaymentInstructions[0].AccountOrWalletInfo
	if info["accountNumber"] != "000000000000" || info["accountType"] != "USD_ACCOUNT" ||
		!strings.Contains(q.PaymentInstructions[0].InstructionsNotes, "/sandbox/send") {
		t.Fatalf("instructions %+v", q.PaymentInstructions[0])
	}
	if ref == depositReferenceOf(t, e.account(p.account.ID)) {
		t.Fatal("the quote has the account's deposit reference")
	}
	var got wire.Quote
	e.do("GET", "/quotes/"+q.ID, nil, nil).decode(t, &got)
	if got.Source.SourceType != "REALTIME_FUNDING" || fundingReferenceOf(t, got) != ref {
		t.Fatalf("quote read back %+v", got)
	}
	x := e.transaction(q.TransactionID)
	if x.Status != "PENDING" || x.Source == nil || x.Source.SourceType != "REALTIME_FUNDING" || x.Source.Currency != "USD" ||
		x.SentAmount == nil || x.SentAmount.Amount != 10_000 {
		t.Fatalf("transaction %+v", x)
	}
	// Executing it like a wallet's quote is refused by name.
	if got := fieldsOf(t, e.execute(q, wire.SandboxSignature)); !slices.Equal(got, []string{"quoteId"}) {
		t.Fatalf("execute: %v", got)
	}
	// Mismatched funds are refused and change nothing.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"quoteId": q.ID, "currencyCode": "USD", "currencyAmount": 9_999}, "currencyAmount"},
		{map[string]any{"quoteId": q.ID, "currencyCode": "USD", "currencyAmount": 10_001}, "currencyAmount"},
		{map[string]any{"quoteId": q.ID, "currencyCode": "EUR"}, "currencyCode"},
	} {
		if got := fieldsOf(t, e.sandboxSend(c.body)); !slices.Equal(got, []string{c.field}) {
			t.Fatalf("%v: fields %v", c.body, got)
		}
	}
	if x := e.transaction(q.TransactionID); x.Status != "PENDING" {
		t.Fatalf("after refusals: %s", x.Status)
	}
	r := e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD", "currencyAmount": 10_000})
	e.mustStatus(r, http.StatusOK)
	var sent wire.Transaction
	r.decode(t, &sent)
	if sent.ID != q.TransactionID || sent.Status != "PROCESSING" || sent.QuoteID != q.ID || sent.Type != "OUTGOING" {
		t.Fatalf("sent %+v", sent)
	}
	e.do("GET", "/quotes/"+q.ID, nil, nil).decode(t, &got)
	if got.Status != "PROCESSING" {
		t.Fatalf("quote after send: %s", got.Status)
	}
	// A second payment is not applied.
	r = e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"})
	if r.status != http.StatusConflict || r.errorBody(t).Details["quoteStatus"] != "PROCESSING" {
		t.Fatalf("second send: %d %s", r.status, r.body)
	}
	e.clock.Advance(time.Minute)
	e.settle()
	if x := e.transaction(q.TransactionID); x.Status != "COMPLETED" || x.SettledAt == "" {
		t.Fatalf("settled %+v", x)
	}
	balances(t, e.account(p.account.ID), 0, 0)
	e.deliver()
	if want := []string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.PROCESSING#2", "OUTGOING_PAYMENT.COMPLETED#3"}; !slices.Equal(rc.of(q.TransactionID), want) {
		t.Fatalf("events %v, want %v", rc.of(q.TransactionID), want)
	}
	if got := rc.of(p.account.ID); slices.Contains(got, "INTERNAL_ACCOUNT.BALANCE_UPDATED#2") {
		t.Fatalf("the wallet's balance moved: %v", got)
	}

	// Another currency than the destination's is priced from it; a
	// currency without sandbox bank details still gets its reference.
	eur := e.quote(realtimeBody(p, "EUR", dest.ID, "RECEIVING", 5_000))
	if eur.SendingCurrency.Code != "EUR" || eur.TotalReceivingAmount != 5_000 || eur.Source.Currency != "EUR" {
		t.Fatalf("EUR quote %+v", eur)
	}
	if ref2 := fundingReferenceOf(t, eur); ref2 == ref || eur.PaymentInstructions[0].AccountOrWalletInfo["accountType"] != "EUR_ACCOUNT" {
		t.Fatalf("EUR instructions %+v", eur.PaymentInstructions)
	}
	r = e.sandboxSend(map[string]any{"quoteId": eur.ID, "currencyCode": "EUR"})
	e.mustStatus(r, http.StatusOK)
}

// TestRealtimeSandboxOutcomes: the destination's digits choose the
// outcome as for executed quotes; no internal balance moves either way.
func TestRealtimeSandboxOutcomes(t *testing.T) {
	e := newEnv(t, sandbox, func(c *Config) { c.SettlementDelay = time.Second })
	p := e.newPayer("rt-outcomes@example.com", 0)
	for _, c := range []struct{ suffix, status, reason string }{
		{"12002", "FAILED", "QUOTE_EXECUTION_FAILED"},
		{"12004", "FAILED", "OFFRAMP_FAILED"},
		{"12006", "REJECTED", ""},
	} {
		dest := e.destination(p, c.suffix)
		q := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 1_000))
		e.mustStatus(e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"}), http.StatusOK)
		e.clock.Advance(time.Second)
		e.settle()
		if x := e.transaction(q.TransactionID); x.Status != c.status || x.FailureReason != c.reason {
			t.Fatalf("%s: %+v", c.suffix, x)
		}
	}
	balances(t, e.account(p.account.ID), 0, 0)
}

// TestRealtimeSendRefusals: POST /sandbox/send names its bad members,
// answers 404 for an unknown quote, refuses a quote paid from an account
// and an expired quote (which the worker then expires).
func TestRealtimeSendRefusals(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("rt-refusals@example.com", 10_000)
	dest := e.destination(p, "12345")
	if got := fieldsOf(t, e.sandboxSend(map[string]any{"currencyCode": "us", "currencyAmount": 0})); !slices.Equal(got, []string{"currencyAmount", "currencyCode", "quoteId"}) {
		t.Fatalf("fields %v", got)
	}
	if got := fieldsOf(t, e.sandboxSend(map[string]any{"quoteId": "Quote:x", "currencyCode": "USD", "tip": 1})); !slices.Equal(got, []string{"tip"}) {
		t.Fatalf("unknown member: %v", got)
	}
	for _, id := range []string{"Quote:00000000-0000-7000-8000-000000000000", "nothing"} {
		r := e.sandboxSend(map[string]any{"quoteId": id, "currencyCode": "USD"})
		if r.status != http.StatusNotFound || r.errorBody(t).Code != "QUOTE_NOT_FOUND" {
			t.Fatalf("%s: %d %s", id, r.status, r.body)
		}
	}
	account := e.quote(quoteBody(p, dest.ID, "SENDING", 1_000))
	if got := fieldsOf(t, e.sandboxSend(map[string]any{"quoteId": account.ID, "currencyCode": "USD"})); !slices.Equal(got, []string{"quoteId"}) {
		t.Fatalf("account-funded quote: %v", got)
	}
	q := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 1_000))
	expires, err := time.Parse(time.RFC3339Nano, q.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(expires.Sub(e.clock.Now()))
	r := e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"})
	if r.status != http.StatusConflict || r.errorBody(t).Details["quoteStatus"] != "EXPIRED" {
		t.Fatalf("expired: %d %s", r.status, r.body)
	}
	e.settle()
	if x := e.transaction(q.TransactionID); x.Status != "EXPIRED" || x.FailureReason != "QUOTE_EXPIRED" {
		t.Fatalf("expired transaction %+v", x)
	}
	balances(t, e.account(p.account.ID), 10_000, 10_000)
}

// TestRealtimeDoubleSend: of concurrent payments for one quote exactly one
// executes it (the compare-and-set on PENDING).
func TestRealtimeDoubleSend(t *testing.T) { onBothStores(t, testRealtimeDoubleSend) }

func testRealtimeDoubleSend(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)
	p := e.newPayer("rt-double@example.com", 0)
	dest := e.destination(p, "12345")
	q := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 1_000))
	ref := fundingReferenceOf(t, q)
	const n = 6
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				statuses[i] = e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"}).status
				return
			}
			amount := int64(1_000)
			_, err := e.svc.RecordDeposit(context.Background(), payments.DepositRequest{Reference: ref, Amount: &amount, Currency: "USD",
				BankReference: fmt.Sprintf("RT-%d", i)})
			switch code := codeOf(err); {
			case err == nil:
				statuses[i] = http.StatusOK
			case code == "INVALID_STATE_TRANSITION":
				statuses[i] = http.StatusConflict
			default:
				t.Errorf("deposit: %v", err)
			}
		})
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
		default:
			t.Fatalf("statuses %v", statuses)
		}
	}
	if ok != 1 {
		t.Fatalf("%d payments executed the quote: %v", ok, statuses)
	}
	e.deliver()
	if want := []string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.PROCESSING#2"}; !slices.Equal(rc.of(q.TransactionID), want) {
		t.Fatalf("events %v", rc.of(q.TransactionID))
	}
}

// TestRealtimeProductionDeposit: in production the operator records the
// payment by the quote's reference (`paymentsd deposit`): mismatches and
// an expired quote are refused, the matching payment executes the quote
// once, and the worker settles it; /sandbox/send is 403.
func TestRealtimeProductionDeposit(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.DepositAccounts = map[string]map[string]any{"USD": {"accountType": "USD_ACCOUNT", "accountNumber": "123456789012",
			"routingNumber": "021000021", "bankName": "Operator Bank"}}
	})
	p := e.newPayer("rt-prod@example.com", 0)
	dest := e.destination(p, "12002") // production: digits choose nothing
	q := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 20_000))
	ref := fundingReferenceOf(t, q)
	pi := q.PaymentInstructions[0]
	if pi.AccountOrWalletInfo["accountNumber"] != "123456789012" || strings.Contains(pi.InstructionsNotes, "andbox") ||
		!strings.Contains(pi.InstructionsNotes, ref) {
		t.Fatalf("instructions %+v", pi)
	}
	if r := e.sandboxSend(map[string]any{"quoteId": q.ID, "currencyCode": "USD"}); r.status != http.StatusForbidden {
		t.Fatalf("sandbox send in production: %d", r.status)
	}
	ctx := context.Background()
	credits := 0
	deposit := func(reference string, amount int64, currency string) (wire.Transaction, error) {
		credits++
		return e.svc.RecordDeposit(ctx, payments.DepositRequest{Reference: reference, Amount: &amount, Currency: currency, SenderName: "Ana",
			BankReference: fmt.Sprintf("CREDIT-%d", credits)})
	}
	for _, c := range []struct {
		amount   int64
		currency string
		field    string
	}{{19_999, "USD", "amount"}, {20_000, "EUR", "currency"}} {
		_, err := deposit(ref, c.amount, c.currency)
		var pe *payments.Error
		if codeOf(err) != payments.CodeInvalidInput || !errorsAs(err, &pe) || pe.Details["errors"].([]wire.FieldError)[0].Field != c.field {
			t.Fatalf("%d %s: %v", c.amount, c.currency, err)
		}
	}
	x, err := deposit(strings.ToLower(ref[:4])+"-"+ref[4:], 20_000, "USD")
	if err != nil {
		t.Fatal(err)
	}
	if x.ID != q.TransactionID || x.Status != "PROCESSING" {
		t.Fatalf("funded %+v", x)
	}
	if _, err := deposit(ref, 20_000, "USD"); codeOf(err) != "INVALID_STATE_TRANSITION" {
		t.Fatalf("second deposit: %v", err)
	}
	e.clock.Advance(time.Minute)
	e.settle()
	if x := e.transaction(q.TransactionID); x.Status != "COMPLETED" {
		t.Fatalf("settled %+v", x)
	}
	balances(t, e.account(p.account.ID), 0, 0)

	// An expired quote's payment is refused; its reference is not an account's.
	late := e.quote(realtimeBody(p, "USD", dest.ID, "SENDING", 1_000))
	e.clock.Advance(time.Hour)
	if _, err := deposit(fundingReferenceOf(t, late), late.TotalSendingAmount, "USD"); codeOf(err) != "INVALID_STATE_TRANSITION" {
		t.Fatalf("late deposit: %v", err)
	}
	balances(t, e.account(p.account.ID), 0, 0)
}

func errorsAs(err error, target **payments.Error) bool { return errors.As(err, target) }

// TestRealtimeRefusedToAgents: an agent pays only from an account of its
// allow-list, so a REALTIME_FUNDING source is refused by name and nothing
// is stored.
func TestRealtimeRefusedToAgents(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("rt-agent@example.com", 0)
	dest := e.destination(p, "12345")
	_, token := e.connectAgent(p.customer.ID, policy("CREATE_QUOTES", "VIEW_TRANSACTIONS"))
	r := e.do("POST", "/agents/me/quotes", realtimeBody(p, "USD", dest.ID, "SENDING", 1_000), bearer(token))
	if got := fieldsOf(t, r); !slices.Equal(got, []string{"source.sourceType"}) {
		t.Fatalf("fields %v: %s", got, r.body)
	}
	var list wire.List[wire.Transaction]
	e.do("GET", "/transactions?customerId="+p.customer.ID, nil, nil).decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("stored %+v", list.Data)
	}
}
