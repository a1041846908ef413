package service

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/shared/wire"
)

// stepUpEnv is a sandbox service whose policy holds payments above 50.00
// USD, with a funded payer and a recipient it has paid once (so that only
// the amount holds a payment unless a test says otherwise).
type stepUpEnv struct {
	*env
	p    payer
	dest wire.ExternalAccount
}

func newStepUpEnv(t *testing.T, policy map[string]any, opts ...func(*Config)) *stepUpEnv {
	t.Helper()
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("stepup@example.com", 1_000_000)
	dest := e.destination(p, "41234")
	if policy != nil {
		e.mustStatus(e.do("PATCH", "/config", map[string]any{"stepUpPolicy": policy}, nil), http.StatusOK)
	}
	return &stepUpEnv{env: e, p: p, dest: dest}
}

var overFifty = map[string]any{"paymentsOver": map[string]any{"amount": 5_000, "currency": "USD"}}

// held quotes amount to the recipient and executes it; the quote must come
// back PENDING_AUTHORIZATION with its challenge.
func (s *stepUpEnv) held(amount int64) wire.Quote {
	s.t.Helper()
	q := s.quote(quoteBody(s.p, s.dest.ID, "SENDING", amount))
	r := s.execute(q, mustStamp(s.t, s.p.key, payloadOf(s.t, q)))
	s.mustStatus(r, http.StatusOK)
	var out wire.Quote
	r.decode(s.t, &out)
	if out.Status != "PENDING_AUTHORIZATION" || out.ScaChallenge == nil {
		s.t.Fatalf("execute of %d answered %s, challenge %v", amount, out.Status, out.ScaChallenge)
	}
	return out
}

func (s *stepUpEnv) authorize(q wire.Quote, body any) response {
	s.t.Helper()
	return s.do("POST", "/quotes/"+q.ID+"/authorize", body, nil)
}

var sixDigits = regexp.MustCompile(`\b\d{6}\b`)

// mailedCode is the code in the newest e-mail to the payer.
func (s *stepUpEnv) mailedCode() string {
	s.t.Helper()
	msg, ok := s.box.Latest(s.p.email)
	if !ok {
		s.t.Fatal("no e-mail")
	}
	code := sixDigits.FindString(msg.Body)
	if code == "" {
		s.t.Fatalf("no code in %q", msg.Body)
	}
	return code
}

// TestStepUpPolicyHoldsPayments: each trigger holds the payment and names
// its reason; a payment no trigger catches goes through at once.
func TestStepUpPolicyHoldsPayments(t *testing.T) { onBothStores(t, testStepUpPolicyHoldsPayments) }

func testStepUpPolicyHoldsPayments(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, map[string]any{"paymentsOver": map[string]any{"amount": 5_000, "currency": "USD"},
		"firstPaymentToRecipient": true, "recipientAddedWithinHours": 24}, opts...)
	// A first small payment to a recipient added a minute ago.
	q := s.held(1_000)
	if got, want := q.ScaChallenge.Reasons, []string{"FIRST_PAYMENT_TO_RECIPIENT", "RECIPIENT_ADDED_RECENTLY"}; !slices.Equal(got, want) {
		t.Fatalf("reasons %v, want %v", got, want)
	}
	if q.ScaChallenge.Action != "PAYMENT" || q.ScaChallenge.Factor != "EMAIL_OTP" || q.ScaChallenge.CodeSentTo != "s***@example.com" {
		t.Fatalf("challenge %+v", q.ScaChallenge)
	}
	// Nothing is held while it waits.
	if a := s.account(s.p.account.ID); a.Balance.Amount != 1_000_000 {
		t.Fatalf("available %d while the payment waits", a.Balance.Amount)
	}
	s.mustStatus(s.authorize(q, map[string]any{"code": s.mailedCode()}), http.StatusOK)
	if a := s.account(s.p.account.ID); a.Balance.Amount != 1_000_000-q.TotalSendingAmount {
		t.Fatalf("available %d after the confirmation", a.Balance.Amount)
	}
	// A day later the recipient is neither new nor unpaid: only the amount
	// holds.
	s.clock.Advance(25 * time.Hour)
	s.p.key = mustKey(t)
	s.login(s.p.wallet, s.p.key)
	q = s.held(6_000)
	if got := q.ScaChallenge.Reasons; !slices.Equal(got, []string{"AMOUNT_OVER_THRESHOLD"}) {
		t.Fatalf("reasons %v", got)
	}
	small := s.quote(quoteBody(s.p, s.dest.ID, "SENDING", 4_000))
	r := s.execute(small, mustStamp(t, s.p.key, payloadOf(t, small)))
	s.mustStatus(r, http.StatusOK)
	var out wire.Quote
	r.decode(t, &out)
	if out.Status != "PROCESSING" || out.ScaChallenge != nil {
		t.Fatalf("a payment under the threshold: %s %+v", out.Status, out.ScaChallenge)
	}
	// "Or its equivalent": 60 EUR is above 50 USD.
	eurDest := s.createAccount(map[string]any{"customerId": s.p.customer.ID, "currency": "EUR", "accountInfo": map[string]any{
		"accountType": "EUR_ACCOUNT", "iban": "DE89370400440532013000", "beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL",
			"fullName": "Ana Diaz", "birthDate": "1990-01-01", "nationality": "DE",
			"address": map[string]any{"line1": "Hauptstr. 1", "city": "Berlin", "postalCode": "10115", "country": "DE"}}}})
	s.verify()
	q = s.quote(quoteBody(s.p, eurDest.ID, "RECEIVING", 6_000))
	r = s.execute(q, mustStamp(t, s.p.key, payloadOf(t, q)))
	r.decode(t, &out)
	if out.Status != "PENDING_AUTHORIZATION" || !slices.Contains(out.ScaChallenge.Reasons, "AMOUNT_OVER_THRESHOLD") {
		t.Fatalf("a cross-currency payment above the threshold: %s %+v", out.Status, out.ScaChallenge)
	}
	// Executing again is refused and says what to do.
	r = s.execute(q, mustStamp(t, s.p.key, payloadOf(t, q)))
	s.mustStatus(r, http.StatusConflict)
	if !strings.Contains(string(r.body), "/authorize") {
		t.Fatalf("second execute: %s", r.body)
	}
}

// TestStepUpOffByDefault: without a policy the reference's flow is
// unchanged, and GET /config says so.
func TestStepUpOffByDefault(t *testing.T) {
	s := newStepUpEnv(t, nil)
	q := s.quote(quoteBody(s.p, s.dest.ID, "SENDING", 900_000))
	r := s.execute(q, mustStamp(t, s.p.key, payloadOf(t, q)))
	s.mustStatus(r, http.StatusOK)
	var out wire.Quote
	r.decode(t, &out)
	if out.Status != "PROCESSING" {
		t.Fatalf("status %s", out.Status)
	}
	r = s.do("GET", "/config", nil, nil)
	if !strings.Contains(string(r.body), `"stepUpPolicy":null`) {
		t.Fatalf("config %s", r.body)
	}
}

// TestStepUpPolicyRefusals: every bad member of the policy is named and
// nothing changes.
func TestStepUpPolicyRefusals(t *testing.T) {
	s := newStepUpEnv(t, overFifty)
	r := s.do("PATCH", "/config", map[string]any{"stepUpPolicy": map[string]any{
		"paymentsOver": map[string]any{"amount": -1, "currency": "XYZ"}, "recipientAddedWithinHours": 9999, "sms": true}}, nil)
	s.mustStatus(r, http.StatusBadRequest)
	for _, f := range []string{"stepUpPolicy.sms"} {
		if !strings.Contains(string(r.body), f) {
			t.Errorf("%s not named: %s", f, r.body)
		}
	}
	r = s.do("PATCH", "/config", map[string]any{"stepUpPolicy": map[string]any{
		"paymentsOver": map[string]any{"amount": -1, "currency": "XYZ"}, "recipientAddedWithinHours": 9999}}, nil)
	s.mustStatus(r, http.StatusBadRequest)
	for _, f := range []string{"stepUpPolicy.paymentsOver.amount", "stepUpPolicy.paymentsOver.currency", "stepUpPolicy.recipientAddedWithinHours"} {
		if !strings.Contains(string(r.body), f) {
			t.Errorf("%s not named: %s", f, r.body)
		}
	}
	r = s.do("GET", "/config", nil, nil)
	if !strings.Contains(string(r.body), `"amount":5000`) {
		t.Fatalf("the policy changed: %s", r.body)
	}
}

// TestStepUpPasskeyBinding: the passkey assertion is bound to the one
// payment: another quote's challenge, the same proof twice and a proof
// made without user verification are refused; the right one executes it.
func TestStepUpPasskeyBinding(t *testing.T) { onBothStores(t, testStepUpPasskeyBinding) }

func testStepUpPasskeyBinding(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, overFifty, opts...)
	a := newAuthenticator(t)
	s.addPasskey(s.p.wallet, s.p.key, a)
	handle, _ := wire.WebAuthnUserHandle(s.p.account.ID)
	q1, q2 := s.held(10_000), s.held(20_000)
	if q1.ScaChallenge.Factor != "PASSKEY" || q1.ScaChallenge.PasskeyAssertionOptions == nil ||
		len(q1.ScaChallenge.PasskeyAssertionOptions.AllowCredentials) != 1 || q1.ScaChallenge.SecurePaymentConfirmation == nil {
		t.Fatalf("challenge %+v", q1.ScaChallenge)
	}
	// The challenge is the SHA-256 of payloadToSign.
	h1 := sha256.Sum256([]byte(payloadOf(t, q1)))
	if q1.ScaChallenge.PasskeyAssertionOptions.Challenge != b64(h1[:]) {
		t.Fatal("the WebAuthn challenge is not the payload's hash")
	}
	h2 := sha256.Sum256([]byte(payloadOf(t, q2)))
	origin := a.origin

	// q2's proof does not authorize q1.
	r := s.authorize(q1, map[string]any{"passkeyAssertion": a.assert(string(h2[:]), handle), "origin": origin})
	s.mustStatus(r, http.StatusBadRequest)
	if !strings.Contains(string(r.body), `"attemptsLeft":4`) {
		t.Fatalf("refusal %s", r.body)
	}
	// Without user verification.
	a.flags = flagUP
	s.mustStatus(s.authorize(q1, map[string]any{"passkeyAssertion": a.assert(string(h1[:]), handle), "origin": origin}), http.StatusBadRequest)
	a.flags = flagUP | flagUV
	// The right one.
	good := a.assert(string(h1[:]), handle)
	r = s.authorize(q1, map[string]any{"passkeyAssertion": good, "origin": origin})
	s.mustStatus(r, http.StatusOK)
	var out wire.Quote
	r.decode(t, &out)
	if out.Status != "PROCESSING" || out.ScaChallenge != nil {
		t.Fatalf("after the proof: %s", r.body)
	}
	// The same proof again, on the same quote or the other.
	s.mustStatus(s.authorize(q1, map[string]any{"passkeyAssertion": good, "origin": origin}), http.StatusConflict)
	s.mustStatus(s.authorize(q2, map[string]any{"passkeyAssertion": good, "origin": origin}), http.StatusBadRequest)
	// A code where a passkey is asked for is named.
	r = s.authorize(q2, map[string]any{"code": "123456"})
	s.mustStatus(r, http.StatusBadRequest)
	for _, f := range []string{`"code"`, `"passkeyAssertion"`, `"origin"`} {
		if !strings.Contains(string(r.body), f) {
			t.Errorf("%s not named: %s", f, r.body)
		}
	}
}

// assertSPC is a Secure Payment Confirmation assertion: clientDataJSON of
// type payment.get with what the browser showed.
func assertSPC(t *testing.T, a *authenticator, challenge []byte, payee, currency, value string) *wire.PasskeyAssertion {
	t.Helper()
	cd, _ := json.Marshal(map[string]any{"type": "payment.get", "challenge": b64(challenge), "origin": a.origin, "crossOrigin": false,
		"payment": map[string]any{"rpId": a.rpID, "topOrigin": a.origin, "payeeName": payee,
			"total":      map[string]any{"currency": currency, "value": value},
			"instrument": map[string]any{"displayName": "Wallet balance (USD)", "icon": "data:,"}}})
	a.counter++
	authData := append(a.rpHash(), a.flags)
	authData = binary.BigEndian.AppendUint32(authData, a.counter)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, authData...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return &wire.PasskeyAssertion{CredentialID: a.credentialID(), ClientDataJSON: b64(cd), AuthenticatorData: b64(authData), Signature: b64(sig)}
}

// TestStepUpSecurePaymentConfirmation: an SPC assertion authorizes the
// payment when the browser showed its payee and total, and not otherwise.
func TestStepUpSecurePaymentConfirmation(t *testing.T) {
	s := newStepUpEnv(t, overFifty)
	a := newAuthenticator(t)
	s.addPasskey(s.p.wallet, s.p.key, a)
	q := s.held(12_345)
	spc := q.ScaChallenge.SecurePaymentConfirmation
	if spc.Total.Currency != "USD" || spc.Total.Value != "123.45" || spc.PayeeName == "" || spc.RPID != a.rpID {
		t.Fatalf("SPC data %+v", spc)
	}
	h := sha256.Sum256([]byte(payloadOf(t, q)))
	for _, bad := range []struct{ payee, value string }{{spc.PayeeName, "1.00"}, {"Mallory", spc.Total.Value}} {
		r := s.authorize(q, map[string]any{"passkeyAssertion": assertSPC(t, a, h[:], bad.payee, "USD", bad.value), "origin": a.origin})
		s.mustStatus(r, http.StatusBadRequest)
		if !strings.Contains(string(r.body), "the browser showed") {
			t.Fatalf("refusal %s", r.body)
		}
	}
	r := s.authorize(q, map[string]any{"passkeyAssertion": assertSPC(t, a, h[:], spc.PayeeName, "USD", spc.Total.Value), "origin": a.origin})
	s.mustStatus(r, http.StatusOK)
}

// TestStepUpLockOut: five wrong codes within 15 minutes lock the wallet's
// payments (423 with lockedUntil and failedAttempts) and e-mail the
// person; the lock ends after 30 minutes.
func TestStepUpLockOut(t *testing.T) { onBothStores(t, testStepUpLockOut) }

func testStepUpLockOut(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, overFifty, opts...)
	q := s.held(10_000)
	for i := 1; i <= 4; i++ {
		r := s.authorize(q, map[string]any{"code": "999999"})
		s.mustStatus(r, http.StatusBadRequest)
		if !strings.Contains(string(r.body), `"code"`) {
			t.Fatalf("the code is not named: %s", r.body)
		}
	}
	r := s.authorize(q, map[string]any{"code": "999998"})
	s.mustStatus(r, http.StatusLocked)
	var body struct {
		Code    string
		Details struct {
			LockedUntil    string
			FailedAttempts int
		}
	}
	r.decode(t, &body)
	if body.Code != "ACCOUNT_LOCKED" || body.Details.FailedAttempts != 5 || body.Details.LockedUntil == "" {
		t.Fatalf("lock %s", r.body)
	}
	if msg, _ := s.box.Latest(s.p.email); !strings.Contains(msg.Subject, "locked") {
		t.Fatalf("no lock-out e-mail: %+v", msg)
	}
	// The right code, a new payment: both locked.
	s.mustStatus(s.authorize(q, map[string]any{"code": "123456"}), http.StatusLocked)
	small := s.quote(quoteBody(s.p, s.dest.ID, "SENDING", 100))
	s.mustStatus(s.execute(small, mustStamp(t, s.p.key, payloadOf(t, small))), http.StatusLocked)
	s.clock.Advance(31 * time.Minute)
	s.p.key = mustKey(t)
	s.login(s.p.wallet, s.p.key)
	small = s.quote(quoteBody(s.p, s.dest.ID, "SENDING", 100))
	s.mustStatus(s.execute(small, mustStamp(t, s.p.key, payloadOf(t, small))), http.StatusOK)
}

// TestStepUpExpires: a payment not confirmed before its quote expires
// ends EXPIRED with SCA_NOT_COMPLETED, and its confirmation is refused.
func TestStepUpExpires(t *testing.T) { onBothStores(t, testStepUpExpires) }

func testStepUpExpires(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, overFifty, opts...)
	q := s.held(10_000)
	s.clock.Advance(time.Hour)
	s.settle()
	x := s.transaction(q.TransactionID)
	if x.Status != "EXPIRED" || x.FailureReason != "SCA_NOT_COMPLETED" {
		t.Fatalf("transaction %s %s", x.Status, x.FailureReason)
	}
	s.mustStatus(s.authorize(q, map[string]any{"code": "123456"}), http.StatusConflict)
}

// TestStepUpSignedRetry: an export the policy holds answers its challenge
// with scaChallenge; the signed retry is refused until the confirmation,
// and the confirmation serves one retry.
func TestStepUpSignedRetry(t *testing.T) { onBothStores(t, testStepUpSignedRetry) }

func testStepUpSignedRetry(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, map[string]any{"recoveryPhraseExport": true}, opts...)
	body := map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}
	path := "/internal-accounts/" + s.p.account.ID + "/export"
	ch := s.firstLeg("POST", path, body)
	if ch.ScaChallenge == nil || ch.ScaChallenge.Action != "RECOVERY_PHRASE_EXPORT" || ch.ScaChallenge.CodeSentTo != "" {
		t.Fatalf("challenge %+v", ch.ScaChallenge)
	}
	retry := signed(mustStamp(t, s.p.key, ch.PayloadToSign), ch.RequestID)
	r := s.do("POST", path, body, retry)
	s.mustStatus(r, http.StatusForbidden)
	if !strings.Contains(string(r.body), "SCA_NOT_COMPLETED") {
		t.Fatalf("retry before the confirmation: %s", r.body)
	}
	// The page asks for the code when it shows the step.
	s.mustStatus(s.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/resend", nil, nil), http.StatusNoContent)
	if msg, _ := s.box.Latest(s.p.email); !strings.Contains(msg.Body, "showing your recovery phrase") {
		t.Fatalf("code e-mail %q", msg.Body)
	}
	s.mustStatus(s.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/authorize", map[string]any{"code": s.mailedCode()}, nil), http.StatusOK)
	s.mustStatus(s.do("POST", path, body, retry), http.StatusOK)
	s.mustStatus(s.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/authorize", map[string]any{"code": "123456"}, nil), http.StatusConflict)
}

// TestStepUpParallelGuesses: many wrong codes at once check no more than
// five: the attempts are counted before their proofs, so the rest meet
// the lock, and the right code afterwards is refused too.
func TestStepUpParallelGuesses(t *testing.T) { onBothStores(t, testStepUpParallelGuesses) }

func testStepUpParallelGuesses(t *testing.T, opts ...func(*Config)) {
	s := newStepUpEnv(t, overFifty, opts...)
	q := s.held(10_000)
	code := s.mailedCode()
	const n = 30
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			guess := fmt.Sprintf("%06d", (i*7919+17)%1_000_000)
			if guess == code || guess == "123456" {
				guess = "000000"
			}
			statuses <- s.authorize(q, map[string]any{"code": guess}).status
		}()
	}
	wg.Wait()
	close(statuses)
	checked := 0
	for st := range statuses {
		switch st {
		case http.StatusBadRequest:
			checked++
		case http.StatusLocked, http.StatusInternalServerError, http.StatusServiceUnavailable:
		default:
			t.Errorf("a guess answered %d", st)
		}
	}
	if checked > 5 {
		t.Fatalf("%d guesses were checked, at most 5 may be", checked)
	}
	s.mustStatus(s.authorize(q, map[string]any{"code": code}), http.StatusLocked)
}

// TestStepUpProductionRefusesSandboxProofs: the reference sandbox's code
// and passkey literal confirm nothing in production mode.
func TestStepUpProductionRefusesSandboxProofs(t *testing.T) {
	e := newEnv(t)
	p := e.newPayer("prod-stepup@example.com", 0)
	e.mustStatus(e.do("PATCH", "/config", map[string]any{"stepUpPolicy": map[string]any{"recoveryPhraseExport": true}}, nil), http.StatusOK)
	body := map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}
	path := "/internal-accounts/" + p.account.ID + "/export"
	ch := e.firstLeg("POST", path, body)
	e.mustStatus(e.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/resend", nil, nil), http.StatusNoContent)
	if msg, _ := e.box.Latest(p.email); strings.Contains(msg.Body, "123456") {
		t.Skip("the e-mailed code happens to be the sandbox's")
	}
	e.mustStatus(e.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/authorize", map[string]any{"code": "123456"}, nil), http.StatusBadRequest)

	a := newAuthenticator(t)
	e.addPasskey(p.wallet, p.key, a)
	ch = e.firstLeg("POST", path, body)
	literal := a.assert("x", nil)
	literal.Signature = "sandbox-valid-passkey-signature"
	e.mustStatus(e.do("POST", "/sca/challenges/"+ch.ScaChallenge.ID+"/authorize",
		map[string]any{"passkeyAssertion": literal, "origin": a.origin}, nil), http.StatusBadRequest)
}

// confirmHeld gives a held signed action's confirmation (its first leg
// answered ch) as the person would without a passkey: the code is sent to
// email and typed back. Nothing when the action is not held.
func (e *env) confirmHeld(ch wire.SignedRequestChallenge, email string) {
	e.t.Helper()
	if ch.ScaChallenge == nil {
		return
	}
	id := ch.ScaChallenge.ID
	e.mustStatus(e.do("POST", "/sca/challenges/"+id+"/resend", nil, nil), http.StatusNoContent)
	msg, ok := e.box.Latest(email)
	if !ok || msg.Code == "" {
		e.t.Fatalf("no confirmation code e-mailed to %s", email)
	}
	e.mustStatus(e.do("POST", "/sca/challenges/"+id+"/authorize", map[string]any{"code": msg.Code}, nil), http.StatusOK)
}

// TestLimitsLoosenHeld: tightening a limit needs no confirmation; loosening
// one is held for it whatever the operator's policy; both are in the
// security log with the limits before and after, and e-mailed.
func TestLimitsLoosenHeld(t *testing.T) { onBothStores(t, testLimitsLoosenHeld) }

func testLimitsLoosenHeld(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	p := e.newPayer("loosen@example.com", 0)
	path := limitsPath(p)
	tighten := map[string]any{"daily": 50_000}
	if ch := e.firstLeg("PATCH", path, tighten); ch.ScaChallenge != nil {
		t.Fatalf("tightening is held: %+v", ch.ScaChallenge)
	}
	e.setLimits(p, p.key, tighten)
	if msg, _ := e.box.Latest(p.email); msg.Subject != "Your wallet's limits changed" || !strings.Contains(msg.Body, "per day 500.00 USD") {
		t.Fatalf("limits e-mail %+v", msg)
	}
	loosen := map[string]any{"daily": 90_000}
	ch := e.firstLeg("PATCH", path, loosen)
	if ch.ScaChallenge == nil || ch.ScaChallenge.Action != "LIMITS_LOOSEN" {
		t.Fatalf("loosening is not held: %+v", ch.ScaChallenge)
	}
	retry := signed(mustStamp(t, p.key, ch.PayloadToSign), ch.RequestID)
	e.mustStatus(e.do("PATCH", path, loosen, retry), http.StatusForbidden)
	e.confirmHeld(ch, p.email)
	e.mustStatus(e.do("PATCH", path, loosen, retry), http.StatusOK)

	r := e.do("GET", "/customers/security-events?customerId="+p.customer.ID+"&limit=50", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list struct {
		Data []struct {
			Type    string
			Details map[string]any
		}
	}
	r.decode(t, &list)
	var changes, passed int
	for _, ev := range list.Data {
		switch ev.Type {
		case "LIMITS_CHANGED":
			changes++
			if changes == 1 && ev.Details["effectiveAt"] == nil {
				t.Errorf("the loosening's record has no effectiveAt: %v", ev.Details)
			}
		case "STEP_UP_PASSED":
			passed++
		}
	}
	if changes != 2 || passed != 1 {
		t.Fatalf("%d LIMITS_CHANGED and %d STEP_UP_PASSED records: %+v", changes, passed, list.Data)
	}
}

// TestLimitsLoosenAfterTheChallenge: a change that was no loosening when
// its challenge was made (so not held) but is one by its retry, because
// the limits were tightened meanwhile, is refused: a stolen session cannot
// undo the person's tightening without the confirmation.
func TestLimitsLoosenAfterTheChallenge(t *testing.T) {
	e := newEnv(t, sandbox)
	p := e.newPayer("race-loosen@example.com", 0)
	path := limitsPath(p)
	e.setLimits(p, p.key, map[string]any{"perPayment": 10_000})
	same := map[string]any{"perPayment": 10_000}
	ch := e.firstLeg("PATCH", path, same)
	if ch.ScaChallenge != nil {
		t.Fatal("an unchanged limit is held")
	}
	e.setLimits(p, p.key, map[string]any{"perPayment": 100})
	r := e.do("PATCH", path, same, signed(mustStamp(t, p.key, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusForbidden)
	if l := e.limits(p); *l.PerPayment != 100 || l.Pending != nil {
		t.Fatalf("limits after the refused retry: %+v", l)
	}
}
