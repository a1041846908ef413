package service

import (
	"strconv"
	"testing"
	"time"

	"paywallet/service/payments"
)

// TestRateLimitReasons: every 429 RATE_LIMITED names its reason and the wait
// in details (the code and Retry-After stay as they were), so that a page
// can say "we sent you a code moments ago, check your inbox" after a resend
// instead of "too many attempts".
func TestRateLimitReasons(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse func(t *testing.T, e *env) response
		reason string
		wait   float64
	}{
		{"a second code 10 s after the first", func(t *testing.T, e *env) response {
			w := e.newWallet("again@example.com")
			e.challenge(w)
			e.clock.Advance(10 * time.Second)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", nil, nil)
		}, payments.ReasonCodeRecentlySent, 20},
		{"a code after five wrong ones", func(t *testing.T, e *env) response {
			w := e.newWallet("locked@example.com")
			client := mustKey(t)
			am, code := e.challenge(w)
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			for range 5 {
				e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), nil)
			}
			e.clock.Advance(time.Minute)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", nil, nil)
		}, payments.ReasonCredentialLocked, 840},
		{"a second passkey challenge at once", func(t *testing.T, e *env) response {
			w := e.newWallet("pk@example.com")
			k := mustKey(t)
			e.login(w, k)
			cred := e.addPasskey(w, k, newAuthenticator(t))
			client := mustKey(t).PublicKey().CompressedHex()
			e.passkeyChallenge(cred, client)
			return e.do("POST", "/auth/credentials/"+cred.ID+"/challenge", map[string]any{"clientPublicKey": client}, nil)
		}, payments.ReasonChallengeRecentlyIssued, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			r := tc.refuse(t, e)
			body := r.errorBody(t)
			if r.status != 429 || body.Code != "RATE_LIMITED" {
				t.Fatalf("%d %s, want 429 RATE_LIMITED", r.status, r.body)
			}
			if body.Details["reason"] != tc.reason || body.Details["retryAfter"] != tc.wait {
				t.Errorf("details %v, want reason %s and retryAfter %v", body.Details, tc.reason, tc.wait)
			}
			if got := r.header.Get("Retry-After"); got != strconv.Itoa(int(tc.wait)) {
				t.Errorf("Retry-After %q, want %v", got, tc.wait)
			}
		})
	}
}
