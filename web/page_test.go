package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// These tests run the real pages in headless Chromium against a scripted
// fake of the BFF's /api, with a stand-in for the wallet module (so they
// need neither the wasm build nor a service). e2e/ runs the whole stack.

const (
	pageCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
		"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	fakeSigner  = "04" + "11111111111111111111111111111111111111111111111111111111111111112222222222222222222222222222222222222222222222222222222222222222"
	fakeBundle  = `{"version":"v1.0.0","data":"7b7d","dataSignature":"30","enclaveQuorumPublic":"04aa"}`
	fakePayload = "payload-to-sign"
	fakeReqID   = "Request:0199a000-0000-7000-8000-000000000001"
	fakeAccount = "InternalAccount:0199a000-0000-7000-8000-0000000000aa"
)

// walletStub replaces the wasm module: wallet.js returns globalThis.paywallet
// when it exists. Every call is recorded in globalThis.walletCalls. The
// stored session key lives in localStorage (shared by the tabs of the
// origin, as IndexedDB is); globalThis.refuseStore, set before the page's
// code runs (refuseStore below), makes the browser refuse to keep it. The
// n-th key made in a tab is "02" followed by n + globalThis.stubKeyBase in
// 64 digits. accountForm answers as the module does (accountrules.Form).
var walletStub = `(() => {
  if (typeof globalThis.Go !== "function") globalThis.Go = function () {};
  const calls = (globalThis.walletCalls = []);
  const publicKeys = new Map();
  let n = 0, r = 0;
  const refused = (method) => new Error(method + ": this browser does not let the wallet keep keys: refused in this test");
  globalThis.paywallet = Object.freeze({
    generateKey: async (purpose = "signing") => {
      n++;
      calls.push(purpose === "signing" ? ["generateKey"] : ["generateKey", purpose]);
      const handle = "h" + n, publicKey = "02" + String(n + (globalThis.stubKeyBase || 0)).padStart(64, "0");
      publicKeys.set(handle, publicKey);
      return { handle, publicKey, purpose };
    },
    sealOtp: async (handle, code, bundle, signer) => {
      calls.push(["sealOtp", handle, code, bundle, signer]);
      return "sealed:" + code;
    },
    stamp: async (handle, payload) => {
      calls.push(["stamp", handle, payload]);
      return "stamp-of-" + payload;
    },
    forget: async (handle) => {
      calls.push(["forget", handle]);
      return publicKeys.delete(handle);
    },
    setExpiry: async () => true,
    accountForm: async () => (` + accountFormJSON + `),
    storeSession: async (handle, { sessionId, expiresAtMs }) => {
      calls.push(["storeSession", handle, sessionId]);
      if (globalThis.refuseStore) throw refused("storeSession");
      if (!publicKeys.has(handle)) throw new Error("storeSession: unknown key handle");
      localStorage.setItem("stub-session", JSON.stringify({ publicKey: publicKeys.get(handle), sessionId, expiresAtMs }));
      return true;
    },
    resumeSession: async () => {
      calls.push(["resumeSession"]);
      if (globalThis.refuseStore) throw refused("resumeSession");
      const record = JSON.parse(localStorage.getItem("stub-session") || "null");
      if (!record) return null;
      if (record.expiresAtMs <= Date.now()) {
        localStorage.removeItem("stub-session");
        return null;
      }
      r++;
      const handle = "r" + r;
      publicKeys.set(handle, record.publicKey);
      return { handle, publicKey: record.publicKey, purpose: "signing", sessionId: record.sessionId, expiresAtMs: record.expiresAtMs };
    },
    deleteSession: async (sessionId) => {
      calls.push(sessionId === undefined ? ["deleteSession"] : ["deleteSession", sessionId]);
      const record = JSON.parse(localStorage.getItem("stub-session") || "null");
      if (!record || (sessionId !== undefined && record.sessionId !== sessionId)) return false;
      localStorage.removeItem("stub-session");
      return true;
    },
  });
})();`

// refuseStore makes the stub's storeSession and resumeSession reject, as
// in a browser without a usable IndexedDB.
const refuseStore = `globalThis.refuseStore = true;`

// storedSession is the stub's stored session record as JSON ("null" when
// there is none).
const storedSession = `localStorage.getItem("stub-session") || "null"`

// clockSkew moves the page's wall clock by the given milliseconds.
func clockSkew(ms int64) string {
	return fmt.Sprintf(`(() => {
  const skew = %d, Real = Date;
  class Skewed extends Real {
    constructor(...a) { if (a.length === 0) super(Real.now() + skew); else super(...a); }
    static now() { return Real.now() + skew; }
  }
  globalThis.Date = Skewed;
})();`, ms)
}

type apiCall struct {
	method, path, query, body string
	header                    http.Header
}

type reply struct {
	status int
	header map[string]string
	body   string
}

// fakeAPI is the BFF as the page sees it.
type fakeAPI struct {
	mu        sync.Mutex
	calls     []apiCall
	signedIn  bool
	logins    int         // completed logins; the session id changes with each
	starts    []reply     // queued answers to login/start; success when empty
	verify    *reply      // when set, the answer to every verify
	expiresIn any         // me.session.expiresIn
	external  []string    // external accounts (JSON objects) GET /api/customers/external-accounts lists
	create    []reply     // queued answers to POST /api/customers/external-accounts; 201 when empty
	others    []string    // ids of the account's other active sessions
	refreshes int         // completed session refreshes; the session id changes with each
	events    *fakeEvents // GET /api/events (events_test.go)

	// devices are the "device" members (JSON objects) the BFF adds to GET
	// /api/auth/sessions, by session id; "" is this tab's own session.
	devices map[string]string
}

func (f *fakeAPI) set(change func(*fakeAPI)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeAPI) requests(path string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if path == "" || c.path == path {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, apiCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, body: string(body), header: r.Header.Clone()})
	send := func(rp reply) {
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		if rp.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rp.status)
		_, _ = io.WriteString(w, rp.body)
	}
	signedOut := reply{status: 401, body: `{"status":401,"code":"UNAUTHORIZED","message":"not signed in"}`}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/config":
		send(reply{status: 200, body: `{"mode":"sandbox","otpSignerPublicKey":"` + fakeSigner +
			`","wasmUrl":"/wasm/wallet.wasm","wasmExecUrl":"/wasm/wasm_exec.js","devMailbox":false` + configFacts + `}`})
	case "POST /api/login/start":
		if len(f.starts) > 0 {
			rp := f.starts[0]
			f.starts = f.starts[1:]
			send(rp)
			return
		}
		var in struct{ Email string }
		_ = json.Unmarshal(body, &in)
		send(reply{status: 200, body: `{"otpEncryptionTargetBundle":` + quote(fakeBundle) + `,"email":` + quote(in.Email) + `}`})
	case "POST /api/login/verify":
		switch {
		case f.verify != nil:
			send(*f.verify)
		case r.Header.Get("Service-Wallet-Signature") == "":
			send(reply{status: 202, body: `{"type":"EMAIL_OTP","payloadToSign":"` + fakePayload + `","requestId":"` + fakeReqID + `","expiresAt":"2099-01-01T00:00:00Z"}`})
		default:
			f.signedIn = true
			f.logins++
			send(reply{status: 200, body: `{"id":"` + f.sessionID() + `","accountId":"` + fakeAccount + `","type":"EMAIL_OTP","expiresAt":"2099-01-01T00:00:00Z"}`})
		}
	case "GET /api/me":
		if !f.signedIn {
			send(reply{status: 200, body: `{"signedIn":false}`}) // the BFF's "nobody" (bff handleMe)
			return
		}
		expiresIn, _ := json.Marshal(f.expiresIn)
		if f.expiresIn == nil {
			expiresIn = []byte("900")
		}
		send(reply{status: 200, body: `{"email":"ada@example.com","customerId":"Customer:0199a000-0000-7000-8000-0000000000cc",` +
			`"internalAccount":{"id":"` + fakeAccount + `","type":"EMBEDDED_WALLET","status":"ACTIVE","balance":{"amount":123456,"currency":{"code":"USD","symbol":"$","decimals":2}}},` +
			`"session":{"id":"` + f.sessionID() + `","type":"EMAIL_OTP","nickname":"ada@example.com","expiresAt":"` +
			time.Now().Add(15*time.Minute).UTC().Format(time.RFC3339) + `","expiresIn":` + string(expiresIn) + `}}`})
	case "GET /api/auth/sessions":
		if !f.signedIn {
			send(signedOut)
			return
		}
		device := func(key string) string {
			if d, ok := f.devices[key]; ok {
				return `,"device":` + d
			}
			return ""
		}
		items := []string{`{"id":"` + f.sessionID() + `","accountId":"` + fakeAccount + `","type":"EMAIL_OTP","createdAt":"2026-11-23T09:00:00Z","expiresAt":"2099-01-01T00:00:00Z"` + device("") + `}`}
		for _, id := range f.others {
			items = append(items, `{"id":"`+id+`","accountId":"`+fakeAccount+`","type":"EMAIL_OTP","createdAt":"2026-11-22T09:00:00Z","expiresAt":"2099-01-01T00:00:00Z"`+device(id)+`}`)
		}
		send(reply{status: 200, body: `{"data":[` + strings.Join(items, ",") + `]}`})
	case "GET /api/customers/external-accounts":
		send(reply{status: 200, body: `{"data":[` + strings.Join(f.external, ",") + `],"hasMore":false}`})
	case "POST /api/customers/external-accounts":
		if len(f.create) > 0 {
			rp := f.create[0]
			f.create = f.create[1:]
			send(rp)
			return
		}
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		status := "PENDING"
		if info, _ := in["accountInfo"].(map[string]any); info != nil && info["accountType"] == "SPARK_WALLET" {
			status = "ACTIVE"
		}
		in["id"] = fmt.Sprintf("ExternalAccount:0199a000-0000-7000-8000-%012d", len(f.external)+1)
		in["status"] = status
		out, _ := json.Marshal(in)
		f.external = append(f.external, string(out))
		send(reply{status: 201, body: string(out)})
	case "GET /api/discoveries":
		q := r.URL.Query()
		send(reply{status: 200, body: `{"data":[{"bankName":"BDO Unibank, Inc.","displayName":"BDO","country":"` + q.Get("country") +
			`","currency":"` + q.Get("currency") + `"},{"bankName":"Other Bank","displayName":"Other","country":"PH","currency":"PHP"}]}`})
	case "POST /api/logout":
		f.signedIn = false
		send(reply{status: 204})
	default:
		if strings.HasPrefix(r.URL.Path, "/api/auth/sessions/") {
			f.sessionOp(r, send)
			return
		}
		send(reply{status: 404, body: `{"status":404,"code":"NOT_FOUND","message":"not found"}`})
	}
}

func (f *fakeAPI) sessionID() string {
	return fmt.Sprintf("Session:0199a000-0000-7000-8000-%012d", f.logins+1000*f.refreshes)
}

// sessionOp answers DELETE /api/auth/sessions/{id} and POST
// /api/auth/sessions/{id}/refresh: 202 without a signature, then, with the
// stub wallet's stamp over fakePayload, 204 (revoked) or 201 (a new session
// with a full lifetime).
func (f *fakeAPI) sessionOp(r *http.Request, send func(reply)) {
	rest := strings.TrimPrefix(r.URL.Path, "/api/auth/sessions/")
	id, refresh := strings.CutSuffix(rest, "/refresh")
	known := f.signedIn && id == f.sessionID() || !refresh && slices.Contains(f.others, id)
	if !known || refresh != (r.Method == "POST") || !refresh && r.Method != "DELETE" {
		send(reply{status: 404, body: `{"status":404,"code":"NOT_FOUND","message":"not found"}`})
		return
	}
	switch r.Header.Get("Service-Wallet-Signature") {
	case "":
		send(reply{status: 202, body: `{"payloadToSign":"` + fakePayload + `","requestId":"` + fakeReqID + `","expiresAt":"2099-01-01T00:00:00Z"}`})
		return
	case "stamp-of-" + fakePayload:
	default:
		send(reply{status: 401, body: `{"status":401,"code":"WALLET_SIGNATURE_INVALID","message":"bad signature"}`})
		return
	}
	if refresh {
		f.refreshes++
		f.expiresIn = nil
		send(reply{status: 201, body: `{"id":"` + f.sessionID() + `","accountId":"` + fakeAccount + `","type":"EMAIL_OTP","expiresAt":"2099-01-01T00:00:00Z"}`})
		return
	}
	if id == f.sessionID() {
		f.signedIn = false
	}
	f.others = slices.DeleteFunc(f.others, func(o string) bool { return o == id })
	send(reply{status: 204})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// startSite serves the embedded pages with the BFF's CSP, and the fake /api.
func startSite(t *testing.T) (string, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{events: &fakeEvents{}}
	files := siteFiles()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		if r.URL.Path == "/api/events" {
			api.events.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			api.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// localhost, as for the BFF: a secure context.
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), api
}

// siteFiles serves the embedded pages as the BFF does: the files, the page
// at every view's address, and the page with 404 at any other page address.
func siteFiles() http.Handler {
	files := http.FileServer(http.FS(Files()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := View(r.URL.Path); ok && r.URL.Path != "/" {
			r = r.Clone(r.Context())
			r.URL.Path = "/"
		} else if !ok && !strings.Contains(path.Base(r.URL.Path), ".") {
			page, _ := fs.ReadFile(Files(), "index.html")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			w.Write(page)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// newTab starts headless Chromium (Chromium must be installed; `make test`
// installs it) and returns a tab in which the wallet stub and the given
// scripts run before the page's own.
func newTab(t *testing.T, scripts ...string) context.Context {
	t.Helper()
	ctx := browsertest.New(t, 60*time.Second)
	prepareTab(t, ctx, scripts...)
	return ctx
}

// anotherTab opens a second tab of the same browser (same cookies, same
// BroadcastChannel).
func anotherTab(t *testing.T, first context.Context, scripts ...string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(first)
	t.Cleanup(cancel)
	prepareTab(t, ctx, scripts...)
	return ctx
}

func prepareTab(t *testing.T, ctx context.Context, scripts ...string) {
	t.Helper()
	// Amounts and times read as in en-US, whatever the machine's locale.
	if err := browsertest.FixLocale(ctx); err != nil {
		t.Fatalf("preparing the tab: %v", err)
	}
	for _, src := range append([]string{walletStub}, scripts...) {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
			t.Fatalf("preparing the tab: %v", err)
		}
	}
}

// front makes the tab the one in view, as a person switching tabs does.
func front(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition in the tab (by timer, so that it also
// works in a tab in the background).
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("waiting for %s: %v", cond, err)
	}
}

func shown(id string) string {
	return `(() => { const el = document.getElementById("` + id + `"); return !!el && el.offsetParent !== null; })()`
}

func walletCalls(t *testing.T, ctx context.Context) [][]string {
	t.Helper()
	var calls [][]string
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `JSON.stringify(globalThis.walletCalls)`)), &calls); err != nil {
		t.Fatal(err)
	}
	return calls
}

func called(calls [][]string, want ...string) bool {
	for _, c := range calls {
		if strings.Join(c, " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}

// askForCode opens url signed out and asks for an e-mail code; it returns
// when the code step is shown.
func askForCode(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	)
}

// signIn walks the page through the e-mail and code steps.
func signIn(t *testing.T, ctx context.Context, site string) {
	t.Helper()
	askForCode(t, ctx, site+"/")
	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("code"), "123456"),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
}

var countdown = regexp.MustCompile(`^(14:5[0-9]|15:00)$`)

// TestPageSignsIn runs the login as the page does it and checks what it
// sends, what it asks of the wallet module, and what it shows.
func TestPageSignsIn(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)

	for _, c := range api.requests("") {
		if c.header.Get("X-CSRF") != "1" {
			t.Errorf("%s %s without X-CSRF: 1", c.method, c.path)
		}
	}
	verify := api.requests("/api/login/verify")
	if len(verify) != 2 {
		t.Fatalf("%d verify requests, want 2", len(verify))
	}
	if verify[0].body != verify[1].body || !strings.Contains(verify[0].body, `"encryptedOtpBundle":"sealed:123456"`) {
		t.Errorf("verify bodies differ or lack the sealed code: %q / %q", verify[0].body, verify[1].body)
	}
	if verify[1].header.Get("Service-Wallet-Signature") != "stamp-of-"+fakePayload || verify[1].header.Get("Request-Id") != fakeReqID {
		t.Errorf("leg 2 headers %v", verify[1].header)
	}
	calls := walletCalls(t, ctx)
	for _, want := range [][]string{
		{"generateKey"},
		{"sealOtp", "h1", "123456", fakeBundle, fakeSigner},
		{"stamp", "h1", fakePayload},
	} {
		if !called(calls, want...) {
			t.Errorf("the wallet was not asked %v; calls %v", want, calls)
		}
	}

	if got := eval[string](t, ctx, `document.getElementById("me-email").textContent`); got != "ada@example.com" {
		t.Errorf("#me-email %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("account-id").textContent`); got != fakeAccount {
		t.Errorf("#account-id %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("session-public-key").dataset.value`); got != "02"+strings.Repeat("0", 63)+"1" {
		t.Errorf("#session-public-key data-value %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("session-expiry").textContent`); !countdown.MatchString(got) {
		t.Errorf("#session-expiry %q", got)
	}
	if !eval[bool](t, ctx, shown("sandbox-banner")) {
		t.Error("the sandbox banner is hidden")
	}

	do(t, ctx, chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	if len(api.requests("/api/logout")) != 1 {
		t.Error("no POST /api/logout")
	}
	if !called(walletCalls(t, ctx), "forget", "h1") {
		t.Error("the key was not forgotten at logout")
	}
}

// TestPageResendRateLimited: "Send a new code" answered 429 says so on the
// code step and holds the button back for Retry-After seconds.
func TestPageResendRateLimited(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t)
	askForCode(t, ctx, site+"/")
	api.set(func(f *fakeAPI) {
		f.starts = append(f.starts, reply{status: 429, header: map[string]string{"Retry-After": "3"},
			body: `{"status":429,"code":"RATE_LIMITED","message":"a code was sent moments ago"}`})
	})
	do(t, ctx, chromedp.Click(chromedp.ID("code-resend")), chromedp.WaitVisible(chromedp.ID("code-error")))
	msg := eval[string](t, ctx, `document.getElementById("code-error").textContent`)
	if !strings.Contains(msg, "3 seconds") {
		t.Errorf("#code-error %q, want the wait", msg)
	}
	if !eval[bool](t, ctx, shown("code-form")) {
		t.Error("the code step was left")
	}
	if !eval[bool](t, ctx, `document.getElementById("code-resend").disabled`) {
		t.Error("the resend button is not held back")
	}
	if label := eval[string](t, ctx, `document.getElementById("code-resend").textContent`); !strings.Contains(label, "00:0") {
		t.Errorf("resend label %q, want a countdown", label)
	}
	if eval[bool](t, ctx, `document.getElementById("code-submit").disabled`) {
		t.Error("the code can no longer be entered")
	}
	waitFor(t, ctx, `!document.getElementById("code-resend").disabled && document.getElementById("code-resend").textContent === "Send a new code"`)
}

// TestPageIgnoresClockSkew: the countdown comes from the server's
// expiresIn, so a wrong clock on the device neither signs the person out
// nor shows a wrong time, and an unusable value signs nobody out.
func TestPageIgnoresClockSkew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		skew      int64
		expiresIn any
		want      *regexp.Regexp
	}{
		{"clock an hour fast", 3600_000, nil, countdown},
		{"clock an hour slow", -3600_000, nil, countdown},
		{"expiresIn not a number", 0, "soon", regexp.MustCompile(`^[^0-9]*$`)},
		{"expiresIn empty", 0, "", regexp.MustCompile(`^[^0-9]*$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site, api := startSite(t)
			api.set(func(f *fakeAPI) { f.expiresIn = tc.expiresIn })
			ctx := newTab(t, clockSkew(tc.skew))
			signIn(t, ctx, site)
			time.Sleep(1500 * time.Millisecond)
			if !eval[bool](t, ctx, shown("signed-in")) || len(api.requests("/api/logout")) != 0 {
				t.Fatal("the page signed out")
			}
			if got := eval[string](t, ctx, `document.getElementById("session-expiry").textContent`); !tc.want.MatchString(got) {
				t.Errorf("#session-expiry %q, want %v", got, tc.want)
			}
		})
	}
}

// TestPageFollowsOtherTabs: a second tab resumes the stored key of the
// session; signing out or in in one tab, or the session ending on the
// server, is reflected in every tab, and a tab whose key no longer signs for
// the session forgets it.
func TestPageFollowsOtherTabs(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	a := newTab(t)
	signIn(t, a, site)
	aKey := eval[string](t, a, `document.getElementById("session-public-key").dataset.value`)
	b := anotherTab(t, a)
	do(t, b, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.ID("signed-in")))
	// The wallet is drawn before the key is resumed (draw first, keys after).
	waitFor(t, b, `document.getElementById("session-public-key").dataset.value !== ""`)
	if got := eval[string](t, b, `document.getElementById("session-public-key").dataset.value`); got != aKey || !called(walletCalls(t, b), "resumeSession") {
		t.Errorf("tab B shows key %q, want tab A's %q resumed; calls %v", got, aKey, walletCalls(t, b))
	}

	// Logout in B (signed with the resumed key) ends A too, A wipes its
	// key, and the stored key is gone.
	do(t, b, chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	waitFor(t, a, shown("email"))
	if !called(walletCalls(t, b), "stamp", "r1", fakePayload) {
		t.Errorf("tab B did not sign its logout with the resumed key: %v", walletCalls(t, b))
	}
	if !called(walletCalls(t, a), "forget", "h1") {
		t.Errorf("tab A kept its key after the logout in tab B: %v", walletCalls(t, a))
	}
	if got := eval[string](t, a, storedSession); got != "null" {
		t.Errorf("stored after the logout: %s", got)
	}

	// A is half-way through a new login when B signs in: the cookie is now
	// B's session, so A drops its login and its key, and takes the key B
	// stored.
	front(t, a)
	do(t, a,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("email").value = ""`),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	)
	front(t, b)
	do(t, b,
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
		chromedp.SendKeys(chromedp.ID("code"), "123456"),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
	bKey := eval[string](t, b, `document.getElementById("session-public-key").dataset.value`)
	waitFor(t, a, shown("signed-in")+` && document.getElementById("session-public-key").dataset.value === `+quote(bKey))
	if !called(walletCalls(t, a), "forget", "h2") {
		t.Errorf("tab A kept the key of a replaced login: %v", walletCalls(t, a))
	}

	// The session ends on the server: B notices when it is looked at again,
	// deletes the stored key, and tells A.
	api.set(func(f *fakeAPI) { f.signedIn = false })
	do(t, b, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new Event("visibilitychange"))`))
	waitFor(t, b, shown("email"))
	if !called(walletCalls(t, b), "forget", "h1") {
		t.Errorf("tab B kept its key after a 401: %v", walletCalls(t, b))
	}
	waitFor(t, a, shown("email"))
	if got := eval[string](t, a, storedSession); got != "null" {
		t.Errorf("stored after the session ended: %s", got)
	}
	if n := len(api.requests("/api/logout")); n != 1 {
		t.Errorf("%d POST /api/logout, want 1 (only the sign-out; a 401 ends nothing more)", n)
	}
}

// TestPageNoPendingLogin: when the BFF no longer knows the login, the page
// starts over and drops the key and the login it held.
func TestPageNoPendingLogin(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t)
	do(t, ctx,
		chromedp.Navigate(site+"/"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	)
	api.set(func(f *fakeAPI) {
		f.verify = &reply{status: 400, body: `{"status":400,"code":"INVALID_INPUT","message":"no login in progress","details":{"reason":"NO_PENDING_LOGIN"}}`}
	})
	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("code"), "123456"),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.WaitVisible(chromedp.ID("login-error")),
	)
	if !called(walletCalls(t, ctx), "forget", "h1") {
		t.Errorf("the key of the lost login was kept: %v", walletCalls(t, ctx))
	}
	// The lost login is gone too: "Send a new code" has nothing to resend.
	starts := len(api.requests("/api/login/start"))
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("code-resend").click()`), chromedp.Sleep(300*time.Millisecond))
	if n := len(api.requests("/api/login/start")); n != starts {
		t.Errorf("a code was sent for the lost login (%d starts, was %d)", n, starts)
	}
}
