package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"paywallet/internal/bffclient"
	"paywallet/internal/browsertest"
	"paywallet/service"
	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
)

// Issue #13: the session's key survives a reload, a second tab and a
// restart of the browser (it is a non-extractable CryptoKey in the origin's
// IndexedDB, which the wasm module stores and resumes), the tabs share one
// refresh and one sign-out, and where the browser keeps no keys the tab
// works on with the key in its memory. web/vault_test.go drives the same
// page logic against a stand-in for the module; these run the real one.

// shownKey is the session public key the page shows ("" without one).
func shownKey(t *testing.T, ctx context.Context) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("session-public-key").dataset.value`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitSignedInWithKey waits until the page shows the wallet with a signing
// key (not "not on this device") and returns the key.
func waitSignedInWithKey(t *testing.T, ctx context.Context) string {
	t.Helper()
	waitJS(t, ctx, "the wallet with its key", `!document.getElementById("signed-in").hidden && document.getElementById("login").hidden &&
  document.getElementById("session-public-key").dataset.value !== "" && document.getElementById("key-missing").hidden`)
	return shownKey(t, ctx)
}

// sessionKeyHex is the compressed public key of a stored session.
func sessionKeyHex(t *testing.T, s store.Session) string {
	t.Helper()
	k, err := walletcrypto.ParsePublicKey(s.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return k.CompressedHex()
}

// sendMoney quotes amount to the active account dest and sends it; it
// returns when the payment has COMPLETED, in the page and in the service.
func sendMoney(t *testing.T, s *stack, ctx context.Context, dest, amount string) store.Transaction {
	t.Helper()
	waitJS(t, ctx, "the account to send to", `[...document.getElementById("send-account").options].some((o) => o.value === `+jsString(dest)+` && !o.disabled)`)
	q := s.quote(quoteFor(t, ctx, dest, amount))
	click(t, ctx, "send-submit")
	// sent() hides the quote and clears the previous payment's status in one
	// go, so a COMPLETED seen with the quote hidden is this payment's.
	waitJS(t, ctx, "the payment to complete", `document.getElementById("quote").hidden && document.getElementById("transaction").dataset.status === "COMPLETED"`)
	x := s.transaction(q.TransactionID)
	if x.Status != "COMPLETED" || x.SentAmount != q.TotalSendingAmount {
		t.Fatalf("the service holds the payment as %s of %d, want COMPLETED of %d", x.Status, x.SentAmount, q.TotalSendingAmount)
	}
	return x
}

// vaultDump is what the origin's IndexedDB database "paywallet" holds, as
// page JavaScript sees it: every value of every record, CryptoKeys with
// their properties and the outcome of trying to export them.
type vaultDump struct {
	Exists  bool     `json:"exists"`
	Stores  []string `json:"stores"`
	Keys    []string `json:"keys"`
	Records []struct {
		Fields     map[string]any `json:"fields"`
		CryptoKeys []struct {
			Path        string   `json:"path"`
			Type        string   `json:"type"`
			Extractable bool     `json:"extractable"`
			Algorithm   string   `json:"algorithm"`
			Curve       string   `json:"curve"`
			Usages      []string `json:"usages"`
			Exports     map[string]string
		} `json:"cryptoKeys"`
	} `json:"records"`
}

// dumpVaultJS reads the database without creating it (opening a database
// that does not exist would create an empty one).
const dumpVaultJS = `(async () => {
  const done = (req) => new Promise((ok, no) => { req.onsuccess = () => ok(req.result); req.onerror = () => no(req.error); });
  const names = (await indexedDB.databases()).map((d) => d.name);
  if (!names.includes("paywallet")) return JSON.stringify({ exists: false });
  const db = await done(indexedDB.open("paywallet"));
  try {
    const out = { exists: true, stores: [...db.objectStoreNames], keys: [], records: [] };
    if (!out.stores.includes("session")) return JSON.stringify(out);
    const store = db.transaction("session", "readonly").objectStore("session");
    const [keys, values] = [await done(store.getAllKeys()), await done(store.getAll())];
    out.keys = keys.map(String);
    const hex = (b) => [...new Uint8Array(b instanceof ArrayBuffer ? b : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))]
      .map((x) => x.toString(16).padStart(2, "0")).join("");
    for (const value of values) {
      const rec = { fields: {}, cryptoKeys: [] };
      const walk = async (v, path) => {
        if (v instanceof CryptoKey) {
          const k = { path, type: v.type, extractable: v.extractable, algorithm: v.algorithm.name,
            curve: v.algorithm.namedCurve || "", usages: [...v.usages], Exports: {} };
          for (const format of ["pkcs8", "jwk", "raw", "spki"]) {
            try {
              const got = await crypto.subtle.exportKey(format, v);
              k.Exports[format] = "exported " + (format === "jwk" ? JSON.stringify(got) : hex(got));
            } catch (e) {
              k.Exports[format] = "refused: " + e.name;
            }
          }
          rec.cryptoKeys.push(k);
        } else if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) {
          rec.fields[path] = "binary " + hex(v);
        } else if (v instanceof Blob) {
          rec.fields[path] = "blob of " + v.size + " bytes";
        } else if (v && typeof v === "object") {
          const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
          if (entries.length === 0) rec.fields[path] = "empty " + Object.prototype.toString.call(v);
          for (const [name, inner] of entries) await walk(inner, path ? path + "." + name : String(name));
        } else {
          rec.fields[path] = v;
        }
      };
      await walk(value, "");
      out.records.push(rec);
    }
    return JSON.stringify(out);
  } finally {
    db.close();
  }
})()`

func dumpVault(t *testing.T, ctx context.Context) vaultDump {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](dumpVaultJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading IndexedDB: %v", err)
	}
	var d vaultDump
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("reading IndexedDB: %v in %s", err, raw)
	}
	return d
}

// storedSessions is the number of session records the page's IndexedDB
// holds.
func storedSessions(t *testing.T, ctx context.Context) int {
	t.Helper()
	d := dumpVault(t, ctx)
	return len(d.Records)
}

// checkVault checks that the database holds exactly one record, the
// session's: its one CryptoKey is the private signing key, not
// extractable, and refused to every export; besides it the record holds the
// public key, the session id and the expiry, and nothing else.
func checkVault(t *testing.T, d vaultDump, publicKey, sessionID string) {
	t.Helper()
	if !d.Exists || !slices.Equal(d.Stores, []string{"session"}) || !slices.Equal(d.Keys, []string{"current"}) || len(d.Records) != 1 {
		t.Fatalf("IndexedDB holds %+v, want one record \"current\" in the store \"session\"", d)
	}
	r := d.Records[0]
	if len(r.CryptoKeys) != 1 {
		t.Fatalf("the record holds %d CryptoKeys, want 1: %+v", len(r.CryptoKeys), r)
	}
	k := r.CryptoKeys[0]
	if k.Type != "private" || k.Extractable || k.Algorithm != "ECDSA" || k.Curve != "P-256" || !slices.Equal(k.Usages, []string{"sign"}) {
		t.Errorf("the stored key is %+v, want a non-extractable ECDSA P-256 private key for signing only", k)
	}
	for _, format := range []string{"pkcs8", "jwk", "raw", "spki"} {
		if !strings.HasPrefix(k.Exports[format], "refused: ") {
			t.Errorf("crypto.subtle.exportKey(%q) of the stored key: %s", format, k.Exports[format])
		}
	}
	if got := slices.Sorted(maps.Keys(r.Fields)); !slices.Equal(got, []string{"expiresAtMs", "publicKey", "sessionId"}) {
		t.Errorf("the record's other fields are %v (%v), want expiresAtMs, publicKey, sessionId", got, r.Fields)
	}
	if r.Fields["publicKey"] != publicKey || r.Fields["sessionId"] != sessionID {
		t.Errorf("the record is for key %v of %v, want %s of %s", r.Fields["publicKey"], r.Fields["sessionId"], publicKey, sessionID)
	}
	ms, ok := r.Fields["expiresAtMs"].(float64)
	if now := float64(time.Now().UnixMilli()); !ok || ms < now || ms > now+16*60*1000 {
		t.Errorf("the record expires at %v, want within the session's 15 minutes", r.Fields["expiresAtMs"])
	}
}

// requestLog collects the requests a tab sends, as CDP reports them.
type requestLog struct {
	mu   sync.Mutex
	reqs []*network.Request
}

// captureRequests records every request of the tab from now on, with
// bodies up to 1 MB.
func captureRequests(t *testing.T, ctx context.Context, log *requestLog) {
	t.Helper()
	max := int64(1 << 20)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{MaxPostDataSize: &max}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			log.mu.Lock()
			log.reqs = append(log.reqs, e.Request)
			log.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
}

func (l *requestLog) all() []*network.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// Forms a P-256 private key takes when it is written out: the PKCS#8 and
// SEC 1 DER prefixes (in hex, and in base64, where they start a value), and
// PEM.
var keyBlobs = []string{
	"308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420", // PKCS#8
	"30770201010420", // SEC 1 ECPrivateKey
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", // PKCS#8, base64
	"MHcCAQEEI", // SEC 1, base64
	"3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420", // PKCS#8 without the public key (the module's import of a sealed session key)
	"MEECAQAwEwYHKoZIzj0CAQYIKoZIzj0DAQcEJzAlAgEB",                           // the same, base64
	"PRIVATE KEY-----",
}

// privateKeyProblems lists where text (a body or a header value) carries
// private key material: a key blob, or a JSON object with a JWK "d"
// member, looking into JSON nested in strings and into base64url values
// (a stamp).
func privateKeyProblems(text string) []string {
	var out []string
	for _, b := range keyBlobs {
		if strings.Contains(strings.ToLower(text), strings.ToLower(b)) {
			out = append(out, "a key blob "+b)
		}
	}
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		out = append(out, jsonKeyProblems(v)...)
	} else if raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(text, "=")); err == nil && json.Unmarshal(raw, &v) == nil {
		out = append(out, jsonKeyProblems(v)...)
	}
	return out
}

func jsonKeyProblems(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for name, inner := range v {
			switch strings.ToLower(name) {
			case "d", "privatekey", "private_key", "pkcs8", "jwk":
				out = append(out, fmt.Sprintf("a member %q", name))
			}
			out = append(out, jsonKeyProblems(inner)...)
		}
	case []any:
		for _, inner := range v {
			out = append(out, jsonKeyProblems(inner)...)
		}
	case string:
		if len(v) > 1 && (v[0] == '{' || v[0] == '[') {
			out = append(out, privateKeyProblems(v)...)
		}
	}
	return out
}

// checkRequests fails the test for every request that carries private key
// material in its body or its headers, and for a body CDP did not report
// (which would go unchecked). It returns the number of bodies checked.
func checkRequests(t *testing.T, reqs []*network.Request) int {
	t.Helper()
	bodies := 0
	for _, r := range reqs {
		where := r.Method + " " + r.URL
		if r.HasPostData && len(r.PostDataEntries) == 0 {
			t.Errorf("%s: the body was not captured", where)
		}
		var body []byte
		for _, e := range r.PostDataEntries {
			body = append(body, e.Bytes...)
		}
		if len(body) > 0 {
			bodies++
			for _, p := range privateKeyProblems(string(body)) {
				t.Errorf("%s: the body carries %s: %s", where, p, body)
			}
		}
		for name, value := range r.Headers {
			for _, p := range privateKeyProblems(fmt.Sprint(value)) {
				t.Errorf("%s: the header %s carries %s", where, name, p)
			}
		}
	}
	return bodies
}

// TestVaultReloadSecondTabSignOut: signed in once, the wallet signs after a
// reload and from a second tab of the same browser (both resume the stored
// key: no second login), and a sign-out in one tab shows the sign-in page
// in the other within a second, the stored key deleted.
func TestVaultReloadSecondTabSignOut(t *testing.T) {
	s := moneyStack(t)
	first := newBrowser(t)
	const email = "reloader@example.com"
	s.signIn(first, email)
	account := s.accountOf(email)
	key := waitSignedInWithKey(t, first)
	addFunds(t, first, "500", 50000)
	dest := addActiveUSDAccount(t, first, "34567890", 1)
	sessions := s.activeSessions(account)
	if len(sessions) != 1 || sessionKeyHex(t, sessions[0]) != key {
		t.Fatalf("sessions %+v, want one with the page's key %s", sessions, key)
	}

	if !t.Run("reload then send", func(t *testing.T) {
		if err := chromedp.Do(first, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if got := waitSignedInWithKey(t, first); got != key {
			t.Fatalf("after the reload the page shows key %s, want the session's %s", got, key)
		}
		sendMoney(t, s, first, dest, "12.00")
	}) {
		return
	}

	second, cancel := chromedp.NewContext(first) // a new tab of the same browser
	t.Cleanup(cancel)
	if !t.Run("second tab sends", func(t *testing.T) {
		if err := chromedp.Do(second, chromedp.Navigate(s.url+"/")); err != nil {
			t.Fatal(err)
		}
		if got := waitSignedInWithKey(t, second); got != key {
			t.Fatalf("the second tab shows key %s, want the session's %s", got, key)
		}
		sendMoney(t, s, second, dest, "7.50")
	}) {
		return
	}
	if active := s.activeSessions(account); len(active) != 1 || active[0].ID != sessions[0].ID {
		t.Fatalf("sessions after the reload and the second tab: %+v, want the one of the sign-in", active)
	}

	t.Run("sign out reaches the other tab", func(t *testing.T) {
		click(t, second, "logout")
		if err := chromedp.Do(second, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
			t.Fatal(err)
		}
		// Asked from here every 50 ms rather than by a timer in the page:
		// a tab in the background runs its timers once a second at most.
		const signedOut = `!document.getElementById("login").hidden && document.getElementById("signed-in").hidden &&
  document.getElementById("session-public-key").dataset.value === ""`
		deadline := time.Now().Add(time.Second)
		for {
			v, err := chromedp.Run(first, chromedp.Evaluate[bool](signedOut))
			if err != nil {
				t.Fatal(err)
			}
			if v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first tab still shows the wallet a second after the sign-out (status %q)", textOf(t, first, "status"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := textOf(t, first, "status"); got != "You signed out in another tab." {
			t.Errorf("the first tab says %q", got)
		}
		waitUntil(t, 5*time.Second, "the session to be revoked", func() bool { return !s.session(sessions[0].ID).RevokedAt.IsZero() })
		if n := storedSessions(t, first); n != 0 {
			t.Errorf("%d session keys still stored after the sign-out", n)
		}
	})
}

// TestVaultKeyCannotBeExported: the key the wallet keeps for the session
// is a non-extractable CryptoKey that no page script can export, the only
// other things stored beside it are its public key, the session id and the
// expiry, and no request of a sign-in, a reload, a recovery phrase export
// and a passkey registration (a recipient key and two signatures by the
// resumed key), a sign-out and a passkey sign-in carries private key
// material.
func TestVaultKeyCannotBeExported(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := newBrowser(t)
	addAuthenticator(t, ctx)
	var log requestLog
	captureRequests(t, ctx, &log)
	const email = "vault@example.com"
	s.signIn(ctx, email)
	account := s.accountOf(email)
	key := waitSignedInWithKey(t, ctx)
	active := s.activeSessions(account)
	if len(active) != 1 || sessionKeyHex(t, active[0]) != key {
		t.Fatalf("sessions %+v, want one with the page's key %s", active, key)
	}
	checkVault(t, dumpVault(t, ctx), key, active[0].ID)

	// After a reload, the resumed key signs an export and a passkey.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if got := waitSignedInWithKey(t, ctx); got != key {
		t.Fatalf("after the reload the page shows key %s, want %s", got, key)
	}
	goTo(t, ctx, "/security", "security")
	click(t, ctx, "export-start")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("export-reveal"))); err != nil {
		t.Fatalf("export: %v (%s)", err, textOf(t, ctx, "export-error"))
	}
	revealPhrase(t, ctx)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("passkey-name"), "Vault laptop")); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "passkey-add")
	waitJS(t, ctx, "the passkey in the list", `[...document.querySelectorAll("#credentials-list > li")].some((li) => li.dataset.type === "PASSKEY")`)

	// The stored record is the same after all that, and the requests carry
	// public keys, sealed bundles and signatures only.
	checkVault(t, dumpVault(t, ctx), key, active[0].ID)
	reqs := log.all()
	var signedPaths []string
	for _, r := range reqs {
		if _, ok := r.Headers["Service-Wallet-Signature"]; ok {
			signedPaths = append(signedPaths, r.Method+" "+strings.TrimPrefix(r.URL, s.url))
		}
	}
	for _, want := range []string{"POST /api/login/verify", "POST /api/internal-accounts/" + account + "/export", "POST /api/auth/credentials"} {
		if !slices.Contains(signedPaths, want) {
			t.Errorf("no signed %s among the captured requests (signed: %v)", want, signedPaths)
		}
	}
	// A passkey sign-in keeps its key too (the client-held key, sent
	// compressed), in place of the signed-out session's.
	click(t, ctx, "logout")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "the stored key to be deleted", func() bool { return storedSessions(t, ctx) == 0 })
	typeIn(t, ctx, "email", email)
	click(t, ctx, "passkey-login")
	passkeyKey := waitSignedInWithKey(t, ctx)
	active = s.activeSessions(account)
	if len(active) != 1 || active[0].Type != "PASSKEY" || sessionKeyHex(t, active[0]) != passkeyKey {
		t.Fatalf("sessions after the passkey sign-in %+v, want one with the page's key %s", active, passkeyKey)
	}
	checkVault(t, dumpVault(t, ctx), passkeyKey, active[0].ID)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if got := waitSignedInWithKey(t, ctx); got != passkeyKey {
		t.Fatalf("after the reload the page shows key %s, want the passkey session's %s", got, passkeyKey)
	}

	if n := checkRequests(t, log.all()); n < 8 {
		t.Errorf("only %d request bodies checked", n)
	}
	// The checks themselves find a key written out.
	for _, leak := range []string{`{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}`, `{"clientPublicKey":"{\"d\":\"c\"}"}`,
		"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAAAA", base64.RawURLEncoding.EncodeToString([]byte(`{"d":"x"}`))} {
		if len(privateKeyProblems(leak)) == 0 {
			t.Errorf("the check misses %s", leak)
		}
	}
}

// sessionCounter is a store that records every session created.
type sessionCounter struct {
	store.Store
	mu      sync.Mutex
	created map[string]string // session id → account id
}

func countSessions(counter **sessionCounter) func(*service.Config) {
	return func(c *service.Config) {
		*counter = &sessionCounter{Store: c.Store, created: map[string]string{}}
		c.Store = *counter
	}
}

func (c *sessionCounter) Tx(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Tx(ctx, func(tx store.Tx) error { return fn(countingTx{tx, c}) })
}

func (c *sessionCounter) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	return c.Store.TxFor(ctx, key, func(tx store.Tx) error { return fn(countingTx{tx, c}) })
}

// sessionsOf returns the ids of the sessions ever created for account (a
// transaction that was rolled back leaves no session, so each is looked up).
func (c *sessionCounter) sessionsOf(s *stack, account string) []string {
	c.mu.Lock()
	var ids []string
	for id, a := range c.created {
		if a == account {
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	var out []string
	for _, id := range ids {
		err := c.Store.Tx(context.Background(), func(tx store.Tx) error {
			_, err := tx.GetSession(context.Background(), id)
			return err
		})
		if err == nil {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

type countingTx struct {
	store.Tx
	c *sessionCounter
}

func (t countingTx) CreateSession(ctx context.Context, s *store.Session) error {
	err := t.Tx.CreateSession(ctx, s)
	if err == nil {
		t.c.mu.Lock()
		t.c.created[s.ID] = s.AccountID
		t.c.mu.Unlock()
	}
	return err
}

// deafToRefresh keeps the page from hearing the other tabs' "refresh"
// message on the BroadcastChannel.
const deafToRefresh = `(() => {
  const Real = BroadcastChannel;
  globalThis.BroadcastChannel = class extends Real {
    set onmessage(fn) {
      super.onmessage = (event) => { if (!(event.data && event.data.type === "refresh")) fn(event); };
    }
    get onmessage() { return super.onmessage; }
  };
})();`

// TestVaultTwoTabsRefreshOnce: two tabs whose session nears its end make
// exactly one refresh between them: the tab whose turn (Web Lock) comes
// second finds the new key stored and takes it. The test holds the lock
// until both tabs wait for it, so that they really do contend, and neither
// tab hears the other's "refresh" message, which would otherwise let the
// second take the new key before its turn: the lock alone must do.
func TestVaultTwoTabsRefreshOnce(t *testing.T) {
	// 100 s sessions: the page refreshes 90 s before the end, so 10 s after
	// the sign-in, and the new session 10 s after that.
	var counter *sessionCounter
	s := startStack(t, service.ModeProduction, func(c *service.Config) { c.SessionTTL = 100 * time.Second }, countSessions(&counter))
	a := newBrowser(t)
	var logA, logB requestLog
	captureRequests(t, a, &logA)
	deaf := page.AddScriptToEvaluateOnNewDocumentParams{Source: deafToRefresh}
	if _, err := chromedp.Call(a, page.AddScriptToEvaluateOnNewDocument, deaf); err != nil {
		t.Fatal(err)
	}
	const email = "two-tabs@example.com"
	s.signIn(a, email)
	account := s.accountOf(email)
	old := waitSignedInWithKey(t, a)
	first := s.activeSessions(account)
	if len(first) != 1 {
		t.Fatalf("%d sessions after the sign-in", len(first))
	}
	// Hold the refresh lock from the first tab's page until both tabs wait.
	if _, err := chromedp.Run(a, chromedp.Evaluate[bool](`(navigator.locks.request("paywallet-session-refresh", () =>
  new Promise((release) => { globalThis.releaseRefreshLock = release; })), true)`)); err != nil {
		t.Fatal(err)
	}

	b, cancel := chromedp.NewContext(a)
	t.Cleanup(cancel)
	captureRequests(t, b, &logB)
	if _, err := chromedp.Call(b, page.AddScriptToEvaluateOnNewDocument, deaf); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, chromedp.Navigate(s.url+"/")); err != nil {
		t.Fatal(err)
	}
	if got := waitSignedInWithKey(t, b); got != old {
		t.Fatalf("the second tab shows key %s, want the session's %s", got, old)
	}
	waiting := `navigator.locks.query().then((q) => q.held.length === 1 && q.pending.filter((p) => p.name === "paywallet-session-refresh").length === 2)`
	if _, err := chromedp.Run(a, chromedp.Poll[bool](waiting, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the two tabs did not both wait to refresh: %v", err)
	}
	if n := len(s.activeSessions(account)); n != 1 || len(counter.sessionsOf(s, account)) != 1 {
		t.Fatal("a session was refreshed while the lock was held")
	}
	if _, err := chromedp.Run(a, chromedp.Evaluate[bool](`(globalThis.releaseRefreshLock(), true)`)); err != nil {
		t.Fatal(err)
	}

	var fresh store.Session
	waitUntil(t, 20*time.Second, "the refresh", func() bool {
		active := s.activeSessions(account)
		if len(active) == 1 && active[0].ID != first[0].ID {
			fresh = active[0]
			return true
		}
		return false
	})
	want := sessionKeyHex(t, fresh)
	for name, tab := range map[string]context.Context{"first": a, "second": b} {
		waitJS(t, tab, "the "+name+" tab to take the new key", `document.getElementById("session-public-key").dataset.value === `+jsString(want))
	}
	if created := counter.sessionsOf(s, account); len(created) != 2 {
		t.Errorf("%d sessions created (%v), want 2: the sign-in's and one refresh", len(created), created)
	}
	var refreshes []string
	for _, r := range append(logA.all(), logB.all()...) {
		if strings.HasSuffix(r.URL, "/refresh") {
			_, signed := r.Headers["Service-Wallet-Signature"]
			refreshes = append(refreshes, fmt.Sprintf("%s %s signed=%v", r.Method, r.URL, signed))
		}
	}
	if len(refreshes) != 2 {
		t.Errorf("refresh requests of both tabs:\n%s\nwant one signed retry (2 requests)", strings.Join(refreshes, "\n"))
	}
	if old := s.session(first[0].ID); old.RevokedAt.IsZero() {
		t.Error("the refreshed session is still usable")
	}
	checkVault(t, dumpVault(t, b), want, fresh.ID)
}

// noWebLocks removes navigator.locks before any page script runs, as in a
// browser without the Web Locks API.
const noWebLocks = `delete Navigator.prototype.locks;`

// TestVaultRefreshWithoutWebLocks: where the browser has no Web Locks, a
// tab still refreshes its session before the end on its own (the page's
// fallback path): one new session (the refresh is a signed request, so the
// page signed it with the old key), the old one revoked, the new key shown
// and stored.
func TestVaultRefreshWithoutWebLocks(t *testing.T) {
	var counter *sessionCounter
	s := startStack(t, service.ModeProduction, func(c *service.Config) { c.SessionTTL = 100 * time.Second }, countSessions(&counter))
	ctx := newBrowser(t)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noWebLocks}); err != nil {
		t.Fatal(err)
	}
	const email = "no-locks@example.com"
	s.signIn(ctx, email)
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`navigator.locks === undefined`)); err != nil || !v {
		t.Fatalf("navigator.locks is still there (%v)", err)
	}
	account := s.accountOf(email)
	waitSignedInWithKey(t, ctx)
	first := s.activeSessions(account)
	if len(first) != 1 {
		t.Fatalf("%d sessions after the sign-in", len(first))
	}
	var fresh store.Session
	waitUntil(t, 30*time.Second, "the refresh", func() bool {
		active := s.activeSessions(account)
		if len(active) == 1 && active[0].ID != first[0].ID {
			fresh = active[0]
			return true
		}
		return false
	})
	want := sessionKeyHex(t, fresh)
	waitJS(t, ctx, "the tab to take the new key", `document.getElementById("session-public-key").dataset.value === `+jsString(want))
	if created := counter.sessionsOf(s, account); len(created) != 2 {
		t.Errorf("%d sessions created (%v), want 2: the sign-in's and one refresh", len(created), created)
	}
	if old := s.session(first[0].ID); old.RevokedAt.IsZero() {
		t.Error("the refreshed session is still usable")
	}
	checkVault(t, dumpVault(t, ctx), want, fresh.ID)
}

// TestVaultBrowserRestart: the wallet's cookie expires with the wallet
// session (bff.setCookie), and the key is in IndexedDB, so the sign-in
// outlives the tab and the browser:
//
//   - Every wallet tab closed, the browser still running, then a new tab:
//     the page has nothing in memory and resumes from IndexedDB alone. It
//     signs: it signs out another session of the wallet.
//   - Chromium closed and started again on the same profile: the stored key
//     and the cookie are both still there, the page resumes signed in with
//     the same key and signs again (another device's session signed out).
func TestVaultBrowserRestart(t *testing.T) {
	s := startStack(t, service.ModeProduction, func(c *service.Config) { c.OTPResendInterval = -1 })
	const email = "restart@example.com"
	profile := t.TempDir()
	browser, closeBrowser, err := browsertest.Launch(context.Background(), "", profile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { closeBrowser() }()
	browser, cancelTimeout := context.WithTimeout(browser, 90*time.Second)
	defer cancelTimeout()

	tab, closeTab := chromedp.NewContext(browser)
	s.signIn(tab, email)
	key := waitSignedInWithKey(t, tab)
	account := s.accountOf(email)
	mine := s.activeSessions(account)
	if len(mine) != 1 {
		t.Fatalf("%d sessions after the sign-in", len(mine))
	}
	// Another device signs in too.
	other := &bffclient.Client{Base: s.url}
	otherSession, _, err := other.LoginEmailOTP(context.Background(), email, func(address string) (string, error) {
		return other.MailboxCode(context.Background(), address)
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("all tabs closed, then a new one", func(t *testing.T) {
		closeTab() // the first tab of the browser (browser) stays, on about:blank
		if targets, err := chromedp.Targets(browser); err != nil {
			t.Fatal(err)
		} else {
			for _, info := range targets {
				if strings.HasPrefix(info.URL, s.url) {
					t.Fatalf("a wallet tab is still open: %+v", info)
				}
			}
		}
		tab, closeTab := chromedp.NewContext(browser)
		defer closeTab()
		if err := chromedp.Do(tab, chromedp.Navigate(s.url+"/security")); err != nil {
			t.Fatal(err)
		}
		if got := waitSignedInWithKey(t, tab); got != key {
			t.Fatalf("the new tab shows key %s, want the session's %s", got, key)
		}
		waitJS(t, tab, "both sessions listed", `document.querySelectorAll("#sessions-list > li").length === 2`)
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-revoke=`+jsString(otherSession.ID)+`]`))); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 10*time.Second, "the other session to be revoked", func() bool { return !s.session(otherSession.ID).RevokedAt.IsZero() })
		if active := s.activeSessions(account); len(active) != 1 || active[0].ID != mine[0].ID {
			t.Errorf("active sessions %+v, want this browser's only", active)
		}
	})

	t.Run("Chromium restarted on the same profile", func(t *testing.T) {
		// Closed gracefully (Browser.close, then waiting for the process to
		// end), as a person quits a browser: only then does Chromium write
		// its cookie store to the profile.
		if err := chromedp.Cancel(browser); err != nil {
			t.Fatal(err)
		}
		cancelTimeout()
		closeBrowser()
		restarted, closeRestarted, err := browsertest.Launch(context.Background(), "", profile)
		if err != nil {
			t.Fatal(err)
		}
		closeBrowser = closeRestarted
		ctx, cancel := context.WithTimeout(restarted, 60*time.Second)
		defer cancel()
		// A page of the origin that runs none of the wallet's code: what
		// IndexedDB kept across the restart.
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/favicon.svg")); err != nil {
			t.Fatal(err)
		}
		checkVault(t, dumpVault(t, ctx), key, mine[0].ID)
		cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.url + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(cookies.Cookies) != 1 || cookies.Cookies[0].Session {
			t.Fatalf("cookies after the restart: %+v; want the wallet's, expiring with its session", cookies.Cookies)
		}
		// A third device signs in meanwhile; the restarted browser signs it out.
		third := &bffclient.Client{Base: s.url}
		thirdSession, _, err := third.LoginEmailOTP(context.Background(), email, func(address string) (string, error) {
			return third.MailboxCode(context.Background(), address)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/security")); err != nil {
			t.Fatal(err)
		}
		if got := waitSignedInWithKey(t, ctx); got != key {
			t.Fatalf("after the restart the page shows key %s, want the session's %s", got, key)
		}
		waitJS(t, ctx, "both sessions listed", `document.querySelectorAll("#sessions-list > li").length === 2`)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[data-revoke=`+jsString(thirdSession.ID)+`]`))); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 10*time.Second, "the third session to be revoked", func() bool { return !s.session(thirdSession.ID).RevokedAt.IsZero() })
		if active := s.activeSessions(account); len(active) != 1 || active[0].ID != mine[0].ID {
			t.Errorf("active sessions %+v, want this browser's only", active)
		}
	})
}

// refuseIndexedDB makes every indexedDB.open fail as a private window or a
// full disk does: the request's error event fires instead of success.
const refuseIndexedDB = `(() => {
  IDBFactory.prototype.open = function () {
    const req = new EventTarget();
    req.result = undefined;
    req.error = new DOMException("The user denied permission to access the database.", "UnknownError");
    req.readyState = "pending";
    req.onsuccess = req.onerror = req.onupgradeneeded = req.onblocked = null;
    setTimeout(() => {
      req.readyState = "done";
      const ev = new Event("error");
      req.dispatchEvent(ev);
      if (typeof req.onerror === "function") req.onerror(ev);
    }, 0);
    return req;
  };
})();`

// TestVaultIndexedDBRefused: in a browser that keeps no keys the sign-in
// works, the page says once that a reload signs the person out, the tab
// sends money with the key in its memory, and after a reload it shows the
// sign-in page, where the person can sign in again.
func TestVaultIndexedDBRefused(t *testing.T) {
	s := moneyStack(t, func(c *service.Config) { c.OTPResendInterval = -1 })
	ctx := newBrowser(t)
	intoWalletWorker(t, ctx, refuseIndexedDB) // the module keeps keys from its Worker
	const email = "private-window@example.com"
	s.signIn(ctx, email)
	key := waitSignedInWithKey(t, ctx)
	waitJS(t, ctx, "the note that the sign-in is not kept", `!document.getElementById("key-not-kept").hidden`)
	note := strings.Join(strings.Fields(textOf(t, ctx, "key-not-kept")), " ")
	if note != "This browser does not let the wallet keep your sign-in on this device, so reloading or closing this tab will sign you out." {
		t.Errorf("the note says %q", note)
	}
	status := textOf(t, ctx, "status")
	if strings.Contains(status, "storeSession") || strings.Contains(status, "IndexedDB") {
		t.Errorf("the status line shows the module's error: %q", status)
	}
	if n := strings.Count(textOf(t, ctx, "signed-in"), "does not let the wallet keep"); n != 1 {
		t.Errorf("the note is shown %d times", n)
	}
	if session := s.activeSessions(s.accountOf(email)); len(session) != 1 || sessionKeyHex(t, session[0]) != key {
		t.Fatalf("sessions %+v, want one with the page's key", session)
	}

	addFunds(t, ctx, "100", 10000)
	dest := addActiveUSDAccount(t, ctx, "45678901", 1)
	sendMoney(t, s, ctx, dest, "20")
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("key-not-kept").hidden`)); !v {
		t.Error("the note went away although the key is still not kept")
	}

	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the reason on the sign-in page", `document.getElementById("status").textContent.includes("not kept in this browser")`)
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("signed-in").hidden`)); !v {
		t.Error("the wallet is shown after the reload without a key")
	}
	// Signing in again there works, and says the same once more.
	s.signIn(ctx, email)
	if got := waitSignedInWithKey(t, ctx); got == key {
		t.Error("the new sign-in shows the old key")
	}
	waitJS(t, ctx, "the note that the sign-in is not kept", `!document.getElementById("key-not-kept").hidden`)
}
