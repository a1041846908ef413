package service

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

const testCredential = "tok_test:s3cret-platform-value"

// clock is a settable clock for exact expiry tests.
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
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is one service on a fresh SQLite database with a dev mailbox.
type env struct {
	t   *testing.T
	cfg Config // as the service runs with it (defaults filled in)
	// deposits counts e.deposit's credits, each with its own bank reference.
	deposits int
	svc      *Service
	store    store.Store
	box      *mail.Mailbox
	clock    *clock
	h        http.Handler
}

func newEnv(t *testing.T, mutate ...func(*Config)) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	box := &mail.Mailbox{}
	cfg := Config{
		Mailer:             box,
		PlatformCredential: testCredential,
		Now:                clk.Now,
		AtRestKey:          testAtRestKey,
		WebAuthnRPID:       testRPID,
		WebAuthnOrigins:    []string{testOrigin},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	if cfg.Store == nil {
		st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		cfg.Store = st
	}
	svc, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, cfg: svc.Config(), svc: svc, store: cfg.Store, box: box, clock: clk, h: validateAgainstDocument(t, svc.Handler())}
}

// onPostgres runs the service on a fresh PostgreSQL database.
func onPostgres(t *testing.T) func(*Config) {
	url := pgtest.Start(t).NewDatabase(t)
	st, err := sqlstore.OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return func(c *Config) { c.Store = st }
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// The relying party and at-rest key of every test service.
const (
	testRPID   = "localhost"
	testOrigin = "http://localhost:8080"
)

var testAtRestKey = []byte("0123456789abcdef0123456789abcdef")

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r response) errorBody(t *testing.T) wire.Error {
	t.Helper()
	var e wire.Error
	r.decode(t, &e)
	if e.Status != r.status {
		t.Fatalf("error body status %d != HTTP status %d: %s", e.Status, r.status, r.body)
	}
	return e
}

// do sends a request with the platform credential unless headers override
// Authorization (set it to "" to send none).
// testRequestID is the Request-Id env.do sends unless told otherwise.
const testRequestID = "req_test"

func (e *env) do(method, path string, body any, headers map[string]string) response {
	e.t.Helper()
	var rdr *bytes.Reader
	switch b := body.(type) {
	case nil:
		rdr = bytes.NewReader(nil)
	case []byte:
		rdr = bytes.NewReader(b)
	case string:
		rdr = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rdr = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, wire.BasePath+path, rdr)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth("tok_test", "s3cret-platform-value")
	// One Request-Id for every request (a caller's correlation id, which
	// error bodies echo as requestId), so that two answers compare byte
	// for byte; headers may replace it or, with "", drop it.
	req.Header.Set(wire.HeaderRequestID, testRequestID)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func (e *env) mustStatus(r response, want int) {
	e.t.Helper()
	if r.status != want {
		e.t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
}

// wallet is a customer with its embedded wallet and EMAIL_OTP credential.
type wallet struct {
	customer   wire.Customer
	account    wire.InternalAccount
	credential wire.AuthMethod
	email      string
}

func (e *env) newWallet(email string) wallet {
	e.t.Helper()
	r := e.do("POST", "/customers", map[string]any{"platformCustomerId": "p-" + email, "customerType": "INDIVIDUAL", "email": email}, nil)
	e.mustStatus(r, http.StatusCreated)
	var w wallet
	w.email = email
	r.decode(e.t, &w.customer)
	r = e.do("GET", "/customers/internal-accounts?customerId="+w.customer.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var accts wire.List[wire.InternalAccount]
	r.decode(e.t, &accts)
	if len(accts.Data) != 1 {
		e.t.Fatalf("want 1 internal account, got %s", r.body)
	}
	w.account = accts.Data[0]
	r = e.do("GET", "/auth/credentials?accountId="+w.account.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var creds wire.Data[wire.AuthMethod]
	r.decode(e.t, &creds)
	if len(creds.Data) != 1 {
		e.t.Fatalf("want 1 credential, got %s", r.body)
	}
	w.credential = creds.Data[0]
	return w
}

// challenge asks for a code and returns the AuthMethod and the e-mailed code.
func (e *env) challenge(w wallet) (wire.AuthMethod, string) {
	e.t.Helper()
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/challenge", map[string]any{}, nil)
	e.mustStatus(r, http.StatusOK)
	var am wire.AuthMethod
	r.decode(e.t, &am)
	msg, ok := e.box.Latest(w.email)
	if !ok || len(msg.Code) != 6 {
		e.t.Fatalf("no code e-mailed to %s", w.email)
	}
	return am, msg.Code
}

// sealCode plays the browser: verify the target bundle against the pinned
// signer and seal the code with the client key.
func (e *env) sealCode(am wire.AuthMethod, code string, client *walletcrypto.PrivateKey) string {
	e.t.Helper()
	target, err := walletcrypto.VerifyTargetBundle(am.OTPEncryptionTargetBundle, e.svc.SignerPublicKey())
	if err != nil {
		e.t.Fatal(err)
	}
	sealed, err := walletcrypto.SealOTP(target, code, client.PublicKey())
	if err != nil {
		e.t.Fatal(err)
	}
	return sealed
}

func verifyBody(sealed string) map[string]any {
	return map[string]any{"type": "EMAIL_OTP", "encryptedOtpBundle": sealed}
}

func mustKey(t *testing.T) *walletcrypto.PrivateKey {
	t.Helper()
	k, err := walletcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustStamp(t *testing.T, k *walletcrypto.PrivateKey, payload string) string {
	t.Helper()
	s, err := walletcrypto.SignStamp(k, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// login runs both legs and returns the session.
func (e *env) login(w wallet, client *walletcrypto.PrivateKey) wire.Session {
	e.t.Helper()
	am, code := e.challenge(w)
	body := verifyBody(e.sealCode(am, code, client))
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, nil)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(e.t, &ch)
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, map[string]string{
		wire.HeaderWalletSignature: mustStamp(e.t, client, ch.PayloadToSign),
		wire.HeaderRequestID:       ch.RequestID,
	})
	e.mustStatus(r, http.StatusOK)
	var s wire.Session
	r.decode(e.t, &s)
	return s
}

// timestamp is how the service writes an instant (RFC 3339, UTC, Z).
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// sandboxPasskeySignature is the reference sandbox's literal a passkey
// assertion may carry in place of a signature (sandbox mode only).
const sandboxPasskeySignature = "sandbox-valid-passkey-signature"

// signerSetting is the settings row of the target-bundle signer key: a
// stored name, so a database written by an older version keeps its key.
const signerSetting = "otp_target_bundle_signer_key"

// webhookKeysSetting is the settings row of the webhook signing keys.
const webhookKeysSetting = "webhook_signing_keys"
