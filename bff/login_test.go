package bff

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

func paths(rs []recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.method+" "+strings.TrimPrefix(r.path, wire.BasePath))
	}
	return out
}

func TestLoginStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		setup     func(*fakeService)
		email     string
		want      int
		wantCode  string
		wantCalls []string
	}{
		{
			name:  "new customer is created",
			email: "New.User@Example.com",
			want:  200,
			wantCalls: []string{"GET /customers", "POST /customers", "GET /customers/internal-accounts",
				"GET /auth/credentials", "POST /auth/credentials/*/challenge"},
		},
		{
			name:      "existing customer is found",
			setup:     func(f *fakeService) { f.addCustomer("known@example.com") },
			email:     "Known@example.com",
			want:      200,
			wantCalls: []string{"GET /customers", "GET /customers/internal-accounts", "GET /auth/credentials", "POST /auth/credentials/*/challenge"},
		},
		{
			name:  "409 race: another tab created it",
			setup: func(f *fakeService) { f.raceOnCreate = true },
			email: "racer@example.com",
			want:  200,
			wantCalls: []string{"GET /customers", "POST /customers", "GET /customers", "GET /customers/internal-accounts",
				"GET /auth/credentials", "POST /auth/credentials/*/challenge"},
		},
		{
			name:      "e-mail on another credential passes through",
			setup:     func(f *fakeService) { f.emailTaken = true },
			email:     "taken@example.com",
			want:      409,
			wantCode:  "EMAIL_OTP_EMAIL_ALREADY_EXISTS",
			wantCalls: []string{"GET /customers", "POST /customers"},
		},
		{
			name:      "customer without wallet",
			setup:     func(f *fakeService) { f.noWallet = true; f.addCustomer("bare@example.com") },
			email:     "bare@example.com",
			want:      403,
			wantCode:  "USER_NOT_READY",
			wantCalls: []string{"GET /customers", "GET /customers/internal-accounts"},
		},
		{
			name:      "locked credential: 429 passes through",
			setup:     func(f *fakeService) { f.challengeLocked = true },
			email:     "locked@example.com",
			want:      429,
			wantCode:  "RATE_LIMITED",
			wantCalls: []string{"GET /customers", "POST /customers", "GET /customers/internal-accounts", "GET /auth/credentials", "POST /auth/credentials/*/challenge"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h.svc)
			}
			r := h.do("POST", "/api/login/start", `{"email":"`+tc.email+`"}`, nil)
			if r.status != tc.want {
				t.Fatalf("status %d %s, want %d", r.status, r.body, tc.want)
			}
			got := paths(h.svc.reqs())
			for i := range got {
				if strings.HasPrefix(got[i], "POST /auth/credentials/AuthMethod:") {
					got[i] = "POST /auth/credentials/*/" + got[i][strings.LastIndexByte(got[i], '/')+1:]
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.wantCalls, ", ") {
				t.Errorf("service calls\n got %v\nwant %v", got, tc.wantCalls)
			}
			for _, rq := range h.svc.reqs() {
				if v := rq.query.Get("platformCustomerId"); v != "" && v != strings.ToLower(tc.email) {
					t.Errorf("platformCustomerId %q, want the lower-cased e-mail", v)
				}
				if rq.method == "POST" && rq.path == wire.BasePath+"/customers" {
					var in wire.CustomerCreateRequest
					if err := json.Unmarshal(rq.body, &in); err != nil || in.CustomerType != "INDIVIDUAL" ||
						in.PlatformCustomerID != strings.ToLower(tc.email) || in.Email != tc.email {
						t.Errorf("create body %s", rq.body)
					}
					if ct := rq.header.Get("Content-Type"); ct != "application/json" {
						t.Errorf("create Content-Type %q", ct)
					}
				}
			}
			if tc.want != 200 {
				if r.code(t) != tc.wantCode {
					t.Errorf("code %q, want %q", r.code(t), tc.wantCode)
				}
				if tc.want == 429 && r.header.Get("Retry-After") != "900" {
					t.Errorf("Retry-After %q, want 900", r.header.Get("Retry-After"))
				}
				if h.cookie != "" {
					t.Error("a failed start set a session cookie")
				}
				return
			}
			m := r.json(t)
			if m["otpEncryptionTargetBundle"] == "" || m["email"] != tc.email {
				t.Errorf("answer %s, want the bundle and the address as typed", r.body)
			}
			if _, ok := m["credentialId"]; ok {
				t.Errorf("the credential id reached the browser: %s", r.body)
			}
			if h.cookie == "" {
				t.Error("no session cookie after start")
			}
			// Started, not signed in.
			if r := h.do("GET", "/api/me", "", nil); !r.nobody() {
				t.Errorf("GET /api/me after start = %d %s, want nobody signed in", r.status, r.body)
			}
		})
	}
}

// TestLoginStartNeedsMatchingCredential: a wallet whose e-mail credential
// is for another address is not e-mailed, and nothing about that other
// address reaches the (anonymous) browser.
func TestLoginStartNeedsMatchingCredential(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.svc.addCustomer("typed@example.com")
	h.svc.setNickname("typed@example.com", "someone.else@example.net")
	r := h.do("POST", "/api/login/start", `{"email":"typed@example.com"}`, nil)
	if r.status != 403 || r.code(t) != "USER_NOT_READY" {
		t.Fatalf("status %d %s, want 403 USER_NOT_READY", r.status, r.body)
	}
	if strings.Contains(string(r.body), "someone.else") {
		t.Errorf("the other address leaked: %s", r.body)
	}
	for _, p := range paths(h.svc.reqs()) {
		if strings.HasSuffix(p, "/challenge") {
			t.Errorf("a code was e-mailed to another address: %s", p)
		}
	}
	if h.cookie != "" {
		t.Error("a session was started")
	}
}

func TestLoginStartValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := map[string]string{
		"missing":        `{}`,
		"empty":          `{"email":""}`,
		"no at":          `{"email":"example.com"}`,
		"no domain dot":  `{"email":"a@localhost"}`,
		"display name":   `{"email":"Bob <bob@example.com>"}`,
		"two addresses":  `{"email":"a@example.com,b@example.com"}`,
		"space":          `{"email":"a b@example.com"}`,
		"too long":       `{"email":"` + strings.Repeat("a", 250) + `@example.com"}`,
		"not a string":   `{"email":42}`,
		"unknown field":  `{"email":"a@example.com","admin":true}`,
		"not JSON":       `email=a@example.com`,
		"trailing data":  `{"email":"a@example.com"} {}`,
		"trailing brace": `{"email":"a@example.com"}}`,
		"trailing ]":     `{"email":"a@example.com"}]`,
		"two objects":    `{"email":"a@example.com"}{"email":"b@example.com"}`,
		"local too long": `{"email":"` + strings.Repeat("a", 65) + `@example.com"}`,
	}
	for name, body := range bad {
		r := h.do("POST", "/api/login/start", body, nil)
		if r.status != 400 {
			t.Errorf("%s: status %d %s, want 400", name, r.status, r.body)
			continue
		}
		var e wire.Error
		_ = json.Unmarshal(r.body, &e)
		switch e.Code {
		case "INVALID_INPUT":
			errs, _ := e.Details["errors"].([]any)
			first, _ := errs[0].(map[string]any)
			if len(errs) != 1 || first["field"] != "email" || first["message"] == "" {
				t.Errorf("%s: details %v", name, e.Details)
			}
		case "INVALID_REQUEST_FORMAT":
		default:
			t.Errorf("%s: code %q", name, e.Code)
		}
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("invalid starts reached the service %d times", n)
	}
}

func TestVerifyWithoutPendingLogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do("POST", "/api/login/verify", `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:123456"}`, nil)
	if r.status != 400 || r.code(t) != "INVALID_INPUT" {
		t.Fatalf("status %d %s, want 400 INVALID_INPUT", r.status, r.body)
	}
	if d, _ := r.json(t)["details"].(map[string]any); d["reason"] != "NO_PENDING_LOGIN" {
		t.Errorf("details %v", d)
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("reached the service %d times", n)
	}
}

// TestVerifyPassThrough checks that both legs and their failures go through
// byte for byte, with exactly the allowlisted headers.
func TestVerifyPassThrough(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if r := h.do("POST", "/api/login/start", `{"email":"pass@example.com"}`, nil); r.status != 200 {
		t.Fatal(r.status, string(r.body))
	}
	startCookie := h.cookie
	hostile := map[string]string{
		"Authorization":    "Bearer browser-token",
		"X-Forwarded-For":  "203.0.113.9",
		"X-Forwarded-Host": "evil.example",
		"Forwarded":        "for=203.0.113.9",
		"X-Real-Ip":        "203.0.113.9",
		"Connection":       "X-Hop",
		"X-Hop":            "hop-by-hop",
		"Te":               "trailers",
		"X-Custom":         "anything",
		"Idempotency-Key":  "idem-1",
	}

	// A wrong code: 401 body and status unchanged, no rotation.
	wrong := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:000001"}`
	h.svc.reset()
	r := h.do("POST", "/api/login/verify", wrong, hostile)
	if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
		t.Fatalf("wrong code: %d %s", r.status, r.body)
	}
	want401, _ := json.Marshal(wire.Error{Status: 401, Code: "UNAUTHORIZED", Message: "the code is wrong or expired"})
	if !bytes.Equal(bytes.TrimSpace(r.body), want401) {
		t.Errorf("401 body changed: %s", r.body)
	}
	if r.header.Get("X-Fake-Reason") != "" {
		t.Error("a service header other than Content-Type/Retry-After was relayed")
	}
	if h.cookie != startCookie {
		t.Error("a failed verify changed the cookie")
	}

	// Leg 1: 202 relayed byte for byte.
	body := `{"type":"EMAIL_OTP",  "encryptedOtpBundle":"sealed:123456"}`
	h.svc.reset()
	r = h.do("POST", "/api/login/verify", body, hostile)
	if r.status != 202 {
		t.Fatalf("leg 1: %d %s", r.status, r.body)
	}
	var ch wire.SignedRequestChallenge
	if err := json.Unmarshal(r.body, &ch); err != nil || ch.PayloadToSign != testPayload || ch.RequestID != testRequestID {
		t.Errorf("leg 1 body %s", r.body)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("leg 1 Content-Type %q", r.header.Get("Content-Type"))
	}
	if h.cookie != startCookie || r.header.Get("Set-Cookie") != "" {
		t.Error("leg 1 touched the cookie")
	}
	verifyPath := wire.BasePath + "/auth/credentials/" + h.svc.credOf("pass@example.com").ID + "/verify"
	checkOutbound(t, h.svc.reqs(), verifyPath, body, nil)

	// Leg 2 with a bad stamp: 401 relayed.
	r = h.do("POST", "/api/login/verify", body, map[string]string{wire.HeaderWalletSignature: "bad", wire.HeaderRequestID: testRequestID})
	if r.status != 401 || r.code(t) != "WALLET_SIGNATURE_INVALID" {
		t.Errorf("bad stamp: %d %s", r.status, r.body)
	}

	// Leg 2: signature headers forwarded, 200 relayed, cookie rotated.
	h.svc.reset()
	hdr := map[string]string{wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID}
	for k, v := range hostile {
		hdr[k] = v
	}
	r = h.do("POST", "/api/login/verify", body, hdr)
	if r.status != 200 {
		t.Fatalf("leg 2: %d %s", r.status, r.body)
	}
	checkOutbound(t, h.svc.reqs(), verifyPath, body, map[string]string{wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID})
	var s wire.Session
	if err := json.Unmarshal(r.body, &s); err != nil || !validID("Session", s.ID) {
		t.Errorf("leg 2 body %s", r.body)
	}
	if h.cookie == "" || h.cookie == startCookie {
		t.Error("the cookie was not rotated at login")
	}
}

// checkOutbound asserts what reached the service on a forwarded verify.
func checkOutbound(t *testing.T, rs []recorded, path, body string, want map[string]string) {
	t.Helper()
	if len(rs) != 1 {
		t.Fatalf("%d service calls, want 1: %v", len(rs), paths(rs))
	}
	rq := rs[0]
	if rq.method != "POST" || rq.path != path {
		t.Errorf("%s %s, want POST %s (the pending credential)", rq.method, rq.path, path)
	}
	if string(rq.body) != body {
		t.Errorf("body %q, want byte for byte %q", rq.body, body)
	}
	if got := rq.header.Get("Authorization"); got != "Basic "+base64.StdEncoding.EncodeToString([]byte(testCred)) {
		t.Errorf("Authorization %q", got)
	}
	if rq.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", rq.header.Get("Content-Type"))
	}
	if rq.header.Get("Idempotency-Key") != "idem-1" {
		t.Errorf("Idempotency-Key %q", rq.header.Get("Idempotency-Key"))
	}
	for k, v := range want {
		if rq.header.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, rq.header.Get(k), v)
		}
	}
	for _, k := range []string{"Cookie", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded",
		"X-Real-Ip", "X-Hop", "Te", "X-Custom", "X-Csrf", "Sec-Fetch-Site", "Origin"} {
		if v := rq.header.Get(k); v != "" {
			t.Errorf("forwarded %s: %q", k, v)
		}
	}
	// On leg 1 the Request-Id is the BFF's own request id (a correlation
	// id), never a challenge id: that would make it half a signed retry.
	if id := rq.header.Get(wire.HeaderRequestID); want == nil &&
		(rq.header.Get(wire.HeaderWalletSignature) != "" || !telemetry.ValidRequestID(id)) {
		t.Errorf("signature headers invented on leg 1 (Request-Id %q)", id)
	}
	if c := rq.header.Get("Connection"); c != "" && !strings.EqualFold(c, "close") && !strings.EqualFold(c, "keep-alive") {
		t.Errorf("Connection %q forwarded", c)
	}
}

// TestVerifyRefusesUnusableSession: a 200 from verify whose session the BFF
// cannot bind to this browser's login ends in 502 and no sign-in.
func TestVerifyRefusesUnusableSession(t *testing.T) {
	t.Parallel()
	cases := map[string]func(h *harness){
		"session of another account": func(h *harness) {
			victim := h.svc.accountOf(h.svc.addCustomer("victim@example.com").Email).ID
			h.svc.set(func(f *fakeService) { f.sessionAccount = victim })
		},
		"already expired session":  func(h *harness) { h.svc.set(func(f *fakeService) { f.sessionTTL = 0 }) },
		"session expired long ago": func(h *harness) { h.svc.set(func(f *fakeService) { f.sessionTTL = -time.Hour }) },
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.do("POST", "/api/login/start", `{"email":"binder@example.com"}`, nil)
			pending := h.cookie
			setup(h)
			body := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:` + testCode + `"}`
			if r := h.do("POST", "/api/login/verify", body, nil); r.status != 202 {
				t.Fatalf("leg 1: %d %s", r.status, r.body)
			}
			r := h.do("POST", "/api/login/verify", body, map[string]string{
				wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID})
			if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
				t.Errorf("leg 2: %d %s, want 502", r.status, r.body)
			}
			if h.cookie != pending {
				t.Error("the cookie changed")
			}
			if r := h.do("GET", "/api/me", "", nil); !r.nobody() {
				t.Errorf("signed in after all: GET /api/me = %d %s", r.status, r.body)
			}
		})
	}
}

// TestPlatformCredentialRefused: when the service refuses the BFF's own
// credential, the browser sees 502, not a 401 that would look like its own
// sign-in failed.
func TestPlatformCredentialRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.PlatformCredential = testTokenID + ":wrong-secret" })
	r := h.do("POST", "/api/login/start", `{"email":"refused@example.com"}`, nil)
	if r.status != 502 || r.code(t) != "SERVICE_UNAVAILABLE" {
		t.Errorf("%d %s, want 502 SERVICE_UNAVAILABLE", r.status, r.body)
	}
	if !strings.Contains(h.logs.String(), "refused the platform credential") {
		t.Errorf("not logged:\n%s", h.logs)
	}
}

// TestMalformedForwardedHeaders: a forwarded header with a control
// character or of absurd length is refused before anything is sent.
func TestMalformedForwardedHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.do("POST", "/api/login/start", `{"email":"hdr@example.com"}`, nil)
	body := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:` + testCode + `"}`
	for name, hdr := range map[string]map[string]string{
		"control character": {wire.HeaderRequestID: "Request:abc\x01def"},
		"DEL":               {wire.HeaderWalletSignature: "stamp\x7f"},
		"tab":               {wire.HeaderIdempotencyKey: "a\tb"},
		"too long":          {wire.HeaderWalletSignature: strings.Repeat("s", 8193)},
	} {
		h.svc.reset()
		r := h.do("POST", "/api/login/verify", body, hdr)
		if r.status != 400 || r.code(t) != "INVALID_INPUT" {
			t.Errorf("%s: %d %s, want 400 INVALID_INPUT", name, r.status, r.body)
		}
		if n := len(h.svc.reqs()); n != 0 {
			t.Errorf("%s: reached the service %d times", name, n)
		}
	}
}

// TestWalletSessionExpiryEndsCookieSession checks the BFF's own expiry
// check with a store that keeps entries longer than asked (as a shared
// store with coarse expiry may): the wallet session's end still counts.
func TestWalletSessionExpiryEndsCookieSession(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, func(c *Config) {
		c.Sessions = lenientStore{NewMemoryStore(func() time.Time { return h.clock.Now() })}
	})
	h.login("lenient@example.com")
	if r := h.do("GET", "/api/auth/sessions", "", nil); r.status != 200 {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	h.clock.Advance(15*time.Minute + time.Second)
	h.svc.reset()
	r := h.do("GET", "/api/auth/sessions", "", nil)
	if r.status != 401 || r.code(t) != "UNAUTHORIZED" {
		t.Errorf("after the wallet session ended: %d %s", r.status, r.body)
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("an expired session reached the service %d times", n)
	}
	if h.cookie != "" {
		t.Error("cookie not cleared")
	}
}

// lenientStore keeps every entry a day, whatever ttl it is given.
type lenientStore struct{ *MemoryStore }

func (l lenientStore) Put(ctx context.Context, key string, s Session, _ time.Duration) error {
	return l.MemoryStore.Put(ctx, key, s, 24*time.Hour)
}

func TestSessionRotationAndMe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.do("POST", "/api/login/start", `{"email":"Rota@Example.com"}`, nil)
	pending := h.cookie
	h.login("Rota@Example.com")
	signedIn := h.cookie
	if signedIn == pending {
		t.Fatal("cookie not rotated")
	}

	// The pre-login cookie is dead and gets cleared.
	r := h.do("GET", "/api/me", "", map[string]string{"Cookie": CookieName + "=" + pending})
	if !r.nobody() {
		t.Errorf("old cookie: %d %s", r.status, r.body)
	}
	h.cookie = signedIn

	r = h.do("GET", "/api/me", "", nil)
	if !r.somebody() {
		t.Fatalf("me: %d %s", r.status, r.body)
	}
	var me struct {
		Email           string               `json:"email"`
		CustomerID      string               `json:"customerId"`
		InternalAccount wire.InternalAccount `json:"internalAccount"`
		Session         map[string]any       `json:"session"`
	}
	if err := json.Unmarshal(r.body, &me); err != nil {
		t.Fatal(err)
	}
	acct := h.svc.accountOf("Rota@Example.com")
	if me.Email != "Rota@Example.com" || me.CustomerID != acct.CustomerID || me.InternalAccount.ID != acct.ID ||
		me.InternalAccount.Balance.Amount != 123456 || me.InternalAccount.Balance.Currency.Decimals != 2 {
		t.Errorf("me = %+v", me)
	}
	sid, _ := me.Session["id"].(string)
	if !validID("Session", sid) || me.Session["type"] != "EMAIL_OTP" || me.Session["nickname"] != "Rota@Example.com" ||
		me.Session["expiresAt"] != "2025-10-13T12:15:00Z" || me.Session["expiresIn"] != float64(900) {
		t.Errorf("me.session = %v", me.Session)
	}
	// expiresIn is the server's count, so a page with a wrong clock needs none.
	h.clock.Advance(5*time.Minute + 300*time.Millisecond)
	var later struct {
		Session map[string]any `json:"session"`
	}
	if err := json.Unmarshal(h.do("GET", "/api/me", "", nil).body, &later); err != nil || later.Session["expiresIn"] != float64(599) {
		t.Errorf("five minutes later: me.session = %v", later.Session)
	}

	// The mirrored sessions route is bound to the cookie's account.
	h.svc.reset()
	r = h.do("GET", "/api/auth/sessions?accountId=InternalAccount:00000000-0000-7000-8000-000000000000&limit=5", "", nil)
	if r.status != 200 {
		t.Fatalf("sessions: %d %s", r.status, r.body)
	}
	rs := h.svc.reqs()
	if len(rs) != 1 || rs[0].path != wire.BasePath+"/auth/sessions" || rs[0].query.Encode() != "accountId="+strings.ReplaceAll(acct.ID, ":", "%3A") {
		t.Errorf("upstream call %v %v", paths(rs), rs[0].query)
	}
	var list wire.Data[wire.Session]
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) != 1 || list.Data[0].ID != sid {
		t.Errorf("sessions body %s", r.body)
	}

	// Expiry of the wallet session ends the cookie session.
	h.clock.Advance(10 * time.Minute)
	h.svc.reset()
	r = h.do("GET", "/api/me", "", nil)
	if !r.nobody() || !strings.Contains(r.header.Get("Set-Cookie"), "expires=Thu, 01 Jan 1970") {
		t.Errorf("expired: %d %s %q", r.status, r.body, r.header.Get("Set-Cookie"))
	}
	if n := len(h.svc.reqs()); n != 0 {
		t.Errorf("an expired session reached the service %d times", n)
	}
	if n := h.srv.store.(*MemoryStore).Len(); n != 0 {
		t.Errorf("%d sessions left in the store", n)
	}
}

func TestMeAfterRevocation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("gone@example.com")
	h.svc.revokeAll()
	r := h.do("GET", "/api/me", "", nil)
	if !r.nobody() || h.cookie != "" {
		t.Errorf("revoked: %d %s, cookie %q", r.status, r.body, h.cookie)
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.login("bye@example.com")
	cookie := h.cookie
	r := h.do("POST", "/api/logout", "", nil)
	if r.status != 204 || len(r.body) != 0 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if h.cookie != "" {
		t.Error("cookie not cleared")
	}
	if r := h.do("GET", "/api/me", "", map[string]string{"Cookie": CookieName + "=" + cookie}); !r.nobody() {
		t.Errorf("me with the logged-out cookie: %d", r.status)
	}
	if r := h.do("POST", "/api/logout", "", nil); r.status != 204 {
		t.Errorf("anonymous logout: %d", r.status)
	}
}

func TestCookieAttributes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.do("POST", "/api/login/start", `{"email":"cookie@example.com"}`, nil)
	set := r.header.Values("Set-Cookie")
	if len(set) != 1 {
		t.Fatalf("Set-Cookie %q", set)
	}
	attrs := map[string]string{}
	parts := strings.Split(set[0], ";")
	name, value, _ := strings.Cut(parts[0], "=")
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		attrs[strings.ToLower(k)] = v
	}
	if name != "__Host-wallet" || !wellFormedID(value) {
		t.Errorf("cookie %s=%s", name, value)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(value)
	if len(raw) != 32 {
		t.Errorf("cookie value carries %d random bytes, want 32", len(raw))
	}
	for _, want := range []string{"httponly", "secure"} {
		if _, ok := attrs[want]; !ok {
			t.Errorf("missing %s in %q", want, set[0])
		}
	}
	if attrs["samesite"] != "Strict" || attrs["path"] != "/" {
		t.Errorf("attributes %v", attrs)
	}
	// No Domain; no Expires date either: the browser compares a date with
	// its own clock, which may be off.
	for _, banned := range []string{"domain", "expires"} {
		if _, ok := attrs[banned]; ok {
			t.Errorf("%s set on the session cookie: %q", banned, set[0])
		}
	}
	// It lives exactly as long as its server-side entry (a pending login:
	// 15 minutes), so a browser restarted meanwhile still has it, and no
	// longer.
	if attrs["max-age"] != strconv.Itoa(int(pendingLoginTTL/time.Second)) {
		t.Errorf("max-age %q, want %d", attrs["max-age"], int(pendingLoginTTL/time.Second))
	}
	// A completed login sets it for the wallet session's life.
	done := h.login("cookie2@example.com")
	if sc := cookieOf(done.header); sc == nil || sc.MaxAge != int((15*time.Minute)/time.Second) {
		t.Errorf("the login's cookie %+v, want Max-Age of the 15-minute wallet session", sc)
	}

	// The deletion carries the same attributes, or a browser ignores it.
	r = h.do("POST", "/api/logout", "", nil)
	del := r.header.Get("Set-Cookie")
	for _, want := range []string{"__Host-wallet=;", "path=/", "secure", "HttpOnly", "SameSite=Strict", "expires=Thu, 01 Jan 1970 00:00:00 GMT"} {
		if !strings.Contains(strings.ToLower(del), strings.ToLower(want)) {
			t.Errorf("deletion %q lacks %q", del, want)
		}
	}
	if strings.Contains(strings.ToLower(del), "domain") {
		t.Errorf("deletion has a Domain: %q", del)
	}
}

// TestSecretNeverReachesTheBrowser runs a full login and more, then scans
// every response for the platform credential in every form it could take.
func TestSecretNeverReachesTheBrowser(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.DevMailbox = http.NotFoundHandler() })
	h.do("GET", "/", "", nil)
	h.do("GET", "/api/config", "", nil)
	h.do("POST", "/api/login/start", `{"email":"bad"}`, nil)
	h.do("POST", "/api/login/verify", `{}`, nil)
	h.login("scan@example.com")
	h.do("POST", "/api/login/verify", `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:999999"}`, nil)
	h.do("GET", "/api/me", "", nil)
	h.do("GET", "/api/auth/sessions", "", nil)
	h.do("GET", "/api/nope", "", nil)
	h.do("GET", "/api/me", "", map[string]string{"X-CSRF": ""})
	h.do("POST", "/api/logout", "", nil)
	h.do("GET", "/api/me", "", nil)
	h.do("GET", "/wasm/wallet.wasm", "", map[string]string{"Accept-Encoding": "br"})

	forms := []string{
		testSecret,
		testCred,
		base64.StdEncoding.EncodeToString([]byte(testCred)),
		base64.RawStdEncoding.EncodeToString([]byte(testCred)),
		base64.URLEncoding.EncodeToString([]byte(testCred)),
		base64.StdEncoding.EncodeToString([]byte(testSecret)),
		"Basic ",
	}
	if len(h.seen) < 15 {
		t.Fatalf("only %d responses recorded", len(h.seen))
	}
	for i, r := range h.seen {
		var all bytes.Buffer
		_ = r.header.Write(&all)
		all.Write(r.body)
		for _, f := range forms {
			if bytes.Contains(all.Bytes(), []byte(f)) {
				t.Errorf("response %d (status %d) contains %q", i, r.status, f)
			}
		}
	}
	if strings.Contains(h.logs.String(), testSecret) {
		t.Error("the secret was logged")
	}
}

func TestTransportIsUsed(t *testing.T) {
	t.Parallel()
	svc := newFakeService(t, time.Now)
	h := newHarness(t, func(c *Config) {
		c.ServiceURL = "http://payments.internal" + wire.BasePath
		c.Transport = handlerTransport{svc}
	})
	h.svc = svc
	if r := h.do("POST", "/api/login/start", `{"email":"inproc@example.com"}`, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if rs := svc.reqs(); len(rs) == 0 || rs[0].path != wire.BasePath+"/customers" {
		t.Errorf("in-process service calls %v", paths(rs))
	}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	t.h.ServeHTTP(w, r)
	return w.Result(), nil
}

// cookieOf is the session cookie a response sets, or nil.
func cookieOf(h http.Header) *http.Cookie {
	var out *http.Cookie
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == CookieName {
			out = c
		}
	}
	return out
}
