package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

func TestPlatformAuth(t *testing.T) {
	e := newEnv(t)
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name, auth string
	}{
		{"none", ""},
		{"wrong secret", basic("tok_test:wrong")},
		{"wrong token id", basic("tok_other:s3cret-platform-value")},
		{"secret prefix", basic("tok_test:s3cret")},
		{"bearer", "Bearer s3cret-platform-value"},
		{"not base64", "Basic !!!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("GET", "/customers", nil, map[string]string{"Authorization": tt.auth})
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d", r.status)
			}
			if got := r.errorBody(t).Code; got != "UNAUTHORIZED" {
				t.Fatalf("code %q", got)
			}
			if strings.Contains(string(r.body), "s3cret") {
				t.Fatal("error body echoes the secret")
			}
		})
	}
	e.mustStatus(e.do("GET", "/customers", nil, nil), http.StatusOK)
}

func TestRoutingErrors(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/no/such/thing", nil, nil)
	if r.status != 404 || r.errorBody(t).Code != "NOT_FOUND" {
		t.Fatalf("unknown path: %d %s", r.status, r.body)
	}
	r = e.do("DELETE", "/customers", nil, nil)
	if r.status != 405 || r.errorBody(t).Code != "METHOD_NOT_ALLOWED" || r.header.Get("Allow") == "" {
		t.Fatalf("wrong method: %d %s %v", r.status, r.body, r.header)
	}
}

func TestCreateCustomerProvisionsWallet(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("ada@example.com")
	if !strings.HasPrefix(w.customer.ID, "Customer:") || w.customer.Email != "ada@example.com" || w.customer.UmaAddress == "" {
		t.Fatalf("customer %+v", w.customer)
	}
	if w.account.Type != "EMBEDDED_WALLET" || w.account.Status != "ACTIVE" || w.account.CustomerID != w.customer.ID {
		t.Fatalf("account %+v", w.account)
	}
	if w.account.Balance.Currency.Code != "USD" || w.account.Balance.Currency.Decimals != 2 || w.account.PrivateEnabled == nil {
		t.Fatalf("account balance/currency %+v", w.account)
	}
	if w.credential.Type != "EMAIL_OTP" || w.credential.Nickname != "ada@example.com" || w.credential.AccountID != w.account.ID {
		t.Fatalf("credential %+v", w.credential)
	}
	r := e.do("GET", "/customers/"+w.customer.ID, nil, nil)
	e.mustStatus(r, 200)
	var got wire.Customer
	r.decode(t, &got)
	if !reflect.DeepEqual(got, w.customer) {
		t.Fatalf("GET gives %+v, POST gave %+v", got, w.customer)
	}
}

func TestCreateCustomerRefusals(t *testing.T) {
	e := newEnv(t)
	e.newWallet("taken@example.com")
	tests := []struct {
		name   string
		body   string
		status int
		code   string
		fields []string
	}{
		{"empty object", `{}`, 400, "INVALID_INPUT", []string{"customerType"}},
		{"all bad at once", `{"platformCustomerId":"` + strings.Repeat("p", 256) + `","customerType":"ROBOT","email":"nope","umaAddress":"x"}`, 400, "INVALID_INPUT",
			[]string{"customerType", "email", "platformCustomerId", "umaAddress"}},
		{"unknown field", `{"platformCustomerId":"a","customerType":"INDIVIDUAL","favouriteColour":"red"}`, 400, "INVALID_INPUT", []string{"favouriteColour"}},
		{"wrong type", `{"platformCustomerId":7,"customerType":"INDIVIDUAL"}`, 400, "INVALID_INPUT", []string{"platformCustomerId"}},
		{"malformed json", `{"platformCustomerId":`, 400, "INVALID_REQUEST_FORMAT", nil},
		{"NUL in text", `{"platformCustomerId":"a\u0000b","customerType":"INDIVIDUAL"}`, 400, "INVALID_INPUT", nil},
		{"duplicate platform id", `{"platformCustomerId":"p-taken@example.com","customerType":"INDIVIDUAL"}`, 409, "CONFLICT", nil},
		{"e-mail on another wallet", `{"platformCustomerId":"other","customerType":"INDIVIDUAL","email":"TAKEN@example.com"}`, 409, "EMAIL_OTP_EMAIL_ALREADY_EXISTS", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("POST", "/customers", []byte(tt.body), nil)
			if r.status != tt.status {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			eb := r.errorBody(t)
			if eb.Code != tt.code {
				t.Fatalf("code %q: %s", eb.Code, r.body)
			}
			if tt.fields != nil {
				var got []string
				for _, fe := range eb.Details["errors"].([]any) {
					got = append(got, fe.(map[string]any)["field"].(string))
				}
				if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
					t.Fatalf("fields %v, want %v", got, tt.fields)
				}
			}
		})
	}
	// Nothing of the refused requests was stored: one customer in all.
	r := e.do("GET", "/customers", nil, nil)
	var list wire.List[wire.Customer]
	r.decode(t, &list)
	if len(list.Data) != 1 || *list.TotalCount != 1 {
		t.Fatalf("refused requests stored something: %s", r.body)
	}
	// The e-mail conflict rolled back the customer row too.
	r = e.do("GET", "/customers?platformCustomerId=other", nil, nil)
	r.decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("customer of a refused request exists: %s", r.body)
	}
}

func TestListCustomersPagination(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.do("POST", "/customers", map[string]any{"platformCustomerId": "c" + strconv.Itoa(i), "customerType": "INDIVIDUAL"}, nil)
	}
	var seen []string
	cursor := ""
	for range 5 {
		path := "/customers?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.do("GET", path, nil, nil)
		e.mustStatus(r, 200)
		var page wire.List[wire.Customer]
		r.decode(t, &page)
		for _, c := range page.Data {
			seen = append(seen, c.PlatformCustomerID)
		}
		if *page.TotalCount != 5 {
			t.Fatalf("totalCount %d", *page.TotalCount)
		}
		if !page.HasMore {
			if page.NextCursor != "" || strings.Contains(string(r.body), "nextCursor") {
				t.Fatalf("last page carries a cursor: %s", r.body)
			}
			break
		}
		cursor = page.NextCursor
	}
	if strings.Join(seen, ",") != "c0,c1,c2,c3,c4" {
		t.Fatalf("pages gave %v", seen)
	}
	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "cursor=nope", "customerType=ROBOT"} {
		r := e.do("GET", "/customers?"+bad, nil, nil)
		if r.status != 400 || r.errorBody(t).Code != "INVALID_INPUT" {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
}

func TestEmailOTPLogin(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("grace@example.com")
	client := mustKey(t)
	am, code := e.challenge(w)
	// The challenge answer is the strict AuthMethod shape plus the bundle.
	var raw map[string]any
	json.Unmarshal(mustJSON(t, am), &raw)
	for k := range raw {
		switch k {
		case "id", "accountId", "type", "nickname", "createdAt", "updatedAt", "otpEncryptionTargetBundle":
		default:
			t.Errorf("challenge answer has field %q", k)
		}
	}
	body := verifyBody(e.sealCode(am, code, client))
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, nil)
	e.mustStatus(r, 202)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	if ch.Type != "EMAIL_OTP" || !strings.HasPrefix(ch.RequestID, "Request:") || ch.PayloadToSign == "" {
		t.Fatalf("challenge %+v", ch)
	}
	if exp, _ := time.Parse(time.RFC3339Nano, ch.ExpiresAt); !exp.Equal(e.clock.Now().Add(5 * time.Minute)) {
		t.Fatalf("challenge expires %s", ch.ExpiresAt)
	}
	// The token binds the sealed client key.
	parts := strings.Split(ch.PayloadToSign, ".")
	claimsJSON, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(claimsJSON, &claims)
	if claims["public_key"] != client.PublicKey().CompressedHex() || claims["contact"] != w.email {
		t.Fatalf("token claims %s", claimsJSON)
	}

	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, map[string]string{
		wire.HeaderWalletSignature: mustStamp(t, client, ch.PayloadToSign),
		wire.HeaderRequestID:       ch.RequestID,
	})
	e.mustStatus(r, 200)
	var sess wire.Session
	r.decode(t, &sess)
	if !strings.HasPrefix(sess.ID, "Session:") || sess.AccountID != w.account.ID || sess.Type != "EMAIL_OTP" || sess.Nickname != w.email {
		t.Fatalf("session %+v", sess)
	}
	if strings.Contains(string(r.body), "encryptedSessionSigningKey") {
		t.Fatal("EMAIL_OTP session carries encryptedSessionSigningKey")
	}
	if exp, _ := time.Parse(time.RFC3339Nano, sess.ExpiresAt); !exp.Equal(e.clock.Now().Add(15 * time.Minute)) {
		t.Fatalf("session expires %s, want now+15m", sess.ExpiresAt)
	}
	// The service holds the client's key as the session API key.
	stored := e.storedSession(sess.ID)
	pub, _ := walletcrypto.ParsePublicKey(stored.PublicKey)
	if !pub.Equal(client.PublicKey()) {
		t.Fatal("session key is not the sealed client key")
	}
}

func (e *env) storedSession(id string) *store.Session {
	e.t.Helper()
	var s *store.Session
	err := e.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		s, err = tx.GetSession(context.Background(), id)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEmailOTPFailures drives each way a login can go wrong and checks the
// status, the code, and that no session was made.
func TestEmailOTPFailures(t *testing.T) {
	type leg1 struct {
		body map[string]any
		ch   wire.SignedRequestChallenge
	}
	// prepare runs challenge and leg 1 with the right code.
	prepare := func(e *env, w wallet, client *walletcrypto.PrivateKey) leg1 {
		am, code := e.challenge(w)
		body := verifyBody(e.sealCode(am, code, client))
		r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, nil)
		e.mustStatus(r, 202)
		var l leg1
		l.body = body
		r.decode(e.t, &l.ch)
		return l
	}
	tests := []struct {
		name   string
		run    func(e *env, w wallet, client *walletcrypto.PrivateKey) response
		status int
		code   string
	}{
		{"wrong code", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			am, code := e.challenge(w)
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), nil)
		}, 401, "UNAUTHORIZED"},
		{"expired code", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			am, code := e.challenge(w)
			e.clock.Advance(5 * time.Minute)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, code, client)), nil)
		}, 401, "UNAUTHORIZED"},
		{"used bundle", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, nil)
		}, 401, "UNAUTHORIZED"},
		{"bundle of a replaced code", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			am, code := e.challenge(w)
			e.clock.Advance(30 * time.Second)
			e.challenge(w)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, code, client)), nil)
		}, 401, "UNAUTHORIZED"},
		{"no code issued", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			target := mustKey(t)
			sealed, _ := walletcrypto.SealOTP(target.PublicKey(), "123456", client.PublicKey())
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(sealed), nil)
		}, 401, "UNAUTHORIZED"},
		{"unknown request id", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign),
				wire.HeaderRequestID:       "Request:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b",
			})
		}, 401, "UNAUTHORIZED"},
		{"reused request id", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			h := map[string]string{wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign), wire.HeaderRequestID: l.ch.RequestID}
			e.mustStatus(e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, h), 200)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, h)
		}, 401, "UNAUTHORIZED"},
		{"expired request id", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			e.clock.Advance(5 * time.Minute)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign), wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "UNAUTHORIZED"},
		{"stamp by another key", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, mustKey(t), l.ch.PayloadToSign), wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_INVALID"},
		{"stamp over another payload", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign+"x"), wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_INVALID"},
		{"changed body", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			other := mustKey(t)
			sealed, _ := walletcrypto.SealOTP(other.PublicKey(), "123456", client.PublicKey())
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(sealed), map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign), wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_BODY_MISMATCH"},
		{"missing signature", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_MISSING"},
		{"missing request id", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: mustStamp(t, client, l.ch.PayloadToSign)})
		}, 401, "REQUEST_ID_MISSING"},
		{"malformed stamp", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: "bm90IGEgc3RhbXA", wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_MALFORMED"},
		{"sandbox literal in production", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			l := prepare(e, w, client)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", l.body, map[string]string{
				wire.HeaderWalletSignature: wire.SandboxSignature, wire.HeaderRequestID: l.ch.RequestID})
		}, 401, "WALLET_SIGNATURE_INVALID"},
		{"bad bundle encoding", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			e.challenge(w)
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(`{"encappedPublic":"zz"}`), nil)
		}, 400, "INVALID_INPUT"},
		{"unknown credential", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			sealed, _ := walletcrypto.SealOTP(mustKey(t).PublicKey(), "123456", client.PublicKey())
			return e.do("POST", "/auth/credentials/AuthMethod:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b/verify", verifyBody(sealed), nil)
		}, 404, "NOT_FOUND"},
		{"wrong type for credential", func(e *env, w wallet, client *walletcrypto.PrivateKey) response {
			return e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", map[string]any{"type": "EMAIL_OTP", "encryptedOtpBundle": "x", "oidcToken": "y"}, nil)
		}, 400, "INVALID_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			w := e.newWallet("u@example.com")
			r := tt.run(e, w, mustKey(t))
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if got := r.errorBody(t).Code; got != tt.code {
				t.Fatalf("code %q, want %q: %s", got, tt.code, r.body)
			}
			if tt.name == "reused request id" {
				return // the first retry legitimately made one session
			}
			if n := e.activeSessions(w); n != 0 {
				t.Fatalf("%d sessions exist after a refused login", n)
			}
		})
	}
}

func (e *env) activeSessions(w wallet) int {
	e.t.Helper()
	r := e.do("GET", "/auth/sessions?accountId="+w.account.ID, nil, nil)
	e.mustStatus(r, 200)
	var list wire.Data[wire.Session]
	r.decode(e.t, &list)
	return len(list.Data)
}

// A refused retry changes nothing: after a body mismatch and a bad
// signature, the right retry still completes.
func TestRefusedRetryLeavesChallengeUsable(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("k@example.com")
	client := mustKey(t)
	am, code := e.challenge(w)
	body := verifyBody(e.sealCode(am, code, client))
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, nil)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	path := "/auth/credentials/" + w.credential.ID + "/verify"
	bad := e.do("POST", path, body, map[string]string{wire.HeaderWalletSignature: mustStamp(t, mustKey(t), ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID})
	e.mustStatus(bad, 401)
	e.mustStatus(e.do("POST", path, body, map[string]string{wire.HeaderWalletSignature: mustStamp(t, client, ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID}), 200)
}

func TestSandboxSignatureAccepted(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = ModeSandbox })
	w := e.newWallet("s@example.com")
	client := mustKey(t)
	am, code := e.challenge(w)
	body := verifyBody(e.sealCode(am, code, client))
	path := "/auth/credentials/" + w.credential.ID + "/verify"
	r := e.do("POST", path, body, nil)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	r = e.do("POST", path, body, map[string]string{wire.HeaderWalletSignature: wire.SandboxSignature, wire.HeaderRequestID: ch.RequestID})
	e.mustStatus(r, 200)
}

func TestLockoutAfterFiveWrongCodes(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("l@example.com")
	client := mustKey(t)
	am, code := e.challenge(w)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	path := "/auth/credentials/" + w.credential.ID + "/verify"
	for i := 1; i <= 5; i++ {
		r := e.do("POST", path, verifyBody(e.sealCode(am, wrong, client)), nil)
		if i < 5 {
			if r.status != 401 {
				t.Fatalf("attempt %d: %d %s", i, r.status, r.body)
			}
			continue
		}
		if r.status != 429 || r.errorBody(t).Code != "RATE_LIMITED" || r.header.Get("Retry-After") != "900" {
			t.Fatalf("fifth wrong code: %d %v %s", r.status, r.header, r.body)
		}
	}
	// Locked: the right code and a new challenge are both refused.
	r := e.do("POST", path, verifyBody(e.sealCode(am, code, client)), nil)
	if r.status != 429 {
		t.Fatalf("right code while locked: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", map[string]any{}, nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("challenge while locked: %d %s", r.status, r.body)
	}
	e.clock.Advance(15 * time.Minute)
	e.login(w, client) // unlocked again, and the counter was reset
}

func TestSessionExpiryIsExact(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("x@example.com")
	e.login(w, mustKey(t))
	e.clock.Advance(15*time.Minute - time.Microsecond)
	if n := e.activeSessions(w); n != 1 {
		t.Fatalf("%d active sessions 1µs before expiry", n)
	}
	e.clock.Advance(time.Microsecond)
	if n := e.activeSessions(w); n != 0 {
		t.Fatalf("%d active sessions at expiresAt", n)
	}
}

func TestSessionListValidation(t *testing.T) {
	e := newEnv(t)
	for _, q := range []string{"", "?accountId=", "?accountId=Customer:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"} {
		r := e.do("GET", "/auth/sessions"+q, nil, nil)
		if r.status != 400 || r.errorBody(t).Code != "INVALID_INPUT" {
			t.Errorf("%q: %d %s", q, r.status, r.body)
		}
	}
	r := e.do("GET", "/auth/sessions?accountId=InternalAccount:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", nil, nil)
	e.mustStatus(r, 200)
	if strings.TrimSpace(string(r.body)) != `{"data":[]}` {
		t.Fatalf("unknown account: %s", r.body)
	}
}

// Many retries racing with one Request-Id make exactly one session.
func TestConcurrentRetriesMakeOneSession(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("race@example.com")
	client := mustKey(t)
	am, code := e.challenge(w)
	body := verifyBody(e.sealCode(am, code, client))
	path := "/auth/credentials/" + w.credential.ID + "/verify"
	r := e.do("POST", path, body, nil)
	var ch wire.SignedRequestChallenge
	r.decode(t, &ch)
	h := map[string]string{wire.HeaderWalletSignature: mustStamp(t, client, ch.PayloadToSign), wire.HeaderRequestID: ch.RequestID}
	var wg sync.WaitGroup
	statuses := make([]int, 12)
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.do("POST", path, body, h).status })
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 401:
		default:
			t.Fatalf("unexpected status %d", s)
		}
	}
	if ok != 1 || e.activeSessions(w) != 1 {
		t.Fatalf("%d successes, %d sessions; want exactly one", ok, e.activeSessions(w))
	}
}

func TestMailFailureIs503(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mailer = failingMailer{} })
	w := e.newWallet("m@example.com")
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", nil, nil)
	if r.status != 503 || r.errorBody(t).Code != "SERVICE_UNAVAILABLE" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

type failingMailer struct{}

func (failingMailer) Send(context.Context, mail.Message) error {
	return errors.New("smtp: connection refused")
}

// A new code can be asked for only 30 s after the previous one, so the
// service cannot be used to flood an inbox.
func TestResendInterval(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("flood@example.com")
	e.challenge(w)
	e.clock.Advance(10 * time.Second)
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", nil, nil)
	if r.status != 429 || r.errorBody(t).Code != "RATE_LIMITED" || r.header.Get("Retry-After") != "20" {
		t.Fatalf("second code after 10 s: %d %v %s", r.status, r.header, r.body)
	}
	if n := len(e.box.All()); n != 1 {
		t.Fatalf("%d e-mails sent, want 1", n)
	}
	e.clock.Advance(20 * time.Second)
	e.challenge(w)
}

// TestHealthz: the load balancer's check needs no credential and follows
// the database.
func TestHealthz(t *testing.T) {
	e := newEnv(t)
	check := func(want int, status string) {
		t.Helper()
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != want || !strings.Contains(rec.Body.String(), `"status":"`+status+`"`) {
			t.Fatalf("GET /healthz = %d %s, want %d %s", rec.Code, rec.Body, want, status)
		}
	}
	check(200, "ok")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest("POST", "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /healthz = %d", rec.Code)
	}
	e.store.Close()
	check(503, "unavailable")
}
