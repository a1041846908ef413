package bff

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/andybalholm/brotli"

	"paywallet/shared/wire"
)

// This file is a fake payments service for this package's unit tests only:
// just enough of the contract (service-api.md) to drive the BFF, recording
// every request it receives. The real service is exercised by e2e/.

const (
	testTokenID   = "tok_bff_test"
	testSecret    = "sk_test_Secr3t-value_9f8e7d"
	testCred      = testTokenID + ":" + testSecret
	testSignerKey = "04" + "1111111111111111111111111111111111111111111111111111111111111111" +
		"2222222222222222222222222222222222222222222222222222222222222222"
	testCode      = "123456"
	testStamp     = "stamp-that-verifies"
	testPayload   = "payload-to-sign-b64"
	testRequestID = "Request:0199a000-0000-7000-8000-000000000001"
)

func newID(typ string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	h := fmt.Sprintf("%x", b)
	return typ + ":" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

type recorded struct {
	method string
	path   string
	query  url.Values
	header http.Header
	body   []byte
}

type fakeService struct {
	t testing.TB

	mu        sync.Mutex
	requests  []recorded
	customers map[string]wire.Customer        // by platformCustomerId
	accounts  map[string]wire.InternalAccount // by customer id
	creds     map[string]wire.AuthMethod      // by account id
	sessions  map[string]wire.Session         // by session id
	external  map[string]map[string]any       // external accounts by id
	quotes    map[string]map[string]any       // quotes by id

	// Knobs.
	raceOnCreate    bool   // POST /customers answers 409 CONFLICT after "another tab" created it
	emailTaken      bool   // POST /customers answers 409 EMAIL_OTP_EMAIL_ALREADY_EXISTS
	noWallet        bool   // customers are created without an embedded wallet
	challengeLocked bool   // challenge answers 429 with Retry-After
	sessionAccount  string // when set, verify issues its session for this account instead
	sessionTTL      time.Duration
	now             func() time.Time
}

func newFakeService(t testing.TB, now func() time.Time) *fakeService {
	return &fakeService{
		t:          t,
		customers:  map[string]wire.Customer{},
		accounts:   map[string]wire.InternalAccount{},
		creds:      map[string]wire.AuthMethod{},
		sessions:   map[string]wire.Session{},
		external:   map[string]map[string]any{},
		quotes:     map[string]map[string]any{},
		sessionTTL: 15 * time.Minute,
		now:        now,
	}
}

func (f *fakeService) reqs() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// forwarded is reqs without the session listings (GET /auth/sessions)
// that every signed-in request makes to check its wallet session
// (liveness.go): the calls a route itself forwards.
func (f *fakeService) forwarded() []recorded {
	var out []recorded
	for _, r := range f.reqs() {
		if r.method == "GET" && strings.HasSuffix(r.path, "/auth/sessions") {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (f *fakeService) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
}

// addCustomer creates a customer with wallet and EMAIL_OTP credential.
func (f *fakeService) addCustomer(email string) wire.Customer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addCustomerLocked(strings.ToLower(email), email)
}

func (f *fakeService) addCustomerLocked(pcid, email string) wire.Customer {
	c := wire.Customer{ID: newID("Customer"), PlatformCustomerID: pcid, CustomerType: "INDIVIDUAL",
		Email: email, CreatedAt: "2025-10-13T00:00:00Z", UpdatedAt: "2025-10-13T00:00:00Z"}
	f.customers[pcid] = c
	if f.noWallet {
		return c
	}
	usd := wire.Currency{Code: "USD", Name: "US Dollar", Symbol: "$", Decimals: 2}
	a := wire.InternalAccount{ID: newID("InternalAccount"), CustomerID: c.ID, Type: "EMBEDDED_WALLET", Status: "ACTIVE",
		Balance:                    wire.CurrencyAmount{Amount: 123456, Currency: usd},
		TotalBalance:               wire.CurrencyAmount{Amount: 123456, Currency: usd},
		FundingPaymentInstructions: []wire.PaymentInstructions{},
		CreatedAt:                  "2025-10-13T00:00:00Z", UpdatedAt: "2025-10-13T00:00:00Z"}
	f.accounts[c.ID] = a
	f.creds[a.ID] = wire.AuthMethod{ID: newID("AuthMethod"), AccountID: a.ID, Type: wire.TypeEmailOTP, Nickname: email,
		CreatedAt: "2025-10-13T00:00:00Z", UpdatedAt: "2025-10-13T00:00:00Z"}
	return c
}

func (f *fakeService) accountOf(email string) wire.InternalAccount {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accounts[f.customers[strings.ToLower(email)].ID]
}

// set changes knobs while the fake may be serving.
func (f *fakeService) set(change func(*fakeService)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

// credOf returns the EMAIL_OTP credential of the customer with this e-mail.
func (f *fakeService) credOf(email string) wire.AuthMethod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creds[f.accounts[f.customers[strings.ToLower(email)].ID].ID]
}

// setNickname renames the customer's EMAIL_OTP credential.
func (f *fakeService) setNickname(email, nickname string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.accounts[f.customers[strings.ToLower(email)].ID]
	c := f.creds[a.ID]
	c.Nickname = nickname
	f.creds[a.ID] = c
}

func (f *fakeService) revokeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions = map[string]wire.Session{}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, wire.Error{Status: status, Code: code, Message: msg})
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, recorded{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: body})

	if r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(testCred)) {
		writeErr(w, 401, "UNAUTHORIZED", "bad platform credential")
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, wire.BasePath)
	if !ok {
		writeErr(w, 404, "NOT_FOUND", "no such path")
		return
	}
	q := r.URL.Query()
	seg := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case r.Method == "POST" && p == "/auth/sign-out-everywhere":
		var in struct{ Token string }
		if json.Unmarshal(body, &in) != nil || in.Token != "good-token" {
			writeJSON(w, 400, map[string]any{"status": 400, "code": "INVALID_INPUT", "message": "invalid token",
				"details": map[string]any{"errors": []map[string]string{{"field": "token", "message": "unknown, used or expired"}}}})
			return
		}
		writeJSON(w, 200, map[string]int{"revokedSessions": 2})
	case r.Method == "GET" && p == "/customers":
		out := wire.List[wire.Customer]{Data: []wire.Customer{}}
		if c, ok := f.customers[q.Get("platformCustomerId")]; ok {
			out.Data = append(out.Data, c)
		}
		writeJSON(w, 200, out)
	case r.Method == "POST" && p == "/customers":
		var in wire.CustomerCreateRequest
		if err := json.Unmarshal(body, &in); err != nil || in.PlatformCustomerID == "" {
			writeErr(w, 400, "INVALID_INPUT", "bad body")
			return
		}
		if f.emailTaken {
			writeErr(w, 409, "EMAIL_OTP_EMAIL_ALREADY_EXISTS", "e-mail already on a credential")
			return
		}
		if f.raceOnCreate {
			f.raceOnCreate = false
			f.addCustomerLocked(in.PlatformCustomerID, in.Email) // the other tab won
			writeErr(w, 409, "CONFLICT", "platformCustomerId taken")
			return
		}
		if _, ok := f.customers[in.PlatformCustomerID]; ok {
			writeErr(w, 409, "CONFLICT", "platformCustomerId taken")
			return
		}
		writeJSON(w, 201, f.addCustomerLocked(in.PlatformCustomerID, in.Email))
	case r.Method == "GET" && p == "/customers/internal-accounts":
		out := wire.List[wire.InternalAccount]{Data: []wire.InternalAccount{}}
		if a, ok := f.accounts[q.Get("customerId")]; ok && (q.Get("type") == "" || q.Get("type") == a.Type) {
			out.Data = append(out.Data, a)
		}
		writeJSON(w, 200, out)
	case r.Method == "GET" && p == "/auth/credentials":
		out := wire.Data[wire.AuthMethod]{Data: []wire.AuthMethod{}}
		if c, ok := f.creds[q.Get("accountId")]; ok {
			out.Data = append(out.Data, c)
		}
		writeJSON(w, 200, out)
	case r.Method == "POST" && len(seg) == 4 && seg[0] == "auth" && seg[1] == "credentials" && seg[3] == "challenge":
		cred, ok := f.credByID(seg[2])
		if !ok {
			writeErr(w, 404, "NOT_FOUND", "no such credential")
			return
		}
		if f.challengeLocked {
			w.Header().Set("Retry-After", "900")
			writeErr(w, 429, "RATE_LIMITED", "too many challenges")
			return
		}
		cred.OTPEncryptionTargetBundle = `{"version":"v1.0.0","data":"7b7d","dataSignature":"30","enclaveQuorumPublic":"04aa"}`
		writeJSON(w, 200, cred)
	case r.Method == "POST" && len(seg) == 4 && seg[0] == "auth" && seg[1] == "credentials" && seg[3] == "verify":
		f.verify(w, r, seg[2], body)
	case (r.Method == "DELETE" && len(seg) == 3 || r.Method == "POST" && len(seg) == 4 && seg[3] == "refresh") &&
		seg[0] == "auth" && seg[1] == "sessions":
		f.sessionOp(w, r, seg[2], body)
	case r.Method == "GET" && p == "/auth/sessions":
		out := wire.Data[wire.Session]{Data: []wire.Session{}}
		for _, s := range f.sessions {
			if s.AccountID == q.Get("accountId") {
				out.Data = append(out.Data, s)
			}
		}
		writeJSON(w, 200, out)
	case r.Method == "GET" && p == "/customers/external-accounts":
		if q.Get("customerId") == "" {
			writeErr(w, 400, "INVALID_INPUT", "customerId required")
			return
		}
		out := wire.List[map[string]any]{Data: []map[string]any{}}
		for _, ea := range f.external {
			if ea["customerId"] == q.Get("customerId") {
				out.Data = append(out.Data, ea)
			}
		}
		writeJSON(w, 200, out)
	case r.Method == "POST" && p == "/customers/external-accounts":
		var in map[string]any
		if err := json.Unmarshal(body, &in); err != nil || in == nil {
			writeErr(w, 400, "INVALID_REQUEST_FORMAT", "bad body")
			return
		}
		info, _ := in["accountInfo"].(map[string]any)
		if info == nil {
			writeJSON(w, 400, wire.Error{Status: 400, Code: "INVALID_INPUT", Message: "invalid input",
				Details: map[string]any{"errors": []wire.FieldError{{Field: "accountInfo", Message: "required"}}}})
			return
		}
		if info["accountNumber"] == "99999999" {
			writeErr(w, 409, "CONFLICT", "an identical external account already exists")
			return
		}
		id := newID("ExternalAccount")
		ea := map[string]any{"id": id, "status": "PENDING", "currency": in["currency"], "accountInfo": info}
		if c, ok := in["customerId"].(string); ok {
			ea["customerId"] = c
		}
		f.external[id] = ea
		writeJSON(w, 201, ea)
	case r.Method == "GET" && p == "/discoveries":
		writeJSON(w, 200, map[string]any{"data": []map[string]string{
			{"bankName": "BDO", "displayName": "BDO Unibank", "country": q.Get("country"), "currency": q.Get("currency")}}})
	case r.Method == "GET" && len(seg) == 3 && seg[0] == "customers" && seg[1] == "external-accounts":
		ea, ok := f.external[seg[2]]
		if !ok {
			writeErr(w, 404, "NOT_FOUND", "external account "+seg[2]+" does not exist")
			return
		}
		writeJSON(w, 200, ea)
	case r.Method == "DELETE" && len(seg) == 3 && seg[0] == "customers" && seg[1] == "external-accounts":
		ea, ok := f.external[seg[2]]
		if !ok {
			writeErr(w, 404, "NOT_FOUND", "external account "+seg[2]+" does not exist")
			return
		}
		ea["status"] = "INACTIVE"
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "GET" && len(seg) == 2 && seg[0] == "quotes":
		qt, ok := f.quotes[seg[1]]
		if !ok {
			writeErr(w, 404, "QUOTE_NOT_FOUND", "no quote "+seg[1])
			return
		}
		writeJSON(w, 200, qt)
	case r.Method == "POST" && p == "/quotes":
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		id := newID("Quote")
		in["id"], in["status"] = id, "PENDING"
		f.quotes[id] = in
		writeJSON(w, 201, in)
	case r.Method == "POST" && len(seg) == 4 && seg[0] == "sandbox" && seg[1] == "internal-accounts" && seg[3] == "fund":
		writeJSON(w, 200, map[string]any{"id": seg[2], "balance": map[string]any{"amount": 500}})
	case r.Method == "GET" && p == "/transactions":
		writeJSON(w, 200, map[string]any{"data": []any{}, "hasMore": false})
	case r.Method == "POST" && len(seg) == 3 && seg[0] == "quotes" && seg[2] == "execute":
		if _, ok := f.quotes[seg[1]]; !ok {
			writeErr(w, 404, "QUOTE_NOT_FOUND", "no quote "+seg[1])
			return
		}
		writeJSON(w, 200, map[string]any{"id": seg[1], "status": "PROCESSING"})
	case r.Method == "POST" && p == "/auth/credentials",
		r.Method == "DELETE" && len(seg) == 3 && seg[0] == "auth" && seg[1] == "credentials",
		r.Method == "POST" && len(seg) == 3 && seg[0] == "internal-accounts" && seg[2] == "export",
		r.Method == "PATCH" && len(seg) == 2 && seg[0] == "internal-accounts":
		// The signed retries the BFF passes through: 202 without the
		// headers, the operation's success code with them.
		if r.Header.Get(wire.HeaderWalletSignature) == "" {
			writeJSON(w, 202, wire.SignedRequestChallenge{PayloadToSign: "{}", RequestID: testRequestID, ExpiresAt: "2030-01-01T00:00:00Z"})
			return
		}
		switch r.Method {
		case "DELETE":
			w.WriteHeader(204)
		case "PATCH":
			writeJSON(w, 200, map[string]any{"id": seg[1]})
		default:
			writeJSON(w, map[bool]int{true: 201, false: 200}[seg[0] == "auth"], map[string]any{"ok": true})
		}
	case r.Method == "GET" && len(seg) == 3 && seg[0] == "internal-accounts" && seg[2] == "entries":
		for _, a := range f.accounts {
			if a.ID == seg[1] {
				writeJSON(w, 200, wire.List[wire.LedgerEntry]{Data: []wire.LedgerEntry{{ID: "LedgerEntry:0199a3c4-0000-7000-8000-0000000000e1-1",
					LedgerTransactionID: "LedgerTransaction:0199a3c4-0000-7000-8000-0000000000e1", Kind: "FUNDING",
					Account: "LedgerAccount:" + strings.TrimPrefix(a.ID, "InternalAccount:") + ":available", Side: wire.SideAvailable,
					Amount: 500, Currency: "USD", AvailableAfter: 500, Description: "Sandbox funding", CreatedAt: "2025-10-13T12:00:00Z"}}})
				return
			}
		}
		writeErr(w, 404, "NOT_FOUND", "no internal account with this id")
	case r.Method == "GET" && p == "/redirect":
		// To a path of this same fake, so that following it would show.
		http.Redirect(w, r, wire.BasePath+"/redirected", http.StatusFound)
	case r.Method == "GET" && p == "/big":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"pad":"` + strings.Repeat("x", maxUpstreamBody) + `"}`))
	default:
		writeErr(w, 404, "NOT_FOUND", "no such path")
	}
}

func (f *fakeService) credByID(id string) (wire.AuthMethod, bool) {
	for _, c := range f.creds {
		if c.ID == id {
			return c, true
		}
	}
	return wire.AuthMethod{}, false
}

// verify mimics the two legs: the "sealed" bundle is "sealed:<code>"; the
// stamp is testStamp over testPayload.
func (f *fakeService) verify(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	cred, ok := f.credByID(id)
	if !ok {
		writeErr(w, 404, "NOT_FOUND", "no such credential")
		return
	}
	var in wire.VerifyRequest
	if err := json.Unmarshal(body, &in); err != nil {
		writeErr(w, 400, "INVALID_INPUT", "bad body")
		return
	}
	if in.EncryptedOTPBundle != "sealed:"+testCode {
		w.Header().Set("X-Fake-Reason", "wrong code")
		writeErr(w, 401, "UNAUTHORIZED", "the code is wrong or expired")
		return
	}
	sig := r.Header.Get(wire.HeaderWalletSignature)
	if sig == "" {
		writeJSON(w, 202, wire.SignedRequestChallenge{Type: wire.TypeEmailOTP, PayloadToSign: testPayload,
			RequestID: testRequestID, ExpiresAt: f.now().Add(5 * time.Minute).UTC().Format(time.RFC3339)})
		return
	}
	if r.Header.Get(wire.HeaderRequestID) != testRequestID {
		writeErr(w, 401, "REQUEST_ID_MISSING", "request id missing")
		return
	}
	if sig != testStamp {
		writeErr(w, 401, "WALLET_SIGNATURE_INVALID", "signature does not verify")
		return
	}
	account := cred.AccountID
	if f.sessionAccount != "" {
		account = f.sessionAccount
	}
	s := wire.Session{ID: newID("Session"), AccountID: account, Type: wire.TypeEmailOTP, Nickname: cred.Nickname,
		CreatedAt: f.now().UTC().Format(time.RFC3339), UpdatedAt: f.now().UTC().Format(time.RFC3339),
		ExpiresAt: f.now().Add(f.sessionTTL).UTC().Format(time.RFC3339)}
	f.sessions[s.ID] = s
	writeJSON(w, 200, s)
}

// sessionOp mimics DELETE /auth/sessions/{id} and its refresh: 404 for a
// session it does not hold, 202 without a signature, 401 unless the retry
// carries testStamp and testRequestID; then 204 (revoked) or 201 with a new
// session replacing the old one.
func (f *fakeService) sessionOp(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	old, ok := f.sessions[id]
	if !ok {
		writeErr(w, 404, "NOT_FOUND", "no active session with this id")
		return
	}
	if r.Header.Get(wire.HeaderWalletSignature) == "" {
		writeJSON(w, 202, wire.SignedRequestChallenge{Type: old.Type, PayloadToSign: testPayload,
			RequestID: testRequestID, ExpiresAt: f.now().Add(5 * time.Minute).UTC().Format(time.RFC3339)})
		return
	}
	if r.Header.Get(wire.HeaderWalletSignature) != testStamp || r.Header.Get(wire.HeaderRequestID) != testRequestID {
		writeErr(w, 401, "WALLET_SIGNATURE_INVALID", "signature does not verify")
		return
	}
	delete(f.sessions, id)
	if r.Method == "DELETE" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var in struct{ ClientPublicKey string }
	if err := json.Unmarshal(body, &in); err != nil || in.ClientPublicKey == "" {
		writeErr(w, 400, "INVALID_INPUT", "clientPublicKey required")
		return
	}
	s := old
	s.ID = newID("Session")
	s.ExpiresAt = f.now().Add(f.sessionTTL).UTC().Format(time.RFC3339)
	f.sessions[s.ID] = s
	writeJSON(w, 201, s)
}

// ---- harness -----------------------------------------------------------

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const testModule = "\x00asm\x01\x00\x00\x00raw-module"

// testSite is a small embedded site with a fake wallet module and its
// precompressed copies.
func testSite() fstest.MapFS {
	return fstest.MapFS{
		"index.html":          {Data: []byte(`<!doctype html><head><title>t</title><script type="module" src="/js/app.js"></script></head>`)},
		"js/app.js":           {Data: []byte("export {};\n")},
		"wasm/wallet.wasm":    {Data: []byte(testModule)},
		"wasm/wallet.wasm.br": {Data: brotliOf(testModule)},
		"wasm/wallet.wasm.gz": {Data: gzipOf(testModule)},
		"wasm/wasm_exec.js":   {Data: []byte("globalThis.Go = class {};\n")},
		"wasm/.gitignore":     {Data: []byte("wallet.wasm\n")},
	}
}

func gzipOf(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

func brotliOf(s string) []byte {
	var b bytes.Buffer
	w := brotli.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

type harness struct {
	t      testing.TB
	svc    *fakeService
	up     *httptest.Server
	srv    *Server
	clock  *clock
	cookie string // the browser's cookie jar: one cookie
	logs   *bytes.Buffer
	seen   []*response // every response, for the secret scan
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// nobody reports whether r is GET /api/me's answer when nobody is signed
// in: 200 {"signedIn":false}.
func (r *response) nobody() bool {
	return r.status == 200 && string(r.body) == `{"signedIn":false}`
}

// somebody reports whether r is GET /api/me's answer for a signed-in
// browser.
func (r *response) somebody() bool {
	var m struct{ SignedIn bool }
	return r.status == 200 && json.Unmarshal(r.body, &m) == nil && m.SignedIn
}

func (r *response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

func (r *response) code(t *testing.T) string {
	t.Helper()
	c, _ := r.json(t)["code"].(string)
	return c
}

func newHarness(t testing.TB, opts ...func(*Config)) *harness {
	t.Helper()
	clk := &clock{t: time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)}
	h := &harness{t: t, clock: clk, logs: &bytes.Buffer{}}
	h.svc = newFakeService(t, clk.Now)
	h.up = httptest.NewServer(h.svc)
	t.Cleanup(h.up.Close)
	cfg := Config{
		ServiceURL:         h.up.URL + wire.BasePath,
		PlatformCredential: testCred,
		Mode:               ModeSandbox,
		OTPSignerPublicKey: testSignerKey,
		Logger:             slog.New(slog.NewTextHandler(&lockedWriter{w: h.logs}, nil)),
		Now:                clk.Now,
		static:             testSite(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	return h
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// browserHeaders are what a same-origin fetch from the pages sends.
var browserHeaders = map[string]string{"X-CSRF": "1", "Sec-Fetch-Site": "same-origin"}

// do sends a request like the browser would: same-origin headers (unless
// hdr overrides them with ""), the cookie jar, and records the response.
func (h *harness) do(method, path, body string, hdr map[string]string) *response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://localhost:8080"+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.HasPrefix(path, "/api") {
		for k, v := range browserHeaders {
			req.Header.Set(k, v)
		}
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if h.cookie != "" && req.Header.Get("Cookie") == "" {
		req.Header.Set("Cookie", CookieName+"="+h.cookie)
	}
	resp, err := h.srv.App().Test(req, -1)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := &response{status: resp.StatusCode, header: resp.Header, body: b}
	h.seen = append(h.seen, r)
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			if c.Value == "" || (!c.Expires.IsZero() && !c.Expires.After(h.clock.Now())) {
				h.cookie = ""
			} else {
				h.cookie = c.Value
			}
		}
	}
	return r
}

// login runs the whole e-mail OTP login and returns the final response.
func (h *harness) login(email string) *response {
	h.t.Helper()
	r := h.do("POST", "/api/login/start", `{"email":"`+email+`"}`, nil)
	if r.status != 200 {
		h.t.Fatalf("login start: %d %s", r.status, r.body)
	}
	body := `{"type":"EMAIL_OTP","encryptedOtpBundle":"sealed:` + testCode + `"}`
	r = h.do("POST", "/api/login/verify", body, nil)
	if r.status != 202 {
		h.t.Fatalf("verify leg 1: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/api/login/verify", body, map[string]string{
		wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID})
	if r.status != 200 {
		h.t.Fatalf("verify leg 2: %d %s", r.status, r.body)
	}
	return r
}
