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

	"paywallet/service/ids"
	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

func transferInBody(ext, internal string, amount int64) map[string]any {
	return map[string]any{"source": map[string]any{"accountId": ext}, "destination": map[string]any{"accountId": internal}, "amount": amount}
}

func transferOutBody(internal, ext string, amount int64) map[string]any {
	return map[string]any{"source": map[string]any{"accountId": internal}, "destination": map[string]any{"accountId": ext}, "amount": amount}
}

// fiatAccount gives the payer's customer an INTERNAL_FIAT account in USD (an
// internal account that is not a wallet: transfers from it need no
// signature), made in the store as the platform's provisioning would.
func (e *env) fiatAccount(p payer) string {
	e.t.Helper()
	now := e.clock.Now()
	a := &store.InternalAccount{ID: "InternalAccount:" + strings.TrimPrefix(p.customer.ID, "Customer:")[:24] + "f1a7f1a7f1a7",
		CustomerID: p.customer.ID, Type: "INTERNAL_FIAT", Status: "ACTIVE", Currency: "USD", CreatedAt: now, UpdatedAt: now}
	if err := e.store.Tx(context.Background(), func(tx store.Tx) error { return tx.CreateInternalAccount(context.Background(), a) }); err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}

func depositReferenceOf(t *testing.T, a wire.InternalAccount) string {
	t.Helper()
	if len(a.FundingPaymentInstructions) != 1 {
		t.Fatalf("fundingPaymentInstructions %+v", a.FundingPaymentInstructions)
	}
	ref, _ := a.FundingPaymentInstructions[0].AccountOrWalletInfo["reference"].(string)
	if _, ok := store.ParseDepositReference(ref); !ok {
		t.Fatalf("deposit reference %q", ref)
	}
	return ref
}

// TestTransferIn walks a pull for each sandbox digit pattern: the
// transaction's states and events in order, and the credit only when it
// completes.
func TestTransferIn(t *testing.T) { onBothStores(t, testTransferIn) }

func testTransferIn(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)
	p := e.newPayer("pull@example.com", 0)
	var credited int64
	cases := []struct {
		suffix, status, reason string
		wait                   time.Duration
	}{
		{"12345", "COMPLETED", "", 20 * time.Second}, // the ACH rail's settlement time
		{"12002", "FAILED", "COLLECTION_FAILED", 20 * time.Second},
		{"12003", "FAILED", "COLLECTION_FAILED", 20 * time.Second},
		{"12004", "FAILED", "COMPLIANCE_REJECTED", 20 * time.Second},
		{"12005", "FAILED", "COLLECTION_FAILED", 30 * time.Second},
	}
	for _, c := range cases {
		ext := e.destination(p, c.suffix)
		r := e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 2_500), nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		switch {
		case x.Type != "INCOMING", x.Status != "PENDING", x.ReceivedAmount.Amount != 2_500, x.ReceivedAmount.Currency.Code != "USD":
			t.Fatalf("%s: created %s", c.suffix, r.body)
		case x.Source == nil || x.Source.AccountID != ext.ID || x.Destination.AccountID != p.account.ID, x.CustomerID != p.customer.ID:
			t.Fatalf("%s: ends %s", c.suffix, r.body)
		case x.QuoteID != "", x.ReconciliationInstructions == nil, x.PaymentRail != "ACH":
			t.Fatalf("%s: %s", c.suffix, r.body)
		}
		if n := e.settle(); n != 1 {
			t.Fatalf("%s: %d steps due at once", c.suffix, n)
		}
		if got := e.transaction(x.ID); got.Status != "PROCESSING" {
			t.Fatalf("%s: %s after the first step", c.suffix, got.Status)
		}
		balances(t, e.account(p.account.ID), credited, credited)
		e.clock.Advance(c.wait - time.Second)
		if n := e.settle(); n != 0 {
			t.Fatalf("%s: settled early", c.suffix)
		}
		e.clock.Advance(time.Second)
		if n := e.settle(); n != 1 {
			t.Fatalf("%s: %d settled", c.suffix, n)
		}
		got := e.transaction(x.ID)
		if got.Status != c.status || got.FailureReason != c.reason || (c.status == "COMPLETED") != (got.SettledAt != "") {
			t.Fatalf("%s: final %+v", c.suffix, got)
		}
		if c.status == "COMPLETED" {
			credited += 2_500
		}
		balances(t, e.account(p.account.ID), credited, credited)
		e.deliver()
		last := "INCOMING_PAYMENT." + c.status + "#3"
		if want := []string{"INCOMING_PAYMENT.PENDING#1", "INCOMING_PAYMENT.PENDING#2", last}; !slices.Equal(rc.of(x.ID), want) {
			t.Fatalf("%s: events %v, want %v", c.suffix, rc.of(x.ID), want)
		}
	}
	if credited != 2_500 {
		t.Fatalf("credited %d", credited)
	}
	// The one credit came with a balance event.
	var balanceEvents int
	for _, ev := range rc.events() {
		if ev.Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" && strings.Contains(string(ev.Data), p.account.ID) {
			balanceEvents++
		}
	}
	if balanceEvents != 1 {
		t.Fatalf("%d balance events", balanceEvents)
	}
}

// TestTransferValidation: every bad field is named at once, the accounts
// are checked (owner, status, currency) and nothing is stored.
func TestTransferValidation(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("check@example.com", 10_000)
	other := e.newPayer("other@example.com", 0)
	ext := e.destination(p, "12345")
	othersExt := e.destination(other, "12345")
	eur := e.createAccount(map[string]any{"currency": "EUR", "accountInfo": map[string]any{"accountType": "EUR_ACCOUNT",
		"iban": "DE89370400440532013000", "beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Diaz",
			"birthDate": "1990-01-01", "nationality": "DE", "address": map[string]any{"line1": "Hauptstr. 1", "city": "Berlin", "postalCode": "10115", "country": "DE"}}}})
	e.verify()
	pending := e.createAccount(usdBody(p.customer.ID, "000000099345")) // not verified: PENDING
	missing := "ExternalAccount:00000000-0000-7000-8000-000000000000"
	cases := []struct {
		path   string
		body   any
		fields []string
	}{
		{"/transfer-in", map[string]any{}, []string{"amount", "destination", "source"}},
		{"/transfer-in", map[string]any{"source": map[string]any{"accountId": "x"}, "destination": map[string]any{"accountId": ext.ID}, "amount": 0},
			[]string{"amount", "destination.accountId", "source.accountId"}},
		{"/transfer-in", transferInBody(othersExt.ID, p.account.ID, 100), []string{"source.accountId"}},
		{"/transfer-in", transferInBody(missing, p.account.ID, 100), []string{"source.accountId"}},
		{"/transfer-in", transferInBody(pending.ID, p.account.ID, 100), []string{"source.accountId"}},
		{"/transfer-in", transferInBody(ext.ID, "InternalAccount:00000000-0000-7000-8000-000000000000", 100), []string{"destination.accountId"}},
		{"/transfer-out", map[string]any{}, []string{"amount", "destination", "source"}},
		{"/transfer-out", map[string]any{"source": map[string]any{"accountId": p.account.ID},
			"destination": map[string]any{"accountId": ext.ID, "paymentRail": "TELEGRAPH"}, "amount": -1,
			"remittanceInformation": strings.Repeat("x", 81), "purposeOfPayment": "BRIBE"},
			[]string{"amount", "destination.paymentRail", "purposeOfPayment", "remittanceInformation"}},
		{"/transfer-out", map[string]any{"source": map[string]any{"accountId": p.account.ID},
			"destination": map[string]any{"accountId": ext.ID, "paymentRail": "SEPA"}, "amount": 100}, []string{"destination.paymentRail"}},
		{"/transfer-out", transferOutBody(p.account.ID, eur.ID, 100), []string{"destination.accountId"}},
		{"/transfer-out", transferOutBody(p.account.ID, othersExt.ID, 100), []string{"destination.accountId"}},
	}
	for i, c := range cases {
		r := e.do("POST", c.path, c.body, nil)
		if r.status != http.StatusBadRequest {
			t.Fatalf("case %d: %d %s", i, r.status, r.body)
		}
		if got := fieldsOf(t, r); !slices.Equal(got, c.fields) {
			t.Fatalf("case %d: fields %v, want %v (%s)", i, got, c.fields, r.body)
		}
	}
	if r := e.do("POST", "/transfer-in", `{"source":{"accountId":"`+ext.ID+`"},"destination":{"accountId":"`+p.account.ID+`"},"amount":1,"extra":1}`, nil); r.status != http.StatusBadRequest {
		t.Fatalf("unknown member: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/transfer-in", "/transfer-out"} {
		if r := e.do("POST", path, transferInBody(ext.ID, p.account.ID, 1), map[string]string{"Authorization": ""}); r.status != http.StatusUnauthorized {
			t.Fatalf("%s without credential: %d", path, r.status)
		}
	}
	// More than the balance is refused on the first call already.
	r := e.do("POST", "/transfer-out", transferOutBody(p.account.ID, ext.ID, 10_001), nil)
	if r.status != http.StatusBadRequest || r.errorBody(t).Code != "INSUFFICIENT_BALANCE" {
		t.Fatalf("overdraft: %d %s", r.status, r.body)
	}
	var list wire.List[wire.Transaction]
	e.do("GET", "/transactions?accountId="+p.account.ID, nil, nil).decode(t, &list)
	if len(list.Data) != 1 { // the sandbox funding
		t.Fatalf("refusals stored transactions: %+v", list.Data)
	}
	balances(t, e.account(p.account.ID), 10_000, 10_000)
}

// TestTransferInIdempotency: the same key replays the first answer, another
// body with it is a conflict, no key makes a new transfer each time.
func TestTransferInIdempotency(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("idem@example.com", 0)
	ext := e.destination(p, "12345")
	key := map[string]string{wire.HeaderIdempotencyKey: "pull-1"}
	r1 := e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 700), key)
	e.mustStatus(r1, http.StatusCreated)
	r2 := e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 700), key)
	e.mustStatus(r2, http.StatusCreated)
	if string(r1.body) != string(r2.body) || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %s vs %s", r1.body, r2.body)
	}
	if r := e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 701), key); r.status != http.StatusConflict {
		t.Fatalf("other body, same key: %d %s", r.status, r.body)
	}
	e.mustStatus(e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 700), nil), http.StatusCreated)
	var list wire.List[wire.Transaction]
	e.do("GET", "/transactions?type=INCOMING&accountId="+p.account.ID, nil, nil).decode(t, &list)
	if len(list.Data) != 2 {
		t.Fatalf("%d transfers", len(list.Data))
	}
}

// TestTransferOutSandbox: the unsigned transfer-out of an account that is
// not a wallet, for each sandbox digit pattern: held at once, then the
// money leaves or comes back.
func TestTransferOutSandbox(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	p := e.newPayer("payout@example.com", 0)
	fiat := e.fiatAccount(p)
	e.fund(fiat, 50_000)
	available, total := int64(50_000), int64(50_000)
	cases := []struct {
		suffix, status, reason string
		wait                   time.Duration
	}{
		{"12345", "COMPLETED", "", time.Minute},
		{"12002", "FAILED", "QUOTE_EXECUTION_FAILED", time.Minute},
		{"12003", "FAILED", "ACCOUNT_INVALID", time.Minute},
		{"12004", "FAILED", "COMPLIANCE_REJECTED", time.Minute},
		{"12005", "FAILED", "QUOTE_EXECUTION_FAILED", 30 * time.Second},
	}
	for _, c := range cases {
		ext := e.destination(p, c.suffix)
		body := transferOutBody(fiat, ext.ID, 4_000)
		body["remittanceInformation"] = "Invoice 7"
		r := e.do("POST", "/transfer-out", body, nil)
		e.mustStatus(r, http.StatusCreated)
		var x wire.Transaction
		r.decode(t, &x)
		if x.Type != "OUTGOING" || x.Status != "PENDING" || x.SentAmount == nil || x.SentAmount.Amount != 4_000 ||
			x.Source.AccountID != fiat || x.Destination.AccountID != ext.ID || x.Description != "Invoice 7" {
			t.Fatalf("%s: created %s", c.suffix, r.body)
		}
		available -= 4_000
		balances(t, e.account(fiat), available, total)
		e.settle()
		e.clock.Advance(c.wait)
		if n := e.settle(); n != 1 {
			t.Fatalf("%s: %d settled", c.suffix, n)
		}
		got := e.transaction(x.ID)
		if got.Status != c.status || got.FailureReason != c.reason {
			t.Fatalf("%s: final %+v", c.suffix, got)
		}
		if c.status == "COMPLETED" {
			total -= 4_000
		} else {
			available += 4_000
		}
		balances(t, e.account(fiat), available, total)
		e.deliver()
		if want := []string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.PROCESSING#2", "OUTGOING_PAYMENT." + c.status + "#3"}; !slices.Equal(rc.of(x.ID), want) {
			t.Fatalf("%s: events %v, want %v", c.suffix, rc.of(x.ID), want)
		}
	}
}

// TestTransferOutWalletSigned: from an embedded wallet a transfer-out
// needs the owner's signature: 202 with the challenge, every bad retry
// refused without effect, the good one transfers once.
// walletTransferOut is a production service (real stamps only) with a
// wallet holding 20,000, an ACTIVE destination of its customer, and the
// body of a 6,000 transfer-out between them: what the signed transfer-out
// tests start from.
func walletTransferOut(t *testing.T, email string) (*env, payer, wire.ExternalAccount, map[string]any) {
	t.Helper()
	e := newEnv(t)
	p := e.newPayer(email, 0)
	e.deposit(p.account, 20_000)
	ext := e.destination(p, "12345")
	return e, p, ext, transferOutBody(p.account.ID, ext.ID, 6_000)
}

func TestTransferOutWalletSigned(t *testing.T) {
	e, p, ext, body := walletTransferOut(t, "signed@example.com")
	r := e.do("POST", "/transfer-out", body, nil)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	if ch.RequestID == "" || !strings.Contains(ch.PayloadToSign, "ACTIVITY_TYPE_SIGN_TRANSACTION_V2") ||
		!strings.Contains(ch.PayloadToSign, ext.ID) || !strings.Contains(ch.PayloadToSign, `"amount":6000`) {
		t.Fatalf("challenge %s", r.body)
	}
	balances(t, e.account(p.account.ID), 20_000, 20_000)
	stranger := mustKey(t)
	good := mustStamp(t, p.key, ch.PayloadToSign)
	refusals := []struct {
		name    string
		body    any
		headers map[string]string
		code    string
	}{
		{"no stamp", body, map[string]string{wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_MISSING"},
		{"no request id", body, map[string]string{wire.HeaderWalletSignature: good}, "REQUEST_ID_MISSING"},
		{"malformed", body, map[string]string{wire.HeaderWalletSignature: "not-a-stamp", wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_MALFORMED"},
		{"stranger", body, map[string]string{wire.HeaderWalletSignature: mustStamp(t, stranger, ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_INVALID"},
		{"other payload", body, map[string]string{wire.HeaderWalletSignature: mustStamp(t, p.key, ch.PayloadToSign+" "), wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_INVALID"},
		{"sandbox literal", body, map[string]string{wire.HeaderWalletSignature: wire.SandboxSignature, wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_INVALID"},
		{"other body", transferOutBody(p.account.ID, ext.ID, 6_001), map[string]string{wire.HeaderWalletSignature: good, wire.HeaderRequestID: ch.RequestID}, "WALLET_SIGNATURE_BODY_MISMATCH"},
	}
	for _, c := range refusals {
		r := e.do("POST", "/transfer-out", c.body, c.headers)
		if r.status != http.StatusUnauthorized || r.errorBody(t).Code != c.code {
			t.Fatalf("%s: %d %s, want %s", c.name, r.status, r.body, c.code)
		}
	}
	balances(t, e.account(p.account.ID), 20_000, 20_000)
	signed := map[string]string{wire.HeaderWalletSignature: good, wire.HeaderRequestID: ch.RequestID, wire.HeaderIdempotencyKey: "out-1"}
	r = e.do("POST", "/transfer-out", body, signed)
	e.mustStatus(r, http.StatusCreated)
	var x wire.Transaction
	r.decode(t, &x)
	if x.Type != "OUTGOING" || x.Status != "PENDING" || x.Source.AccountID != p.account.ID {
		t.Fatalf("transfer %s", r.body)
	}
	// The same retry with its key replays; without the key the used
	// Request-Id is refused.
	again := e.do("POST", "/transfer-out", body, signed)
	if again.status != http.StatusCreated || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %d %s", again.status, again.body)
	}
	delete(signed, wire.HeaderIdempotencyKey)
	if r := e.do("POST", "/transfer-out", body, signed); r.status != http.StatusUnauthorized {
		t.Fatalf("second use of the Request-Id: %d %s", r.status, r.body)
	}
	balances(t, e.account(p.account.ID), 14_000, 20_000)
	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	if got := e.transaction(x.ID); got.Status != "COMPLETED" {
		t.Fatalf("settled %+v", got)
	}
	balances(t, e.account(p.account.ID), 14_000, 14_000)
}

// TestTransferOutNoOverdraft: concurrent transfer-outs from one account
// take only what is there, and the books balance.
func TestTransferOutNoOverdraft(t *testing.T) { onBothStores(t, testTransferOutNoOverdraft) }

func testTransferOutNoOverdraft(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("race@example.com", 0)
	fiat := e.fiatAccount(p)
	e.fund(fiat, 10_000)
	ext := e.destination(p, "12345")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.do("POST", "/transfer-out", transferOutBody(fiat, ext.ID, 3_000), nil).status
		})
	}
	wg.Wait()
	var ok, refused int
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			ok++
		case http.StatusBadRequest:
			refused++
		default:
			t.Fatalf("status %d", s)
		}
	}
	if ok != 3 || refused != 5 {
		t.Fatalf("%d transfers, %d refused; want 3 and 5", ok, refused)
	}
	balances(t, e.account(fiat), 1_000, 10_000)
	storetest.CheckBooks(t, e.store)
}

// deposit records a bank credit to the account by its deposit reference.
func (e *env) deposit(a wire.InternalAccount, amount int64) wire.Transaction {
	e.t.Helper()
	e.deposits++
	x, err := e.svc.RecordDeposit(context.Background(), payments.DepositRequest{
		Reference: depositReferenceOf(e.t, a), Amount: &amount, Currency: a.Balance.Currency.Code,
		BankReference: fmt.Sprintf("TEST-%d", e.deposits)})
	if err != nil {
		e.t.Fatal(err)
	}
	return x
}

func codeOf(err error) string {
	var pe *payments.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestFundingInstructions: every customer account shows how to pay into it
// (configured bank details, sandbox details, or the reference alone), and
// bad configured details stop the service from starting.
func TestFundingInstructions(t *testing.T) {
	bank := map[string]map[string]any{"USD": {"accountType": "USD_ACCOUNT", "accountNumber": "123456789012",
		"routingNumber": "011000015", "bankName": "Operator Bank"}}
	configured := newEnv(t, func(c *Config) { c.DepositAccounts = bank })
	a := configured.newWallet("bank@example.com").account
	ref := depositReferenceOf(t, a)
	info := a.FundingPaymentInstructions[0].AccountOrWalletInfo
	if info["accountNumber"] != "123456789012" || info["routingNumber"] != "011000015" || info["accountType"] != "USD_ACCOUNT" ||
		!slices.Equal(toStrings(info["paymentRails"]), []string{"ACH", "WIRE", "RTP", "FEDNOW"}) ||
		!strings.Contains(a.FundingPaymentInstructions[0].InstructionsNotes, ref) {
		t.Fatalf("configured instructions %+v", a.FundingPaymentInstructions)
	}
	if again := configured.account(a.ID); depositReferenceOf(t, again) != ref {
		t.Fatal("the reference changed")
	}
	if other := configured.newWallet("bank2@example.com").account; depositReferenceOf(t, other) == ref {
		t.Fatal("two accounts share a reference")
	}

	bare := newEnv(t)
	b := bare.newWallet("bare@example.com").account
	depositReferenceOf(t, b)
	if info := b.FundingPaymentInstructions[0].AccountOrWalletInfo; len(info) != 2 || info["accountType"] != "USD_ACCOUNT" {
		t.Fatalf("reference-only instructions %+v", info)
	}

	sb := newEnv(t, sandbox)
	s := sb.newWallet("sand@example.com").account
	depositReferenceOf(t, s)
	if name, _ := s.FundingPaymentInstructions[0].AccountOrWalletInfo["bankName"].(string); !strings.Contains(name, "Sandbox") {
		t.Fatalf("sandbox instructions %+v", s.FundingPaymentInstructions)
	}

	for i, bad := range []map[string]map[string]any{
		{"XXX": bank["USD"]},
		{"EUR": bank["USD"]},
		{"USD": {"accountType": "USD_ACCOUNT", "routingNumber": "011000015"}},
		{"USD": {"accountType": "USD_ACCOUNT", "accountNumber": "1", "reference": "X"}},
		{"USD": {"accountType": "USD_ACCOUNT", "accountNumber": "1", "bankName": 7}},
	} {
		cfg := configured.cfg
		cfg.DepositAccounts = bad
		if _, err := New(context.Background(), cfg); err == nil {
			t.Errorf("case %d: bad deposit accounts accepted", i)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		for _, s := range v {
			str, _ := s.(string)
			out = append(out, str)
		}
	}
	return out
}

// TestRecordDeposit: a bank credit quoting the reference credits the
// account (production mode) with its events; refusals change nothing.
func TestRecordDeposit(t *testing.T) { onBothStores(t, testRecordDeposit) }

func testRecordDeposit(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, withWebhooks(rc))...)
	rc.attach(e)
	w := e.newWallet("deposit@example.com")
	ref := depositReferenceOf(t, w.account)
	amount := int64(12_550)
	ctx := context.Background()
	x, err := e.svc.RecordDeposit(ctx, payments.DepositRequest{Reference: strings.ToLower(ref[:4]) + "-" + ref[4:], Amount: &amount,
		Currency: "USD", SenderName: "Ana Diaz", BankReference: "FED-20261122-0001"})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case x.Type != "INCOMING", x.Status != "COMPLETED", x.SettledAt == "", x.ReceivedAmount.Amount != 12_550,
		x.Destination.AccountID != w.account.ID, !strings.Contains(x.Description, "Ana Diaz"),
		x.ReconciliationInstructions == nil || x.ReconciliationInstructions.Reference != "FED-20261122-0001":
		t.Fatalf("deposit %+v", x)
	}
	balances(t, e.account(w.account.ID), 12_550, 12_550)
	e.deliver()
	if got := rc.of(x.ID); !slices.Equal(got, []string{"INCOMING_PAYMENT.COMPLETED#1"}) {
		t.Fatalf("deposit events %v", got)
	}
	if got := rc.of(w.account.ID); !slices.Equal(got, []string{"INTERNAL_ACCOUNT.STATUS_UPDATED#1", "INTERNAL_ACCOUNT.BALANCE_UPDATED#2"}) {
		t.Fatalf("account events %v", got)
	}

	unknown := "00000000" // a well-formed reference no account has
	for _, c := range "0123456789ABCDEFGHJKMNPQRSTVWXYZ" {
		if r, ok := store.ParseDepositReference(unknown + string(c)); ok {
			unknown = r
			break
		}
	}
	one := int64(1)
	refusals := []struct {
		name string
		req  payments.DepositRequest
		code string
	}{
		{"unknown reference", payments.DepositRequest{Reference: unknown, Amount: &one, Currency: "USD", BankReference: "B-1"}, "REFERENCE_NOT_FOUND"},
		{"wrong currency", payments.DepositRequest{Reference: ref, Amount: &one, Currency: "EUR", BankReference: "B-2"}, payments.CodeInvalidInput},
		{"mistyped reference", payments.DepositRequest{Reference: ref[:8] + "?", Amount: &one, Currency: "USD", BankReference: "B-3"}, payments.CodeInvalidInput},
		{"no amount", payments.DepositRequest{Reference: ref, Currency: "USD", BankReference: "B-4"}, payments.CodeInvalidInput},
		{"no bank reference", payments.DepositRequest{Reference: ref, Amount: &one, Currency: "USD"}, payments.CodeInvalidInput},
		{"same bank credit", payments.DepositRequest{Reference: ref, Amount: &one, Currency: "USD", BankReference: "FED-20261122-0001"}, payments.CodeConflict},
		// The same credit written another way is still the same credit.
		{"same bank credit, other spelling", payments.DepositRequest{Reference: ref, Amount: &one, Currency: "USD", BankReference: " fed-20261122-0001 "}, payments.CodeConflict},
	}
	for _, c := range refusals {
		if _, err := e.svc.RecordDeposit(ctx, c.req); codeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	var pe *payments.Error
	_, err = e.svc.RecordDeposit(ctx, payments.DepositRequest{Reference: "", Amount: new(int64(0)), Currency: "usd", SenderName: "a\nb"})
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	var fields []string
	for _, f := range pe.Details["errors"].([]wire.FieldError) {
		fields = append(fields, f.Field)
	}
	if !slices.Equal(fields, []string{"amount", "bankReference", "currency", "reference", "senderName"}) {
		t.Fatalf("fields %v", fields)
	}
	balances(t, e.account(w.account.ID), 12_550, 12_550)
}

// TestProductionWalletFundedAndPays: in production mode a wallet funded by
// a recorded deposit, and another by a transfer-in the worker settles, each
// pay a quote executed with a real stamp, and the payouts settle.
func TestProductionWalletFundedAndPays(t *testing.T) {
	e := newEnv(t)
	if e.svc.Mode() != ModeProduction {
		t.Fatal("not production")
	}
	if r := e.do("POST", "/sandbox/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/fund", map[string]any{"amount": 1}, nil); r.status != http.StatusForbidden {
		t.Fatalf("sandbox funding in production: %d", r.status)
	}
	byDeposit := e.newPayer("deposit-payer@example.com", 0)
	e.deposit(byDeposit.account, 30_000)

	byPull := e.newPayer("pull-payer@example.com", 0)
	source := e.destination(byPull, "12002") // production: digits choose nothing
	r := e.do("POST", "/transfer-in", transferInBody(source.ID, byPull.account.ID, 30_000), nil)
	e.mustStatus(r, http.StatusCreated)
	var pull wire.Transaction
	r.decode(t, &pull)
	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	if got := e.transaction(pull.ID); got.Status != "COMPLETED" {
		t.Fatalf("pull %+v", got)
	}

	for _, p := range []payer{byDeposit, byPull} {
		balances(t, e.account(p.account.ID), 30_000, 30_000)
		dest := e.destination(p, "12345")
		q := e.quote(quoteBody(p, dest.ID, "SENDING", 10_000))
		r := e.execute(q, mustStamp(t, p.key, payloadOf(t, q)))
		e.mustStatus(r, http.StatusOK)
		balances(t, e.account(p.account.ID), 20_000, 30_000)
		e.clock.Advance(time.Minute)
		e.settle()
		if x := e.transaction(q.TransactionID); x.Status != "COMPLETED" {
			t.Fatalf("payout %+v", x)
		}
		balances(t, e.account(p.account.ID), 20_000, 20_000)
	}
}

// TestOneStampCompletesOneChallenge: two first calls with the same body
// (the clock stopped, so the same millisecond) get different payloads, and
// the owner's stamp over one of them completes that one only. Before, the
// payloads were equal and one signature moved the money twice.
func TestOneStampCompletesOneChallenge(t *testing.T) {
	e, p, _, body := walletTransferOut(t, "once@example.com")
	var first, second wire.SignedRequestChallenge
	e.do("POST", "/transfer-out", body, nil).decode(t, &first)
	e.do("POST", "/transfer-out", body, nil).decode(t, &second)
	if first.PayloadToSign == second.PayloadToSign {
		t.Fatalf("two challenges share the payload %s", first.PayloadToSign)
	}
	stamp := mustStamp(t, p.key, first.PayloadToSign)
	r := e.do("POST", "/transfer-out", body, map[string]string{wire.HeaderWalletSignature: stamp, wire.HeaderRequestID: first.RequestID})
	e.mustStatus(r, http.StatusCreated)
	r = e.do("POST", "/transfer-out", body, map[string]string{wire.HeaderWalletSignature: stamp, wire.HeaderRequestID: second.RequestID})
	if r.status != http.StatusUnauthorized || r.errorBody(t).Code != "WALLET_SIGNATURE_INVALID" {
		t.Fatalf("the first stamp on the second challenge: %d %s", r.status, r.body)
	}
	balances(t, e.account(p.account.ID), 14_000, 20_000)
}

// TestDeleteWaitsForAPendingTransferIn: a transfer-in that is still
// PENDING is money on its way in, so the customer cannot be deleted; before,
// the delete went through and the worker then credited the CLOSED account.
// Should an account close under a pull anyway, the pull fails and nothing
// is credited.
func TestDeleteWaitsForAPendingTransferIn(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("pending-in@example.com", 0)
	ext := e.destination(p, "12345")
	var x wire.Transaction
	r := e.do("POST", "/transfer-in", transferInBody(ext.ID, p.account.ID, 5_000), nil)
	e.mustStatus(r, http.StatusCreated)
	r.decode(t, &x)
	r = e.do("DELETE", "/customers/"+p.customer.ID, nil, nil)
	if r.status != http.StatusConflict || r.errorBody(t).Details["paymentsInFlight"] != float64(1) {
		t.Fatalf("delete with a pending transfer-in: %d %s", r.status, r.body)
	}
	// Closed under it anyway (as an operator could): the pull fails.
	if err := e.store.Tx(t.Context(), func(tx store.Tx) error {
		return tx.SetInternalAccountStatus(t.Context(), p.account.ID, "CLOSED", e.clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	e.clock.Advance(time.Minute)
	e.settle()
	if got := e.transaction(x.ID); got.Status != "FAILED" {
		t.Fatalf("pull into a closed account: %+v", got)
	}
	balances(t, e.account(p.account.ID), 0, 0)
}

// TestRefusedSignatureDoesNotTrapTheKey: a retry refused for its stamp is
// not stored under its Idempotency-Key, so the same key with the right
// stamp succeeds. Before, the 401 was replayed for the key's whole life.
func TestRefusedSignatureDoesNotTrapTheKey(t *testing.T) {
	e, p, _, body := walletTransferOut(t, "trap@example.com")
	var ch wire.SignedRequestChallenge
	e.do("POST", "/transfer-out", body, map[string]string{wire.HeaderIdempotencyKey: "K"}).decode(t, &ch)
	r := e.do("POST", "/transfer-out", body, map[string]string{wire.HeaderIdempotencyKey: "K",
		wire.HeaderWalletSignature: "not-a-stamp", wire.HeaderRequestID: ch.RequestID})
	if r.status != http.StatusUnauthorized {
		t.Fatalf("bad stamp: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/transfer-out", body, map[string]string{wire.HeaderIdempotencyKey: "K",
		wire.HeaderWalletSignature: mustStamp(t, p.key, ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID})
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("good stamp after a bad one, same key: %d %s", r.status, r.body)
	}
}

// TestOneStuckTransactionDoesNotStopSettlement: a transaction whose step
// fails (here its hold is larger than what the account holds) is reported,
// and the others due with it still settle. Before, the first failure ended
// the pass, and the same row came first at every pass: nobody settled.
func TestOneStuckTransactionDoesNotStopSettlement(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("stuck@example.com", 0)
	e.deposit(p.account, 20_000)
	ext := e.destination(p, "12345")
	var good wire.Transaction
	r := e.do("POST", "/transfer-out", transferOutBody(p.account.ID, ext.ID, 6_000), nil)
	if r.status == http.StatusAccepted { // a wallet: sign the challenge
		var ch wire.SignedRequestChallenge
		r.decode(t, &ch)
		r = e.do("POST", "/transfer-out", transferOutBody(p.account.ID, ext.ID, 6_000), map[string]string{
			wire.HeaderWalletSignature: wire.SandboxSignature, wire.HeaderRequestID: ch.RequestID})
	}
	e.mustStatus(r, http.StatusCreated)
	r.decode(t, &good)
	// A second transaction, due first, that can never settle: it claims a
	// hold the account does not have.
	err := e.store.Tx(t.Context(), func(tx store.Tx) error {
		x, err := tx.GetTransaction(t.Context(), good.ID)
		if err != nil {
			return err
		}
		bad := *x
		bad.ID, bad.Status, bad.SentAmount = ids.New("Transaction"), "PROCESSING", 1_000_000
		bad.NextStepAt = e.clock.Now().Add(-time.Hour)
		return tx.CreateTransaction(t.Context(), &bad)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.clock.Advance(time.Minute)
		if _, err := e.svc.SettleDue(t.Context()); err == nil {
			t.Fatal("the stuck transaction's failure was not reported")
		}
	}
	if got := e.transaction(good.ID); got.Status != "COMPLETED" {
		t.Fatalf("the good transfer behind the stuck one: %s", got.Status)
	}
}

// TestSignedRetryRacingItsKey: a client that sends a signed retry again
// with its Idempotency-Key while the first attempt still runs gets the
// transfer's answer on every attempt. The attempts that lost the race
// used to be answered 401 "this Request-Id was already used" (not stored
// under the key) although the transfer was made. Seen while writing the
// soak (internal/soak), whose client retries a keyed request, and treats a
// 401 of a signed retry as possibly such a loss.
func TestSignedRetryRacingItsKey(t *testing.T) { onBothStores(t, testSignedRetryRacingItsKey) }

func testSignedRetryRacingItsKey(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	p := e.newPayer("racing-retry@example.com", 0)
	e.deposit(p.account, 20_000)
	ext := e.destination(p, "12345")
	for round := range 3 {
		body := transferOutBody(p.account.ID, ext.ID, 1_000)
		r := e.do("POST", "/transfer-out", body, nil)
		e.mustStatus(r, http.StatusAccepted)
		var ch wire.SignedRequestChallenge
		r.decode(t, &ch)
		signed := map[string]string{wire.HeaderWalletSignature: mustStamp(t, p.key, ch.PayloadToSign),
			wire.HeaderRequestID: ch.RequestID, wire.HeaderIdempotencyKey: fmt.Sprintf("racing-%d", round)}
		answers := make([]response, 6)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { answers[i] = e.do("POST", "/transfer-out", body, signed) })
		}
		wg.Wait()
		for _, a := range answers {
			if a.status != http.StatusCreated || string(a.body) != string(answers[0].body) {
				t.Fatalf("round %d: attempts of one key answered %d %s and %d %s", round, answers[0].status, answers[0].body, a.status, a.body)
			}
		}
	}
	balances(t, e.account(p.account.ID), 17_000, 20_000)
}
