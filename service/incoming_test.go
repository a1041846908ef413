package service

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

func umaReceive(customerID, sender string, amount int64) map[string]any {
	return map[string]any{"senderUmaAddress": sender, "customerId": customerID, "receivingCurrencyCode": "USD", "receivingCurrencyAmount": amount}
}

func (e *env) umaIn(body map[string]any) wire.Transaction {
	e.t.Helper()
	r := e.do("POST", "/sandbox/uma/receive", body, nil)
	e.mustStatus(r, http.StatusOK)
	var x wire.Transaction
	r.decode(e.t, &x)
	return x
}

func TestSandboxUmaReceiveRefusals(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("uma-bad@example.com", 0)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
		fields []string
	}{
		{"empty", map[string]any{}, 400, "INVALID_INPUT", []string{"senderUmaAddress", "receiverUmaAddress", "customerId", "receivingCurrencyCode", "receivingCurrencyAmount"}},
		{"malformed", map[string]any{"senderUmaAddress": "bob", "receiverUmaAddress": "x", "customerId": "Customer:nope",
			"receivingCurrencyCode": "ZZZ", "receivingCurrencyAmount": 0}, 400, "INVALID_INPUT",
			[]string{"senderUmaAddress", "receiverUmaAddress", "customerId", "receivingCurrencyCode", "receivingCurrencyAmount"}},
		{"unknown sender", umaReceive(p.customer.ID, "$alice@example.com", 5), 404, "UMA_NOT_FOUND", nil},
		{"unknown receiver", map[string]any{"senderUmaAddress": "$success.usd@sandbox.uma.money", "receiverUmaAddress": "$nobody@example.com",
			"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 5}, 404, "UMA_NOT_FOUND", nil},
		{"unknown customer", umaReceive("Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", "$success.usd@sandbox.uma.money", 5), 404, "USER_NOT_FOUND", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/sandbox/uma/receive", tc.body, nil)
			e.mustStatus(r, tc.status)
			if got := r.errorBody(t).Code; got != tc.code {
				t.Fatalf("code %s, want %s", got, tc.code)
			}
			for _, f := range tc.fields {
				if !strings.Contains(string(r.body), `"`+f+`"`) {
					t.Errorf("%s not named: %s", f, r.body)
				}
			}
		})
	}
	prod := newEnv(t)
	r := prod.do("POST", "/sandbox/uma/receive", umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 5), nil)
	prod.mustStatus(r, http.StatusForbidden)
}

func TestSandboxUmaReceiveOutcomesAndApproval(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("uma-in@example.com", 0)
	before := e.account(p.account.ID).Balance.Amount

	// $success: PENDING, then approved and credited.
	x := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 1_500))
	if x.Status != "PENDING" || x.Type != "INCOMING" || x.Direction != "CREDIT" || x.Source == nil || x.Source.UmaAddress != "$success.usd@sandbox.uma.money" {
		t.Fatalf("received %+v", x)
	}
	if got := e.account(p.account.ID).Balance.Amount; got != before {
		t.Fatalf("credited before approval: %d", got)
	}
	r := e.do("POST", "/transactions/"+x.ID+"/approve", nil, nil)
	e.mustStatus(r, http.StatusOK)
	if got := e.transaction(x.ID); got.Status != "COMPLETED" || got.SettledAt == "" {
		t.Fatalf("approved: %+v", got)
	}
	if got := e.account(p.account.ID).Balance.Amount; got != before+1_500 {
		t.Fatalf("balance %d, want %d", got, before+1_500)
	}
	// A second decision is refused.
	for _, op := range []string{"approve", "reject"} {
		r := e.do("POST", "/transactions/"+x.ID+"/"+op, nil, nil)
		e.mustStatus(r, http.StatusConflict)
		if r.errorBody(t).Code != "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL" {
			t.Fatalf("%s twice: %s", op, r.body)
		}
	}

	// $fail.compliance: FAILED at once.
	f := e.umaIn(umaReceive(p.customer.ID, "$fail.compliance.usd@sandbox.uma.money", 700))
	if f.Status != "FAILED" || f.FailureReason != "COMPLIANCE_REJECTED" {
		t.Fatalf("compliance: %+v", f)
	}
	e.mustStatus(e.do("POST", "/transactions/"+f.ID+"/approve", nil, nil), http.StatusConflict)

	// Rejected: REJECTED, nothing credited; a long reason is refused.
	rj := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 900))
	e.mustStatus(e.do("POST", "/transactions/"+rj.ID+"/reject", map[string]any{"reason": strings.Repeat("x", 256)}, nil), http.StatusBadRequest)
	e.mustStatus(e.do("POST", "/transactions/"+rj.ID+"/reject", map[string]any{"reason": "NO"}, nil), http.StatusOK)
	if got := e.transaction(rj.ID); got.Status != "REJECTED" {
		t.Fatalf("rejected: %+v", got)
	}

	// $pending.long: approved, PROCESSING, completed by the worker later.
	l := e.umaIn(umaReceive(p.customer.ID, "$pending.long.usd@sandbox.uma.money", 300))
	e.mustStatus(e.do("POST", "/transactions/"+l.ID+"/approve", nil, nil), http.StatusOK)
	if got := e.transaction(l.ID); got.Status != "PROCESSING" {
		t.Fatalf("long: %+v", got)
	}
	e.clock.Advance(e.cfg.LongPaymentDelay)
	e.settle()
	if got := e.transaction(l.ID); got.Status != "COMPLETED" {
		t.Fatalf("long settled: %+v", got)
	}

	// Undecided: timed out by the worker, then not approvable.
	u := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 100))
	e.clock.Advance(e.cfg.IncomingApprovalWindow)
	e.mustStatus(e.do("POST", "/transactions/"+u.ID+"/approve", nil, nil), http.StatusConflict)
	e.settle()
	if got := e.transaction(u.ID); got.Status != "FAILED" || got.FailureReason != "PAYMENT_APPROVAL_TIMED_OUT" {
		t.Fatalf("timed out: %+v", got)
	}
	if got := e.account(p.account.ID).Balance.Amount; got != before+1_500+300 {
		t.Fatalf("balance %d, want %d", got, before+1_800)
	}
	// Not an UMA payment: 409; unknown: 404.
	e.mustStatus(e.do("POST", "/transactions/Transaction:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b/approve", nil, nil), http.StatusNotFound)
}

func TestApproveRejectRace(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { approveRejectRace(t, newEnv(t, sandbox)) })
	t.Run("postgres", func(t *testing.T) { approveRejectRace(t, newEnv(t, sandbox, onPostgres(t))) })
}

// approveRejectRace: of racing approvals and rejections exactly one wins,
// and the balance and the books agree with the winner.
func approveRejectRace(t *testing.T, e *env) {
	p := e.newPayer("uma-race@example.com", 0)
	before := e.account(p.account.ID).Balance.Amount
	x := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 1_000))
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := "approve"
			if i%2 == 1 {
				op = "reject"
			}
			statuses[i] = e.do("POST", "/transactions/"+x.ID+"/"+op, nil, nil).status
		}()
	}
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("status %d", s)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions won, want 1: %v", won, statuses)
	}
	got := e.transaction(x.ID)
	want := before
	if got.Status == "COMPLETED" {
		want += 1_000
	}
	if b := e.account(p.account.ID).Balance.Amount; b != want {
		t.Fatalf("balance %d, want %d (%s)", b, want, got.Status)
	}
	storetest.CheckBooks(t, e.store)
}

func TestIncomingUmaEvents(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	p := e.newPayer("uma-events@example.com", 0)
	// By the receiver's UMA address this time.
	x := e.umaIn(map[string]any{"senderUmaAddress": "$success.usd@sandbox.uma.money", "receiverUmaAddress": p.customer.UmaAddress,
		"receivingCurrencyCode": "USD", "receivingCurrencyAmount": 250})
	if x.CustomerID != p.customer.ID || x.Destination.AccountID != p.account.ID {
		t.Fatalf("received %+v", x)
	}
	e.mustStatus(e.do("POST", "/transactions/"+x.ID+"/approve", nil, nil), http.StatusOK)
	rj := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 50))
	e.mustStatus(e.do("POST", "/transactions/"+rj.ID+"/reject", nil, nil), http.StatusOK)
	f := e.umaIn(umaReceive(p.customer.ID, "$fail.compliance.usd@sandbox.uma.money", 50))
	e.deliver()
	strip := func(evs []string) []string {
		for i, ev := range evs {
			evs[i], _, _ = strings.Cut(ev, "#")
		}
		return evs
	}
	for id, want := range map[string]string{
		x.ID:  "INCOMING_PAYMENT.PENDING INCOMING_PAYMENT.COMPLETED",
		rj.ID: "INCOMING_PAYMENT.PENDING INCOMING_PAYMENT.FAILED",
		f.ID:  "INCOMING_PAYMENT.FAILED",
	} {
		if got := strings.Join(strip(rc.of(id)), " "); got != want {
			t.Errorf("%s: events %q, want %q", id, got, want)
		}
	}
	balance := false
	for _, ev := range rc.events() {
		if ev.Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" && strings.Contains(string(ev.Data), p.account.ID) {
			balance = true
		}
	}
	if !balance {
		t.Error("no balance event for the approved payment")
	}
}

func TestLookupUma(t *testing.T) {
	e := newEnv(t, sandbox)
	sender := e.newPayer("uma-sender@example.com", 0)
	recv := e.newPayer("uma-recv@example.com", 0)
	path := func(addr, query string) string { return "/receiver/uma/" + url.PathEscape(addr) + query }

	r := e.do("GET", path(recv.customer.UmaAddress, "?customerId="+sender.customer.ID), nil, nil)
	e.mustStatus(r, http.StatusOK)
	var got struct {
		ReceiverUmaAddress  string
		SupportedCurrencies []wire.CurrencyPreference
		LookupID            string
	}
	r.decode(t, &got)
	if got.ReceiverUmaAddress != recv.customer.UmaAddress || len(got.SupportedCurrencies) == 0 ||
		got.SupportedCurrencies[0].Currency.Code != "USD" || got.LookupID == "" {
		t.Fatalf("lookup %s", r.body)
	}
	for _, tc := range []struct {
		name, path string
		status     int
		code       string
		fields     []string
	}{
		{"no customer", path("bad", ""), 400, "INVALID_INPUT", []string{"customerId", "receiverUmaAddress"}},
		{"bad sender", path(recv.customer.UmaAddress, "?customerId="+sender.customer.ID+"&senderUmaAddress=x"), 400, "INVALID_INPUT", []string{"senderUmaAddress"}},
		{"not the sender's", path(recv.customer.UmaAddress, "?customerId="+sender.customer.ID+"&senderUmaAddress=%24else%40example.com"), 400, "INVALID_INPUT", []string{"senderUmaAddress"}},
		{"elsewhere", path("$bob@elsewhere.example", "?customerId="+sender.customer.ID), 404, "UMA_NOT_FOUND", nil},
		{"unknown customer", path(recv.customer.UmaAddress, "?customerId=Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"), 404, "USER_NOT_FOUND", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.path, nil, nil)
			e.mustStatus(r, tc.status)
			if c := r.errorBody(t).Code; c != tc.code {
				t.Fatalf("code %s, want %s: %s", c, tc.code, r.body)
			}
			for _, f := range tc.fields {
				if !strings.Contains(string(r.body), `"`+f+`"`) {
					t.Errorf("%s not named: %s", f, r.body)
				}
			}
		})
	}
}

// An incoming UMA payment goes to the customer's defaultUmaDepositAccount
// when it is ACTIVE and in the receiving currency: it completes there and
// no internal balance moves.
func TestSandboxUmaReceiveToDefaultDepositAccount(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("uma-default@example.com", 0)
	body := usdBody(p.customer.ID, "000000000001")
	body["defaultUmaDepositAccount"] = true
	ea := e.createAccount(body)
	e.verify()
	if got := e.getAccount(ea.ID); got.Status != "ACTIVE" {
		t.Fatalf("external account %s", got.Status)
	}
	before := e.account(p.account.ID).Balance.Amount
	x := e.umaIn(umaReceive(p.customer.ID, "$success.usd@sandbox.uma.money", 400))
	if x.Destination.AccountID != ea.ID {
		t.Fatalf("destination %s, want the default UMA deposit account %s", x.Destination.AccountID, ea.ID)
	}
	e.mustStatus(e.do("POST", "/transactions/"+x.ID+"/approve", nil, nil), http.StatusOK)
	if got := e.transaction(x.ID); got.Status != "COMPLETED" {
		t.Fatalf("approved: %+v", got)
	}
	if got := e.account(p.account.ID).Balance.Amount; got != before {
		t.Fatalf("internal balance moved: %d, want %d", got, before)
	}
	// Another currency still goes to an internal account or is refused.
	r := e.do("POST", "/sandbox/uma/receive", map[string]any{"senderUmaAddress": "$success.usd@sandbox.uma.money",
		"customerId": p.customer.ID, "receivingCurrencyCode": "EUR", "receivingCurrencyAmount": 5}, nil)
	e.mustStatus(r, http.StatusBadRequest)
	if !strings.Contains(string(r.body), `"receivingCurrencyCode"`) {
		t.Fatalf("not named: %s", r.body)
	}
}
