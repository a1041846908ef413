package bffpg_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/service/store/pgtest"
	"paywallet/shared/wire"
)

// upstream is the least of the payments service that an EMAIL_OTP login
// and GET /api/me need, for one customer with one wallet.
type upstream struct {
	mu       sync.Mutex
	sessions []wire.Session
}

const (
	customerID = "Customer:0199a000-0000-7000-8000-00000000000c"
	accountID  = "InternalAccount:0199a000-0000-7000-8000-00000000000a"
	credID     = "AuthMethod:0199a000-0000-7000-8000-00000000000e"
	sessionID  = "Session:0199a000-0000-7000-8000-000000000005"
	userEmail  = "Shared.User@example.com"
)

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	p := strings.TrimPrefix(r.URL.Path, wire.BasePath)
	now := time.Now().UTC()
	switch r.Method + " " + p {
	case "GET /customers":
		reply(wire.List[wire.Customer]{Data: []wire.Customer{{ID: customerID,
			PlatformCustomerID: strings.ToLower(userEmail), CustomerType: "INDIVIDUAL", Email: userEmail}}})
	case "GET /customers/internal-accounts":
		reply(wire.List[wire.InternalAccount]{Data: []wire.InternalAccount{{ID: accountID, CustomerID: customerID,
			Type: "EMBEDDED_WALLET", Status: "ACTIVE", FundingPaymentInstructions: []wire.PaymentInstructions{}}}})
	case "GET /auth/credentials":
		reply(wire.Data[wire.AuthMethod]{Data: []wire.AuthMethod{{ID: credID, AccountID: accountID,
			Type: wire.TypeEmailOTP, Nickname: userEmail}}})
	case "POST /auth/credentials/" + credID + "/challenge":
		reply(wire.AuthMethod{ID: credID, AccountID: accountID, Type: wire.TypeEmailOTP, Nickname: userEmail,
			OTPEncryptionTargetBundle: `{"version":"v1.0.0"}`})
	case "POST /auth/credentials/" + credID + "/verify":
		s := wire.Session{ID: sessionID, AccountID: accountID, Type: wire.TypeEmailOTP, Nickname: userEmail,
			CreatedAt: now.Format(time.RFC3339), UpdatedAt: now.Format(time.RFC3339),
			ExpiresAt: now.Add(15 * time.Minute).Format(time.RFC3339)}
		u.sessions = []wire.Session{s}
		reply(s)
	case "GET /auth/sessions":
		reply(wire.Data[wire.Session]{Data: u.sessions})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		reply(wire.Error{Status: 404, Code: "NOT_FOUND", Message: r.Method + " " + p})
	}
}

type answer struct {
	status     int
	cookie     string // the session cookie set, "" when none, "-" when cleared
	retryAfter string
	body       string
}

func call(t *testing.T, srv *bff.Server, method, path, cookie, body string) answer {
	t.Helper()
	return callWith(t, srv, method, path, cookie, body, nil)
}

// callWith is call with extra request headers, such as a User-Agent.
func callWith(t *testing.T, srv *bff.Server, method, path, cookie, body string, header map[string]string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://localhost:8080"+path, rd)
	req.Header.Set(bff.HeaderCSRF, "1")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.Header.Set("Cookie", bff.CookieName+"="+cookie)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.App().Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
	for _, c := range resp.Cookies() {
		if c.Name == bff.CookieName {
			a.cookie = c.Value
			if c.Value == "" {
				a.cookie = "-"
			}
		}
	}
	return a
}

// TestTwoServersShareSessionsAndLimits runs two bff.Servers, each with its
// own Store (pool) on one database, as two instances behind a load
// balancer: a login started on one is finished on the other, the signed-in
// cookie works on both, a logout on one ends it on both, and the per-e-mail
// login limit counts the starts of both.
func TestTwoServersShareSessionsAndLimits(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	svc := httptest.NewServer(&upstream{})
	t.Cleanup(svc.Close)
	var srv [2]*bff.Server
	for i := range srv {
		st := openStore(t, url, nil)
		s, err := bff.New(bff.Config{
			ServiceURL:         svc.URL + wire.BasePath,
			PlatformCredential: "tok_two:secret",
			Mode:               bff.ModeSandbox,
			OTPSignerPublicKey: "02" + strings.Repeat("ab", 32),
			Logger:             slog.New(slog.DiscardHandler),
			Sessions:           st.Sessions(),
			Limiter:            st.Limiter(),
			LoginPerEmail:      bff.Limit{Max: 3, Window: time.Hour},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv[i] = s
	}
	a, b := srv[0], srv[1]
	start := `{"email":"` + userEmail + `"}`

	r := call(t, a, "POST", "/api/login/start", "", start)
	if r.status != 200 || r.cookie == "" || r.cookie == "-" {
		t.Fatalf("start on A: %d %s, cookie %q", r.status, r.body, r.cookie)
	}
	pending := r.cookie

	r = call(t, b, "POST", "/api/login/verify", pending, `{"encryptedOtpBundle":"sealed"}`)
	if r.status != 200 || r.cookie == "" || r.cookie == "-" || r.cookie == pending {
		t.Fatalf("verify on B of the login started on A: %d %s, cookie %q", r.status, r.body, r.cookie)
	}
	signedIn := r.cookie

	for name, s := range map[string]*bff.Server{"A": a, "B": b} {
		if r := call(t, s, "GET", "/api/me", signedIn, ""); r.status != 200 || !strings.Contains(r.body, userEmail) {
			t.Errorf("me on %s: %d %s", name, r.status, r.body)
		}
		// "Nobody": GET /api/me's answer without a signed-in cookie (bff handleMe).
		if r := call(t, s, "GET", "/api/me", pending, ""); r.status != 200 || r.body != `{"signedIn":false}` || r.cookie != "-" {
			t.Errorf("me on %s with the rotated-away cookie: %d %s, cookie %q", name, r.status, r.body, r.cookie)
		}
	}

	if r := call(t, a, "POST", "/api/logout", signedIn, ""); r.status != 204 {
		t.Fatalf("logout on A: %d %s", r.status, r.body)
	}
	if r := call(t, b, "GET", "/api/me", signedIn, ""); r.status != 200 || r.body != `{"signedIn":false}` {
		t.Errorf("me on B after logout on A: %d %s", r.status, r.body)
	}

	// One start so far; two more are allowed, on either instance, then
	// both refuse.
	for i, s := range []*bff.Server{b, a} {
		if r := call(t, s, "POST", "/api/login/start", "", start); r.status != 200 {
			t.Fatalf("start %d: %d %s", i+2, r.status, r.body)
		}
	}
	for name, s := range map[string]*bff.Server{"A": a, "B": b} {
		r := call(t, s, "POST", "/api/login/start", "", start)
		if r.status != 429 || r.retryAfter == "" || !strings.Contains(r.body, "RATE_LIMITED") {
			t.Errorf("fourth start on %s: %d %s, Retry-After %q; want 429", name, r.status, r.body, r.retryAfter)
		}
	}
}
