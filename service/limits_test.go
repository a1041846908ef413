package service

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// A wallet's personal limits (payments/limits.go): changing them, and the
// payments they refuse.

func limitsPath(p payer) string { return "/internal-accounts/" + p.account.ID + "/limits" }

// setLimits runs both legs of PATCH .../limits, the retry signed with key
// (nil: the sandbox literal), and answers the limits and the raw body.
func (e *env) setLimits(p payer, key *walletcrypto.PrivateKey, body map[string]any) (wire.WalletLimits, string) {
	e.t.Helper()
	ch := e.firstLeg("PATCH", limitsPath(p), body)
	if !strings.Contains(ch.PayloadToSign, `"ACTIVITY_TYPE_UPDATE_WALLET_LIMITS"`) {
		e.t.Fatalf("payloadToSign %s", ch.PayloadToSign)
	}
	e.confirmHeld(ch, p.email)
	stamp := wire.SandboxSignature
	if key != nil {
		stamp = mustStamp(e.t, key, ch.PayloadToSign)
	}
	r := e.do("PATCH", limitsPath(p), body, signed(stamp, ch.RequestID))
	e.mustStatus(r, http.StatusOK)
	var l wire.WalletLimits
	r.decode(e.t, &l)
	return l, string(r.body)
}

func (e *env) limits(p payer) wire.WalletLimits {
	e.t.Helper()
	r := e.do("GET", limitsPath(p), nil, nil)
	e.mustStatus(r, http.StatusOK)
	var l wire.WalletLimits
	r.decode(e.t, &l)
	return l
}

// amountIs reports whether a limit is the amount (nil: no limit).
func amountIs(got *int64, want *int64) bool {
	return (got == nil && want == nil) || (got != nil && want != nil && *got == *want)
}

// wantLimits fails unless l holds the limits given (nil: no limit).
func wantLimits(t *testing.T, what string, l wire.WalletLimits, perPayment, daily *int64, coolingOff int) {
	t.Helper()
	if !amountIs(l.PerPayment, perPayment) || !amountIs(l.Daily, daily) || l.NewRecipientCoolingOffHours != coolingOff {
		b, _ := json.Marshal(l)
		t.Fatalf("%s: limits %s", what, b)
	}
}

func TestWalletLimitsChange(t *testing.T) { onBothStores(t, testWalletLimitsChange) }

// testWalletLimitsChange: a wallet starts without limits; a stricter value
// applies at once, a laxer one waits 24 h as pending (only the members it
// changes present, a removal as null); a second loosening restarts the
// wait; asking for the value that applies cancels its pending change; the
// pending change applies exactly at effectiveAt, read lazily; the answer of
// every retry is what GET then reads.
func testWalletLimitsChange(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	p := e.newPayer("limits@example.com", 0)
	t0 := e.clock.Now()

	l := e.limits(p)
	if l.AccountID != p.account.ID || l.Currency != "USD" || l.Pending != nil {
		t.Fatalf("initial limits %+v", l)
	}
	wantLimits(t, "initial", l, nil, nil, 0)

	l, _ = e.setLimits(p, p.key, map[string]any{"perPayment": 50_000, "daily": 100_000, "newRecipientCoolingOffHours": 24})
	wantLimits(t, "tightened", l, new(int64(50_000)), new(int64(100_000)), 24)
	if l.Pending != nil || l.UpdatedAt != timestamp(t0) {
		t.Fatalf("tightened: %+v", l)
	}

	// One member looser, one stricter: the stricter applies, the looser
	// waits 24 h and only it is in pending.
	e.clock.Advance(time.Hour)
	e.login(p.wallet, p.key) // the 15-minute session has ended
	l, raw := e.setLimits(p, p.key, map[string]any{"perPayment": 80_000, "daily": 60_000})
	wantLimits(t, "mixed", l, new(int64(50_000)), new(int64(60_000)), 24)
	if l.Pending == nil || !l.Pending.PerPayment.Set || *l.Pending.PerPayment.Amount != 80_000 || l.Pending.Daily.Set ||
		l.Pending.NewRecipientCoolingOffHours != nil || l.Pending.EffectiveAt != timestamp(t0.Add(25*time.Hour)) {
		t.Fatalf("mixed: pending %s", raw)
	}
	if !strings.Contains(raw, `"pending":{"perPayment":80000,"effectiveAt":`) {
		t.Fatalf("pending on the wire: %s", raw)
	}
	if got := e.limits(p); got.Pending == nil || got.Pending.EffectiveAt != l.Pending.EffectiveAt || !amountIs(got.Daily, l.Daily) {
		t.Fatalf("GET after the change: %+v", got)
	}

	// A second loosening restarts the wait of the whole pending change.
	e.clock.Advance(time.Hour)
	e.login(p.wallet, p.key)
	l, _ = e.setLimits(p, p.key, map[string]any{"newRecipientCoolingOffHours": 0})
	if l.Pending == nil || !l.Pending.PerPayment.Set || l.Pending.NewRecipientCoolingOffHours == nil ||
		*l.Pending.NewRecipientCoolingOffHours != 0 || l.Pending.EffectiveAt != timestamp(t0.Add(26*time.Hour)) {
		t.Fatalf("second loosening: %+v", l.Pending)
	}
	wantLimits(t, "second loosening", l, new(int64(50_000)), new(int64(60_000)), 24)

	// Asking for the limit that applies cancels its pending change; the
	// other pending member stays, with its time.
	l, raw = e.setLimits(p, p.key, map[string]any{"perPayment": 50_000})
	if l.Pending == nil || l.Pending.PerPayment.Set || l.Pending.NewRecipientCoolingOffHours == nil ||
		l.Pending.EffectiveAt != timestamp(t0.Add(26*time.Hour)) || strings.Contains(raw, `"pending":{"perPayment"`) {
		t.Fatalf("cancelled: %s", raw)
	}

	// Not a microsecond early; applied at effectiveAt, with it as updatedAt.
	e.clock.Advance(24*time.Hour - time.Microsecond)
	if got := e.limits(p); got.Pending == nil || got.NewRecipientCoolingOffHours != 24 {
		t.Fatalf("before effectiveAt: %+v", got)
	}
	e.clock.Advance(time.Microsecond)
	l = e.limits(p)
	wantLimits(t, "at effectiveAt", l, new(int64(50_000)), new(int64(60_000)), 0)
	if l.Pending != nil || l.UpdatedAt != timestamp(t0.Add(26*time.Hour)) {
		t.Fatalf("at effectiveAt: %+v", l)
	}

	// Removing a limit is a loosening: pending as null, then gone.
	e.login(p.wallet, p.key)
	l, raw = e.setLimits(p, p.key, map[string]any{"daily": nil})
	if l.Pending == nil || !l.Pending.Daily.Set || l.Pending.Daily.Amount != nil || !strings.Contains(raw, `"pending":{"daily":null,"effectiveAt":`) {
		t.Fatalf("removal: %s", raw)
	}
	wantLimits(t, "removal asked", l, new(int64(50_000)), new(int64(60_000)), 0)
	// A lower daily limit applies at once and replaces the pending
	// removal; a cooling-off where there was none is stricter too.
	l, _ = e.setLimits(p, p.key, map[string]any{"daily": 55_000, "newRecipientCoolingOffHours": 1})
	if l.Pending != nil {
		t.Fatalf("pending after a lower daily limit: %+v", l.Pending)
	}
	e.clock.Advance(25 * time.Hour)
	wantLimits(t, "a day later", e.limits(p), new(int64(50_000)), new(int64(55_000)), 1)
}

// TestWalletLimitsHigherIsPending: a higher daily limit waits 24 hours,
// then applies (in sandbox mode, retries signed with the literal).
func TestWalletLimitsHigherIsPending(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("higher@example.com", 0)
	e.setLimits(p, nil, map[string]any{"daily": 60_000})
	l, _ := e.setLimits(p, nil, map[string]any{"daily": 70_000})
	if l.Pending == nil || !l.Pending.Daily.Set || *l.Pending.Daily.Amount != 70_000 || *l.Daily != 60_000 {
		t.Fatalf("higher daily: %+v", l)
	}
	e.clock.Advance(24 * time.Hour)
	if l := e.limits(p); l.Pending != nil || *l.Daily != 70_000 {
		t.Fatalf("a day later: %+v", l)
	}
}

// TestWalletLimitsRefusals: every bad member is named at once and no
// challenge is issued; only an embedded wallet has limits; the retry is a
// signed retry like any other (its 401s), and a refused retry changes
// nothing.
func TestWalletLimitsRefusals(t *testing.T) {
	e := newEnv(t)
	p := e.newPayer("refuse-limits@example.com", 0)
	cases := []struct {
		name   string
		body   string
		fields []string
	}{
		{"empty", `{}`, []string{"perPayment"}},
		{"every member wrong", `{"perPayment":0,"daily":-5,"newRecipientCoolingOffHours":721,"weekly":1}`,
			[]string{"daily", "newRecipientCoolingOffHours", "perPayment", "weekly"}},
		{"text and fractions", `{"perPayment":"100","daily":1.5,"newRecipientCoolingOffHours":2.5}`,
			[]string{"daily", "newRecipientCoolingOffHours", "perPayment"}},
		{"too large", `{"perPayment":9000000000000001}`, []string{"perPayment"}},
		{"cooling-off cannot be null", `{"newRecipientCoolingOffHours":null}`, []string{"newRecipientCoolingOffHours"}},
	}
	for _, c := range cases {
		r := e.do("PATCH", limitsPath(p), json.RawMessage(c.body), nil)
		if r.status != http.StatusBadRequest || strings.Join(fieldsOf(t, r), ",") != strings.Join(c.fields, ",") {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	if r := e.do("PATCH", limitsPath(p), json.RawMessage(`[1]`), nil); r.status != http.StatusBadRequest {
		t.Errorf("an array: %d %s", r.status, r.body)
	}
	fiat := payer{wallet: p.wallet}
	fiat.account.ID = e.fiatAccount(p)
	if r := e.do("GET", limitsPath(fiat), nil, nil); r.status != http.StatusBadRequest {
		t.Errorf("limits of an INTERNAL_FIAT account: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/limits", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("limits of no account: %d %s", r.status, r.body)
	}

	refusals := append(commonRefusals(t, p.key, mustKey(t)), refusal{
		name: "another value on the retry",
		headers: func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, p.key, ch.PayloadToSign), ch.RequestID)
		},
		body: map[string]any{"perPayment": 2},
		code: "WALLET_SIGNATURE_BODY_MISMATCH",
	})
	e.checkRefusals("PATCH", limitsPath(p), map[string]any{"perPayment": 1}, refusals)
	if l := e.limits(p); l.PerPayment != nil || l.Pending != nil {
		t.Fatalf("refused retries changed the limits: %+v", l)
	}
}

// txCount is how many transactions the customer has.
func (e *env) txCount(p payer) int {
	e.t.Helper()
	r := e.do("GET", "/transactions?customerId="+p.customer.ID+"&limit=100", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list wire.List[wire.Transaction]
	r.decode(e.t, &list)
	return len(list.Data)
}

// refused fails unless r is the refusal status and code, and answers its
// body.
func refused(t *testing.T, what string, r response, status int, code string) wire.Error {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: %d %s, want %d %s", what, r.status, r.body, status, code)
	}
	b := r.errorBody(t)
	if b.Code != code {
		t.Fatalf("%s: %s, want %s", what, r.body, code)
	}
	return b
}

// transferOutLegs runs a transfer-out from the wallet: the first leg, and
// when it answers a challenge, the retry with the sandbox literal.
func (e *env) transferOutLegs(body map[string]any) response {
	e.t.Helper()
	r := e.do("POST", "/transfer-out", body, nil)
	if r.status != http.StatusAccepted {
		return r
	}
	var ch wire.SignedRequestChallenge
	r.decode(e.t, &ch)
	return e.do("POST", "/transfer-out", body, signed(wire.SandboxSignature, ch.RequestID))
}

// detail is a number of an error's details.
func detail(t *testing.T, b wire.Error, name string) float64 {
	t.Helper()
	v, ok := b.Details[name].(float64)
	if !ok {
		t.Fatalf("details.%s missing in %+v", name, b.Details)
	}
	return v
}

func TestLimitPerPayment(t *testing.T) { onBothStores(t, testLimitPerPayment) }

// testLimitPerPayment: above perPayment a quote, an execute and a
// transfer-out (either leg) from the wallet are 403 LIMIT_EXCEEDED with
// the amounts in details and in the message in dollars; nothing is stored
// or held; at the limit they pass.
func testLimitPerPayment(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("per-payment@example.com", 100_000)
	dest := e.destination(p, "12345")
	// A quote made before the limit, executed after it.
	early := e.quote(quoteBody(p, dest.ID, "SENDING", 6_000))
	e.setLimits(p, nil, map[string]any{"perPayment": 5_000})
	before := e.txCount(p)

	b := refused(t, "quote over the limit", e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 6_000), nil), http.StatusForbidden, "LIMIT_EXCEEDED")
	if b.Details["kind"] != "PER_PAYMENT" || detail(t, b, "limit") != 5_000 || detail(t, b, "amount") != 6_000 || b.Details["currency"] != "USD" ||
		!strings.Contains(b.Message, "60.00 USD") || !strings.Contains(b.Message, "50.00 USD") {
		t.Fatalf("refusal %+v", b)
	}
	refused(t, "execute over the limit", e.execute(early, wire.SandboxSignature), http.StatusForbidden, "LIMIT_EXCEEDED")
	if x := e.transaction(early.TransactionID); x.Status != "PENDING" {
		t.Fatalf("the refused execute moved the quote to %s", x.Status)
	}
	refused(t, "transfer-out over the limit", e.do("POST", "/transfer-out", transferOutBody(p.account.ID, dest.ID, 5_001), nil), http.StatusForbidden, "LIMIT_EXCEEDED")
	// The retry leg checks again: a limit lowered between the legs.
	body := transferOutBody(p.account.ID, dest.ID, 4_000)
	r := e.do("POST", "/transfer-out", body, nil)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	e.setLimits(p, nil, map[string]any{"perPayment": 3_000})
	refused(t, "signed transfer-out over the lowered limit", e.do("POST", "/transfer-out", body, signed(wire.SandboxSignature, ch.RequestID)), http.StatusForbidden, "LIMIT_EXCEEDED")

	if n := e.txCount(p); n != before {
		t.Fatalf("refusals stored transactions: %d, was %d", n, before)
	}
	balances(t, e.account(p.account.ID), 100_000, 100_000)

	q := e.quote(quoteBody(p, dest.ID, "SENDING", 3_000))
	e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
	e.mustStatus(e.transferOutLegs(transferOutBody(p.account.ID, dest.ID, 3_000)), http.StatusCreated)
	balances(t, e.account(p.account.ID), 94_000, 100_000)
}

func TestLimitDaily(t *testing.T) { onBothStores(t, testLimitDaily) }

// testLimitDaily: the daily limit counts what left the wallet in the
// rolling last 24 hours (executed quotes and transfer-outs), not failed,
// expired or refunded payments nor quotes not executed; past it a quote,
// an execute and a transfer-out are 429 DAILY_VOLUME_LIMIT_EXCEEDED with
// limit, used, amount and currency; exactly at it they pass; a payment
// older than 24 hours no longer counts.
func testLimitDaily(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox, func(c *Config) { c.SettlementDelay = time.Second })...)
	p := e.newPayer("daily@example.com", 100_000)
	dest := e.destination(p, "12345")
	failing := e.destination(p, "12002")   // execution fails
	refunding := e.destination(p, "12005") // completes, then comes back
	e.setLimits(p, nil, map[string]any{"daily": 10_000})

	pay := func(to string, amount int64) wire.Quote {
		t.Helper()
		q := e.quote(quoteBody(p, to, "SENDING", amount))
		e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
		return q
	}
	// While in flight they count (5,000 + 5,000 is the limit); once
	// failed or refunded they do not.
	failed := pay(failing.ID, 5_000)
	refunded := pay(refunding.ID, 5_000)
	for range 2 {
		e.clock.Advance(time.Second)
		e.settle()
	}
	if x := e.transaction(failed.TransactionID); x.Status != "FAILED" {
		t.Fatalf("the failing payment is %s", x.Status)
	}
	if x := e.transaction(refunded.TransactionID); x.Status != "REFUNDED" {
		t.Fatalf("the refunded payment is %s", x.Status)
	}
	e.clock.Advance(300 * time.Millisecond)
	first := e.clock.Now()
	pay(dest.ID, 4_000) // the one that ages out below
	// A quote that expires unexecuted counts neither.
	e.quote(quoteBody(p, dest.ID, "SENDING", 5_000))
	e.clock.Advance(time.Hour)
	e.settle()
	waiting := e.quote(quoteBody(p, dest.ID, "SENDING", 6_000)) // not executed: not counted

	// The refusal says from when the payment fits: once the 4,000 has
	// passed 24 hours (a microsecond after, rounded up to the second),
	// in details.availableAt and as Retry-After.
	fitsAt := first.Add(24*time.Hour + time.Microsecond).Truncate(time.Second).Add(time.Second)
	before := e.txCount(p)
	r := e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 6_001), nil)
	b := refused(t, "quote past the daily limit", r, http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	if detail(t, b, "limit") != 10_000 || detail(t, b, "used") != 4_000 || detail(t, b, "amount") != 6_001 || b.Details["currency"] != "USD" ||
		!strings.Contains(b.Message, "100.00 USD") || !strings.Contains(b.Message, "40.00 USD") || !strings.Contains(b.Message, "60.00 USD now") {
		t.Fatalf("refusal %+v", b)
	}
	wantWait := int((fitsAt.Sub(e.clock.Now()) + time.Second - 1) / time.Second)
	if b.Details["availableAt"] != timestamp(fitsAt) || r.header.Get("Retry-After") != strconv.Itoa(wantWait) ||
		!strings.Contains(b.Message, "this payment from "+fitsAt.Truncate(time.Minute).Add(time.Minute).UTC().Format("2006-01-02 15:04 UTC")) {
		t.Fatalf("refusal %+v, Retry-After %q; want availableAt %s and %d s", b, r.header.Get("Retry-After"), timestamp(fitsAt), wantWait)
	}
	// A payment over the limit by itself has no time to wait for.
	r = e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 10_001), nil)
	b = refused(t, "quote over the daily limit by itself", r, http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	if _, ok := b.Details["availableAt"]; ok || r.header.Get("Retry-After") != "" || !strings.Contains(b.Message, "by itself") {
		t.Fatalf("refusal %+v, Retry-After %q", b, r.header.Get("Retry-After"))
	}
	refused(t, "transfer-out past the daily limit", e.do("POST", "/transfer-out", transferOutBody(p.account.ID, dest.ID, 6_001), nil),
		http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	if n := e.txCount(p); n != before {
		t.Fatalf("refusals stored transactions: %d, was %d", n, before)
	}

	// Exactly at the limit passes; then nothing more today, the waiting
	// quote included (refused at execute, nothing held).
	e.mustStatus(e.transferOutLegs(transferOutBody(p.account.ID, dest.ID, 6_000)), http.StatusCreated)
	held := e.account(p.account.ID)
	b = refused(t, "execute past the daily limit", e.execute(waiting, wire.SandboxSignature, wire.HeaderIdempotencyKey, "daily-execute"),
		http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	if detail(t, b, "used") != 10_000 {
		t.Fatalf("used %+v", b.Details)
	}
	if a := e.account(p.account.ID); a.Balance.Amount != held.Balance.Amount || a.TotalBalance.Amount != held.TotalBalance.Amount {
		t.Fatalf("the refused execute moved money: %+v, was %+v", a.Balance, held.Balance)
	}
	if x := e.transaction(waiting.TransactionID); x.Status != "PENDING" {
		t.Fatalf("the refused execute moved the quote to %s", x.Status)
	}
	refused(t, "quote of a dollar", e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 100), nil), http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")

	// 24 hours after the first payment it no longer counts: 4,000 is
	// free again, 4,001 is not. Exactly at 24 hours it still counts.
	e.clock.Advance(first.Add(24 * time.Hour).Sub(e.clock.Now()))
	refused(t, "4,000 exactly 24 hours after the first payment", e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 4_000), nil),
		http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	e.clock.Advance(time.Microsecond)
	refused(t, "4,001 after the first payment aged", e.do("POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 4_001), nil),
		http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
	pay(dest.ID, 4_000)
	// The refused execute was not stored under its key: it runs now
	// (its quote was made 24 hours ago and has expired, which it says).
	r = e.execute(waiting, wire.SandboxSignature, wire.HeaderIdempotencyKey, "daily-execute")
	refused(t, "the execute under the 429's key", r, http.StatusConflict, "INVALID_STATE_TRANSITION")
}

func TestLimitCoolingOff(t *testing.T) { onBothStores(t, testLimitCoolingOff) }

// testLimitCoolingOff: a recipient added less than the cooling-off ago
// cannot be paid (quote, execute, transfer-out: 403 RECIPIENT_COOLING_OFF
// with availableAt), one added before can; from availableAt on it can.
func testLimitCoolingOff(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("cooling@example.com", 100_000)
	old := e.destination(p, "12345")
	e.clock.Advance(49 * time.Hour)
	added := e.clock.Now()
	fresh := e.destination(p, "54321")
	// A quote to the new recipient before the cooling-off is turned on.
	early := e.quote(quoteBody(p, fresh.ID, "SENDING", 1_000))
	e.setLimits(p, nil, map[string]any{"newRecipientCoolingOffHours": 48})
	before := e.txCount(p)

	availableAt := timestamp(added.Add(48 * time.Hour))
	b := refused(t, "quote to a new recipient", e.do("POST", "/quotes", quoteBody(p, fresh.ID, "SENDING", 1_000), nil), http.StatusForbidden, "RECIPIENT_COOLING_OFF")
	if b.Details["availableAt"] != availableAt || !strings.Contains(b.Message, "48 hours") {
		t.Fatalf("refusal %+v, want availableAt %s", b, availableAt)
	}
	refused(t, "execute to a new recipient", e.execute(early, wire.SandboxSignature), http.StatusForbidden, "RECIPIENT_COOLING_OFF")
	refused(t, "transfer-out to a new recipient", e.do("POST", "/transfer-out", transferOutBody(p.account.ID, fresh.ID, 1_000), nil), http.StatusForbidden, "RECIPIENT_COOLING_OFF")
	if n := e.txCount(p); n != before {
		t.Fatalf("refusals stored transactions: %d, was %d", n, before)
	}
	balances(t, e.account(p.account.ID), 100_000, 100_000)

	// The recipient added 49 hours ago can be paid.
	q := e.quote(quoteBody(p, old.ID, "SENDING", 1_000))
	e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)

	e.clock.Advance(48*time.Hour - time.Microsecond)
	refused(t, "a microsecond early", e.do("POST", "/transfer-out", transferOutBody(p.account.ID, fresh.ID, 1_000), nil), http.StatusForbidden, "RECIPIENT_COOLING_OFF")
	e.clock.Advance(time.Microsecond)
	e.mustStatus(e.transferOutLegs(transferOutBody(p.account.ID, fresh.ID, 1_000)), http.StatusCreated)
}

// TestLimitsOnlyTheirWallet: another wallet's payments, and payments from
// an internal account that is not a wallet, are not limited by a wallet's
// limits.
func TestLimitsOnlyTheirWallet(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("limited@example.com", 10_000)
	other := e.newPayer("free@example.com", 10_000)
	e.setLimits(p, nil, map[string]any{"perPayment": 100, "daily": 100, "newRecipientCoolingOffHours": 720})
	dest := e.destination(other, "12345")
	q := e.quote(quoteBody(other, dest.ID, "SENDING", 5_000))
	e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
	fiat := e.fiatAccount(p)
	pdest := e.destination(p, "12345")
	e.deposit(e.account(fiat), 5_000)
	e.mustStatus(e.do("POST", "/transfer-out", transferOutBody(fiat, pdest.ID, 5_000), nil), http.StatusCreated)
}

func TestLimitDailyConcurrent(t *testing.T) { onBothStores(t, testLimitDailyConcurrent) }

// testLimitDailyConcurrent: executes and transfer-outs from one wallet
// racing against its daily limit never take more than the limit: each
// reads the rolling total in the transaction that holds the money, and
// those transactions take turns on the wallet (PostgreSQL: serializable,
// and TxFor), so exactly as many pass as fit.
func testLimitDailyConcurrent(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("daily-race@example.com", 100_000)
	dest := e.destination(p, "12345")
	e.setLimits(p, nil, map[string]any{"daily": 10_000})
	const n, price = 8, 3_000 // three fit in 10,000
	qs := make([]wire.Quote, n)
	for i := range qs {
		qs[i] = e.quote(quoteBody(p, dest.ID, "SENDING", price))
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range qs {
		wg.Go(func() {
			<-start
			var r response
			if i%2 == 0 {
				r = e.execute(qs[i], wire.SandboxSignature)
			} else {
				r = e.transferOutLegs(transferOutBody(p.account.ID, dest.ID, price))
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[r.status]++
		})
	}
	close(start)
	wg.Wait()
	passed := statuses[http.StatusOK] + statuses[http.StatusCreated]
	if passed != 3 || statuses[http.StatusTooManyRequests] != n-3 {
		t.Fatalf("statuses %v: want 3 passed and %d refused 429", statuses, n-3)
	}
	balances(t, e.account(p.account.ID), 100_000-3*price, 100_000)
}
