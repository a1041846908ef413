package service

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/service/mail"
	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

// basicAuth is the Authorization header of an API token.
func basicAuth(id, secret string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))}
}

// newToken creates a token with the configured credential.
func (e *env) newToken(name string, perms ...string) payments.APIToken {
	e.t.Helper()
	r := e.do("POST", "/tokens", map[string]any{"name": name, "permissions": perms}, nil)
	e.mustStatus(r, http.StatusCreated)
	var tok payments.APIToken
	r.decode(e.t, &tok)
	return tok
}

func tokenAuth(tok payments.APIToken) map[string]string {
	return basicAuth(tok.ClientID, tok.ClientSecret)
}

func wantCode(t *testing.T, r response, status int, code string) wire.Error {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d %s: %s", r.status, status, code, r.body)
	}
	e := r.errorBody(t)
	if e.Code != code {
		t.Fatalf("code %s, want %s: %s", e.Code, code, r.body)
	}
	return e
}

var tokenBackends = []struct {
	name string
	opt  func(t *testing.T) func(*Config)
}{
	{"sqlite", func(*testing.T) func(*Config) { return func(*Config) {} }},
	{"postgres", onPostgres},
}

// TestAPITokens: a token made with the configured credential is a platform
// credential with its permissions, its secret shown once; a deleted token
// is refused at once; a credential grants only what it holds.
func TestAPITokens(t *testing.T) {
	for _, b := range tokenBackends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b.opt(t))
			r := e.do("POST", "/tokens", map[string]any{"name": "  ops  ", "permissions": []string{"MANAGE", "VIEW"}}, nil)
			e.mustStatus(r, http.StatusCreated)
			if r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
			}
			var ops payments.APIToken
			r.decode(t, &ops)
			if !strings.HasPrefix(ops.ID, "Token:") || ops.Name != "ops" || !slices.Equal(ops.Permissions, []string{"VIEW", "MANAGE"}) ||
				!regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(ops.ClientID) || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(ops.ClientSecret) ||
				ops.CreatedAt == "" || ops.CreatedAt != ops.UpdatedAt {
				t.Fatalf("created %+v", ops)
			}

			// The token reads, and is read back without its secret.
			r = e.do("GET", "/tokens/"+ops.ID, nil, tokenAuth(ops))
			e.mustStatus(r, http.StatusOK)
			if bytes.Contains(r.body, []byte("clientSecret")) || bytes.Contains(r.body, []byte(ops.ClientSecret)) {
				t.Fatalf("the secret is shown again: %s", r.body)
			}
			var got payments.APIToken
			r.decode(t, &got)
			want := ops
			want.ClientSecret = ""
			if !slicesEqualToken(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			r = e.do("GET", "/tokens", nil, tokenAuth(ops))
			e.mustStatus(r, http.StatusOK)
			if bytes.Contains(r.body, []byte("clientSecret")) {
				t.Fatalf("the list shows a secret: %s", r.body)
			}

			// It manages customers, but without TRANSACT it quotes nothing.
			r = e.do("POST", "/customers", map[string]any{"platformCustomerId": "tok-1", "customerType": "INDIVIDUAL"}, tokenAuth(ops))
			e.mustStatus(r, http.StatusCreated)
			fe := wantCode(t, e.do("POST", "/quotes", map[string]any{}, tokenAuth(ops)), http.StatusForbidden, "FORBIDDEN")
			if fe.Details["requiredPermission"] != "TRANSACT" {
				t.Fatalf("details %v", fe.Details)
			}

			// A reader is refused every write, tokens included.
			reader := e.newToken("reader", "VIEW")
			wantCode(t, e.do("POST", "/customers", map[string]any{"platformCustomerId": "tok-2", "customerType": "INDIVIDUAL"}, tokenAuth(reader)),
				http.StatusForbidden, "FORBIDDEN")
			wantCode(t, e.do("POST", "/tokens", map[string]any{"name": "x", "permissions": []string{"VIEW"}}, tokenAuth(reader)), http.StatusForbidden, "FORBIDDEN")
			wantCode(t, e.do("DELETE", "/tokens/"+ops.ID, nil, tokenAuth(reader)), http.StatusForbidden, "FORBIDDEN")
			e.mustStatus(e.do("GET", "/customers?platformCustomerId=tok-2", nil, tokenAuth(reader)), http.StatusOK)

			// A token grants only permissions it holds.
			r = e.do("POST", "/tokens", map[string]any{"name": "stronger", "permissions": []string{"VIEW", "TRANSACT"}}, tokenAuth(ops))
			fe = wantCode(t, r, http.StatusForbidden, "FORBIDDEN")
			if !strings.Contains(fe.Message, "TRANSACT") {
				t.Fatalf("message %q", fe.Message)
			}
			var weaker payments.APIToken
			r = e.do("POST", "/tokens", map[string]any{"name": "weaker", "permissions": []string{"VIEW"}}, tokenAuth(ops))
			e.mustStatus(r, http.StatusCreated)
			r.decode(t, &weaker)

			// Wrong credentials.
			for name, h := range map[string]map[string]string{
				"wrong secret":                basicAuth(ops.ClientID, strings.Repeat("0", 64)),
				"secret of another token":     basicAuth(ops.ClientID, reader.ClientSecret),
				"unknown client id":           basicAuth(strings.Repeat("a", 32), ops.ClientSecret),
				"token id as the username":    basicAuth(ops.ID, ops.ClientSecret),
				"configured id, token secret": basicAuth("tok_test", ops.ClientSecret),
				"none":                        {"Authorization": ""},
				"bearer":                      {"Authorization": "Bearer " + ops.ClientSecret},
			} {
				r := e.do("GET", "/tokens", nil, h)
				if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s: %d %s", name, r.status, r.body)
				}
			}

			// Deleted: refused from the next request on; a token may
			// delete itself.
			e.mustStatus(e.do("DELETE", "/tokens/"+reader.ID, nil, tokenAuth(ops)), http.StatusNoContent)
			wantCode(t, e.do("GET", "/tokens", nil, tokenAuth(reader)), http.StatusUnauthorized, "UNAUTHORIZED")
			wantCode(t, e.do("GET", "/tokens/"+reader.ID, nil, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
			wantCode(t, e.do("DELETE", "/tokens/"+reader.ID, nil, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
			e.mustStatus(e.do("DELETE", "/tokens/"+ops.ID, nil, tokenAuth(ops)), http.StatusNoContent)
			wantCode(t, e.do("GET", "/tokens", nil, tokenAuth(ops)), http.StatusUnauthorized, "UNAUTHORIZED")
			// The configured credential stays, and so does the token the
			// deleted one made.
			var list wire.List[payments.APIToken]
			r = e.do("GET", "/tokens", nil, nil)
			e.mustStatus(r, http.StatusOK)
			r.decode(t, &list)
			if len(list.Data) != 1 || list.Data[0].ID != weaker.ID || *list.TotalCount != 1 {
				t.Fatalf("left %s", r.body)
			}
			e.mustStatus(e.do("GET", "/tokens", nil, tokenAuth(weaker)), http.StatusOK)
		})
	}
}

func slicesEqualToken(a, b payments.APIToken) bool {
	return a.ID == b.ID && a.Name == b.Name && slices.Equal(a.Permissions, b.Permissions) && a.ClientID == b.ClientID &&
		a.ClientSecret == b.ClientSecret && a.CreatedAt == b.CreatedAt && a.UpdatedAt == b.UpdatedAt
}

// TestAPITokenOtherInstance: a token made on one instance works on another
// sharing the database, and a delete on either is refused by both at once.
func TestAPITokenOtherInstance(t *testing.T) {
	for _, b := range atRestBackends {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			one := newEnv(t, withAtRestStore(open(t)))
			two := newEnv(t, withAtRestStore(open(t)))
			tok := one.newToken("shared", "VIEW")
			two.mustStatus(two.do("GET", "/tokens/"+tok.ID, nil, tokenAuth(tok)), http.StatusOK)
			two.mustStatus(two.do("DELETE", "/tokens/"+tok.ID, nil, nil), http.StatusNoContent)
			wantCode(t, one.do("GET", "/tokens", nil, tokenAuth(tok)), http.StatusUnauthorized, "UNAUTHORIZED")
			wantCode(t, two.do("GET", "/tokens", nil, tokenAuth(tok)), http.StatusUnauthorized, "UNAUTHORIZED")
		})
	}
}

// TestAPITokenRefusals: every bad field named at once, nothing stored.
func TestAPITokenRefusals(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"empty", map[string]any{}, []string{"name", "permissions"}},
		{"blank name, no permissions", map[string]any{"name": "  ", "permissions": []string{}}, []string{"name", "permissions"}},
		{"long name, bad and repeated permissions", map[string]any{"name": strings.Repeat("n", 256), "permissions": []string{"ADMIN", "VIEW", "VIEW", "view"}},
			[]string{"name", "permissions[0]", "permissions[2]", "permissions[3]"}},
		{"unknown member and wrong type", `{"name":1,"permissions":["VIEW"],"scope":"all"}`, []string{"name", "scope"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/tokens", c.body, nil)
			if got := fieldsOf(t, r); !slices.Equal(got, c.fields) {
				t.Fatalf("fields %v, want %v: %s", got, c.fields, r.body)
			}
		})
	}
	r := e.do("GET", "/tokens?createdAfter=yesterday&createdBefore=2026-13-01T00:00:00Z&updatedAfter=x&updatedBefore=1&limit=0&cursor=Customer:x", nil, nil)
	if got, want := fieldsOf(t, r), []string{"createdAfter", "createdBefore", "cursor", "limit", "updatedAfter", "updatedBefore"}; !slices.Equal(got, want) {
		t.Fatalf("list fields %v, want %v", got, want)
	}
	var list wire.List[payments.APIToken]
	r = e.do("GET", "/tokens", nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("a refused token was stored: %s", r.body)
	}
	for _, id := range []string{"nope", "Token:019aa5d2-7c10-7000-8000-000000000001", "Customer:019aa5d2-7c10-7000-8000-000000000001"} {
		wantCode(t, e.do("GET", "/tokens/"+id, nil, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		wantCode(t, e.do("DELETE", "/tokens/"+id, nil, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
	}
	for _, p := range []string{"/tokens", "/customers/end-user-terms", "/uma-providers", "/vasps"} {
		wantCode(t, e.do("GET", p, nil, map[string]string{"Authorization": ""}), http.StatusUnauthorized, "UNAUTHORIZED")
	}
	wantCode(t, e.do("POST", "/tokens", map[string]any{"name": "x", "permissions": []string{"VIEW"}}, map[string]string{"Authorization": ""}),
		http.StatusUnauthorized, "UNAUTHORIZED")

	// Filters: name and the time bounds, inclusive.
	a := e.newToken("a", "VIEW")
	e.clock.Advance(2 * time.Second)
	b := e.newToken("b", "VIEW")
	for q, want := range map[string][]string{
		"name=a":                             {a.ID},
		"createdAfter=" + b.CreatedAt:        {b.ID},
		"createdBefore=" + a.CreatedAt:       {a.ID},
		"updatedAfter=" + a.UpdatedAt:        {a.ID, b.ID},
		"updatedBefore=2026-01-01T00:00:00Z": {},
		"limit=1":                            {a.ID},
		"cursor=" + a.ID:                     {b.ID},
	} {
		r := e.do("GET", "/tokens?"+strings.ReplaceAll(q, "+", "%2B"), nil, nil)
		e.mustStatus(r, http.StatusOK)
		var l wire.List[payments.APIToken]
		r.decode(t, &l)
		var ids []string
		for _, x := range l.Data {
			ids = append(ids, x.ID)
		}
		if !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", q, ids, want)
		}
	}
}

// TestAPITokenSecretNotStored: the database holds no copy of a token's
// secret, in any encoding; what it holds is the HMAC under the key derived
// from the at-rest key (not in the database), and the client id is in the
// file (so the scan is not blind).
func TestAPITokenSecretNotStored(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.db")
	st, err := sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withAtRestStore(st))
	tok := e.newToken("at rest", "VIEW", "TRANSACT")
	raw, err := hex.DecodeString(tok.ClientSecret)
	if err != nil {
		t.Fatal(err)
	}

	var row *store.APIToken
	if err := st.Tx(t.Context(), func(tx store.Tx) error {
		var err error
		row, err = tx.GetAPIToken(t.Context(), tok.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	key, err := hkdf.Key(sha256.New, testAtRestKey, nil, "paywallet/api-token-mac/v1", 32)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tok.ID + "\x00" + tok.ClientID + "\x00" + tok.ClientSecret))
	if !hmac.Equal(row.SecretHash, m.Sum(nil)) {
		t.Fatal("the stored value is not the keyed hash of the secret")
	}
	plain := sha256.Sum256([]byte(tok.ClientSecret))
	if bytes.Equal(row.SecretHash, plain[:]) {
		t.Fatal("the stored value is an unkeyed hash")
	}
	if err := st.Close(); err != nil { // checkpoints the WAL into the file
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(tok.ClientID)) {
		t.Fatal("the scan does not see the token's row (client id not found)")
	}
	for name, needle := range map[string][]byte{
		"hex":       []byte(tok.ClientSecret),
		"HEX":       []byte(strings.ToUpper(tok.ClientSecret)),
		"raw bytes": raw,
		"base64":    []byte(base64.StdEncoding.EncodeToString(raw)),
		"sha-256":   plain[:],
	} {
		if bytes.Contains(all, needle) {
			t.Errorf("the database file holds the secret (%s)", name)
		}
	}
}

// TestEveryPlatformRouteHasAPermission: every route of the platform
// credential names a permission on its line (and no other route does),
// and a token holding the two other permissions is refused 403 on each.
func TestEveryPlatformRouteHasAPermission(t *testing.T) {
	e := newEnv(t, sandbox)
	for _, rt := range e.svc.routes() {
		key := rt.method + " " + rt.path
		if rt.auth != authPlatform && rt.auth != authSandbox {
			if rt.need != (permission{}) {
				t.Errorf("%s needs no platform credential but has a permission", key)
			}
			continue
		}
		need := rt.need.name
		if !slices.Contains(payments.Permissions, need) {
			t.Errorf("%s: permission %q", key, need)
			continue
		}
		var others []string
		for _, p := range payments.Permissions {
			if p != need {
				others = append(others, p)
			}
		}
		tok := e.newToken("without "+need, others...)
		path := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(rt.path, "x")
		var body any
		if rt.method == "POST" || rt.method == "PATCH" {
			body = map[string]any{}
		}
		r := e.do(rt.method, path, body, tokenAuth(tok))
		fe := wantCode(t, r, http.StatusForbidden, "FORBIDDEN")
		if fe.Details["requiredPermission"] != need {
			t.Errorf("%s: details %v", key, fe.Details)
		}
	}
}

// TestEndUserTerms: the current version is the configured last one (V1 at
// the UMA domain by default); a customer may name any configured version,
// another is refused END_USER_TERMS_VERSION_NOT_FOUND alone, or named
// among other bad fields; nothing is stored.
func TestEndUserTerms(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/customers/end-user-terms", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var terms payments.EndUserTerms
	r.decode(t, &terms)
	if terms != (payments.EndUserTerms{Version: "V1", URL: "https://uma.localhost/end-user-terms"}) {
		t.Fatalf("default terms %+v", terms)
	}

	e = newEnv(t, func(c *Config) {
		c.EndUserTerms = []payments.EndUserTerms{{Version: "V1", URL: "https://terms.example/v1"}, {Version: "2026-11", URL: "https://terms.example/2026-11"}}
	})
	r = e.do("GET", "/customers/end-user-terms", nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &terms)
	if terms.Version != "2026-11" || terms.URL != "https://terms.example/2026-11" {
		t.Fatalf("current terms %+v", terms)
	}
	consent := func(v string) map[string]any {
		return map[string]any{"acceptedAt": "2026-11-22T11:00:00Z", "ipAddress": "203.0.113.7", "termsVersion": v, "acceptanceMethod": "CHECKBOX"}
	}
	for _, v := range []string{"V1", "2026-11"} {
		e.mustStatus(e.do("POST", "/customers", map[string]any{"platformCustomerId": "terms-" + v, "customerType": "INDIVIDUAL",
			"endUserTermsConsent": consent(v)}, nil), http.StatusCreated)
	}
	r = e.do("POST", "/customers", map[string]any{"platformCustomerId": "terms-v9", "customerType": "INDIVIDUAL", "endUserTermsConsent": consent("v1")}, nil)
	fe := wantCode(t, r, http.StatusBadRequest, "END_USER_TERMS_VERSION_NOT_FOUND")
	if !strings.Contains(string(r.body), `"field":"endUserTermsConsent.termsVersion"`) {
		t.Fatalf("field not named: %s", r.body)
	}
	_ = fe
	r = e.do("POST", "/customers", map[string]any{"platformCustomerId": "terms-v9", "customerType": "INDIVIDUAL", "phoneNumber": "5",
		"endUserTermsConsent": consent("V9")}, nil)
	wantCode(t, r, http.StatusBadRequest, "INVALID_INPUT")
	if got, want := fieldsOf(t, r), []string{"endUserTermsConsent.termsVersion", "phoneNumber"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	r = e.do("GET", "/customers?platformCustomerId=terms-v9", nil, nil)
	var list wire.List[wire.Customer]
	r.decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("a refused customer was stored: %s", r.body)
	}

	// An update too (the first leg refuses before any challenge).
	var c wire.Customer
	r = e.do("GET", "/customers?platformCustomerId=terms-V1", nil, nil)
	r.decode(t, &list)
	c = list.Data[0]
	wantCode(t, e.do("PATCH", "/customers/"+c.ID, map[string]any{"endUserTermsConsent": consent("V3")}, nil), http.StatusBadRequest,
		"END_USER_TERMS_VERSION_NOT_FOUND")

	// A configuration the service cannot use is refused at start.
	for _, bad := range [][]payments.EndUserTerms{
		{{Version: "", URL: "https://terms.example"}},
		{{Version: "V1", URL: "terms.example/v1"}},
		{{Version: "V1", URL: "https://terms.example/a"}, {Version: "V1", URL: "https://terms.example/b"}},
	} {
		_, err := New(context.Background(), Config{Store: e.store, Mailer: &mail.Mailbox{}, PlatformCredential: testCredential,
			AtRestKey: testAtRestKey, WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin}, EndUserTerms: bad})
		if err == nil {
			t.Errorf("terms %+v accepted", bad)
		}
	}
}

// TestDirectory: the UMA providers and VASPs are the service itself, under
// its UMA domain; bad queries are refused naming every field.
func TestDirectory(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.UMADomain = "pay.example.org" })
	var providers wire.List[payments.UmaProvider]
	r := e.do("GET", "/uma-providers", nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &providers)
	if len(providers.Data) != 1 || providers.HasMore || providers.Data[0].Domain != "pay.example.org" || providers.Data[0].Name != "pay.example.org" ||
		!providers.Data[0].AllowListStatus || len(providers.Data[0].SupportedCurrencies) == 0 {
		t.Fatalf("providers %s", r.body)
	}
	if !slices.ContainsFunc(providers.Data[0].SupportedCurrencies, func(c wire.Currency) bool { return c.Code == "USD" && c.Decimals == 2 }) {
		t.Fatalf("USD missing: %s", r.body)
	}
	for q, n := range map[string]int{"currencyCode=USD": 1, "currencyCode=XYZ": 0, "countryCode=DE&hasBlockedProviders=false&sortOrder=desc": 1} {
		r := e.do("GET", "/uma-providers?"+q, nil, nil)
		e.mustStatus(r, http.StatusOK)
		var l wire.List[payments.UmaProvider]
		r.decode(t, &l)
		if len(l.Data) != n || *l.TotalCount != n {
			t.Errorf("%s: %s", q, r.body)
		}
	}
	r = e.do("GET", "/uma-providers?countryCode=usa&currencyCode=usd&hasBlockedProviders=yes&sortOrder=up&limit=101&cursor=x", nil, nil)
	if got, want := fieldsOf(t, r), []string{"countryCode", "currencyCode", "cursor", "hasBlockedProviders", "limit", "sortOrder"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}

	r = e.do("GET", "/vasps", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var vasps wire.List[payments.Vasp]
	r.decode(t, &vasps)
	if len(vasps.Data) != 1 || vasps.Data[0].VaspName != "pay.example.org" || vasps.HasMore {
		t.Fatalf("vasps %s", r.body)
	}
	r = e.do("GET", "/vasps?limit=abc&cursor=x", nil, nil)
	if got, want := fieldsOf(t, r), []string{"cursor", "limit"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
}
