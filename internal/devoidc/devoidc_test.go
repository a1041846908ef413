package devoidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/oidc"
)

const redirect = "http://127.0.0.1:9/callback"

// noRedirects is a client that reports redirects instead of following them.
var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func start(t *testing.T, cfg Config) *Issuer {
	t.Helper()
	is, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := is.Close(); err != nil {
			t.Error(err)
		}
	})
	return is
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func post(t *testing.T, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func authorizeURL(is *Issuer, q url.Values) string {
	return is.URL() + "/authorize?" + q.Encode()
}

func goodQuery(is *Issuer) url.Values {
	return url.Values{
		"client_id": {is.ClientID()}, "redirect_uri": {redirect}, "response_type": {"id_token"},
		"scope": {"openid email"}, "nonce": {"nonce-123"}, "state": {"st/ate&1"},
	}
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// formFields reads the hidden fields back out of the page, as a browser
// would submit them.
func formFields(t *testing.T, page string) url.Values {
	t.Helper()
	v := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	if len(v) != 6 {
		t.Fatalf("found %d hidden fields in\n%s", len(v), page)
	}
	return v
}

func TestDiscoveryAndJWKS(t *testing.T) {
	is := start(t, Config{})
	if !strings.HasPrefix(is.URL(), "http://127.0.0.1:") || strings.HasSuffix(is.URL(), "/") {
		t.Fatalf("URL() = %q", is.URL())
	}
	if is.ClientID() != "paywallet-dev" {
		t.Fatalf("ClientID() = %q", is.ClientID())
	}
	resp, body := get(t, is.URL()+"/.well-known/openid-configuration")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("discovery: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"issuer":                                is.URL(),
		"authorization_endpoint":                is.URL() + "/authorize",
		"jwks_uri":                              is.URL() + "/jwks",
		"response_types_supported":              []any{"id_token"},
		"subject_types_supported":               []any{"public"},
		"id_token_signing_alg_values_supported": []any{"ES256"},
		"scopes_supported":                      []any{"openid", "email"},
	}
	for k, v := range want {
		if got, _ := json.Marshal(d[k]); string(got) != mustJSON(v) {
			t.Errorf("discovery %s = %s, want %s", k, got, mustJSON(v))
		}
	}
	if cs, _ := d["claims_supported"].([]any); len(cs) == 0 {
		t.Error("claims_supported missing")
	}

	_, body = get(t, is.URL()+"/jwks")
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal([]byte(body), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks %s: %v", body, err)
	}
	k := set.Keys[0]
	if k["kty"] != "EC" || k["crv"] != "P-256" || k["use"] != "sig" || k["alg"] != "ES256" || k["kid"] == "" {
		t.Fatalf("jwk = %v", k)
	}
	x, _ := base64.RawURLEncoding.DecodeString(k["x"])
	y, _ := base64.RawURLEncoding.DecodeString(k["y"])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil || !pub.Equal(&is.key.PublicKey) {
		t.Fatalf("jwk is not the signing key: %v", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAuthorizeFlow(t *testing.T) {
	is := start(t, Config{RedirectURIs: []string{redirect}})
	resp, page := get(t, authorizeURL(is, goodQuery(is)))
	if resp.StatusCode != 200 {
		t.Fatalf("GET /authorize: %d\n%s", resp.StatusCode, page)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:9") {
		t.Errorf("CSP = %q", csp)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Error("X-Frame-Options missing")
	}
	for _, s := range []string{"<title>Development sign-in</title>", "local development identity provider",
		`type="email" id="email" name="email" required autocomplete="email"`, `id="signin">Continue</button>`,
		`method="post" action="/authorize"`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") || strings.Contains(page, "javascript:") {
		t.Error("page contains script")
	}

	form := formFields(t, page)
	if form.Get("state") != "st/ate&1" || form.Get("nonce") != "nonce-123" {
		t.Fatalf("hidden fields %v", form)
	}
	form.Set("email", "  Alice@Example.com ")
	resp, _ = post(t, is.URL()+"/authorize", form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /authorize: %d", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	base, frag, ok := strings.Cut(loc, "#")
	if !ok || base != redirect {
		t.Fatalf("Location = %q", loc)
	}
	params, err := url.ParseQuery(frag)
	if err != nil || params.Get("state") != "st/ate&1" || params.Get("id_token") == "" {
		t.Fatalf("fragment %q: %v", frag, err)
	}

	v, err := oidc.NewVerifier([]oidc.Provider{{Issuer: is.URL(), ClientID: is.ClientID()}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := v.Verify(context.Background(), params.Get("id_token"))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if tok.Nonce != "nonce-123" || tok.Email != "Alice@Example.com" || !tok.EmailVerified ||
		tok.Subject != SubjectFor("alice@example.com") || tok.Alg != "ES256" || tok.KeyID != is.kid {
		t.Errorf("token %+v", tok)
	}
	if !strings.HasPrefix(tok.Subject, "dev-") || len(tok.Subject) != 24 || is.SubjectFor("ALICE@example.com") != tok.Subject {
		t.Errorf("subject %q", tok.Subject)
	}
	if d := tok.Expiry.Sub(tok.IssuedAt); d != 10*time.Minute {
		t.Errorf("lifetime %v", d)
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	is := start(t, Config{RedirectURIs: []string{redirect}})
	with := func(k, v string) url.Values {
		q := goodQuery(is)
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	// Bad client or redirect: an error page here, never a redirect.
	for name, q := range map[string]url.Values{
		"unregistered redirect": with("redirect_uri", "https://evil.example/cb"),
		"redirect prefix":       with("redirect_uri", redirect+"/x"),
		"no redirect":           with("redirect_uri", ""),
		"wrong client":          with("client_id", "other"),
	} {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				var resp *http.Response
				var page string
				if method == "GET" {
					resp, page = get(t, authorizeURL(is, q))
				} else {
					q.Set("email", "a@b.c")
					resp, page = post(t, is.URL()+"/authorize", q)
				}
				if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(page, "<html") {
					t.Errorf("%s: %d Location=%q", method, resp.StatusCode, resp.Header.Get("Location"))
				}
			}
		})
	}
	// Other protocol errors go back to the (registered) client.
	for name, tc := range map[string]struct {
		q    url.Values
		code string
	}{
		"no nonce":          {with("nonce", ""), "invalid_request"},
		"code flow":         {with("response_type", "code"), "unsupported_response_type"},
		"no openid scope":   {with("scope", "email"), "invalid_scope"},
		"nonce too long":    {with("nonce", strings.Repeat("n", 300)), "invalid_request"},
		"POST has no nonce": {with("nonce", ""), "invalid_request"},
	} {
		t.Run(name, func(t *testing.T) {
			var resp *http.Response
			if strings.HasPrefix(name, "POST") {
				tc.q.Set("email", "a@b.c")
				resp, _ = post(t, is.URL()+"/authorize", tc.q)
			} else {
				resp, _ = get(t, authorizeURL(is, tc.q))
			}
			base, frag, _ := strings.Cut(resp.Header.Get("Location"), "#")
			p, _ := url.ParseQuery(frag)
			if resp.StatusCode != http.StatusSeeOther || base != redirect || p.Get("error") != tc.code ||
				p.Get("state") != "st/ate&1" || p.Get("id_token") != "" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
	// A bad e-mail shows the form again.
	for _, email := range []string{"", "   ", "no-at-sign", "a@", "@b.c", "a b@c.d", "a@-b.c", "a@b..c", "a@b.c@d"} {
		q := goodQuery(is)
		q.Set("email", email)
		resp, page := post(t, is.URL()+"/authorize", q)
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(page, `role="alert"`) ||
			!strings.Contains(page, `id="signin"`) {
			t.Errorf("email %q: %d", email, resp.StatusCode)
		}
		if email == "a b@c.d" && !strings.Contains(page, `value="a b@c.d"`) {
			t.Error("the typed address is not kept")
		}
	}
	// Requests for another host name (DNS rebinding) are refused.
	req, _ := http.NewRequest("GET", is.URL()+"/.well-known/openid-configuration", nil)
	req.Host = "attacker.example" + is.URL()[strings.LastIndexByte(is.URL(), ':'):]
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
}

func TestValidEmail(t *testing.T) {
	tests := map[string]bool{
		"a@b.c": true, "first.last+tag@sub.example.com": true, "dev@localhost": true, "o'neil@x-y.org": true,
		"": false, "a": false, "a@": false, "@b": false, "a@b@c": false, "a b@c": false, "a@b_c.d": false,
		"a@.b": false, "a@b.": false, "a@-b.c": false, "a@b-.c": false, "<a>@b.c": false,
		strings.Repeat("a", 65) + "@b.c": false, "a@" + strings.Repeat("b", 64) + ".c": false,
	}
	for in, want := range tests {
		if got := validEmail(in); got != want {
			t.Errorf("validEmail(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "192.0.2.1:0", "example.com:0", "[::]:0", "127.0.0.1"} {
		is, err := Start(Config{Addr: addr})
		if err == nil {
			is.Close()
			t.Errorf("Start(%q) succeeded", addr)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Start(%q): %T %v", addr, err, err)
		}
	}
	if _, err := Start(Config{RedirectURIs: []string{"http://x/cb#frag"}}); err == nil {
		t.Error("redirect URI with a fragment accepted")
	}
	is := start(t, Config{Addr: "localhost:0"})
	if !strings.HasPrefix(is.URL(), "http://127.") && !strings.HasPrefix(is.URL(), "http://[::1]") {
		t.Errorf("URL() = %q", is.URL())
	}
}

func TestAllowRedirect(t *testing.T) {
	is := start(t, Config{})
	const late = "http://localhost:18080/oauth/callback"
	q := goodQuery(is)
	q.Set("redirect_uri", late)
	if resp, _ := get(t, authorizeURL(is, q)); resp.StatusCode != 400 {
		t.Fatalf("before AllowRedirect: %d", resp.StatusCode)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			is.AllowRedirect("http://localhost:" + string(rune('1'+i)) + "0/cb")
			if resp, err := noRedirects.Get(authorizeURL(is, q)); err == nil {
				resp.Body.Close()
			}
		})
	}
	is.AllowRedirect(late)
	wg.Wait()
	resp, page := get(t, authorizeURL(is, q))
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "form-action 'self' http://localhost:18080;") {
		t.Fatalf("after AllowRedirect: %d %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	form := formFields(t, page)
	form.Set("email", "bob@example.org")
	resp, _ = post(t, is.URL()+"/authorize", form)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), late+"#id_token=") {
		t.Fatalf("POST: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	defer func() {
		if recover() == nil {
			t.Error("AllowRedirect accepted a relative URI")
		}
	}()
	is.AllowRedirect("/relative")
}

func TestMint(t *testing.T) {
	now := time.Now()
	is := start(t, Config{ClientID: "wallet", TokenTTL: time.Minute, Now: func() time.Time { return now }})
	v, err := oidc.NewVerifier([]oidc.Provider{{Issuer: is.URL(), ClientID: "wallet"}}, nil, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		claims Claims
		want   oidc.Kind // 0: verifies
	}{
		{"defaults", Claims{Email: "c@d.e", Nonce: "n"}, 0},
		{"explicit subject, aud array", Claims{Subject: "s", Audience: []string{"x", "wallet"}}, 0},
		{"other audience", Claims{Email: "c@d.e", Audience: "someone"}, oidc.KindInvalid},
		{"expired", Claims{Email: "c@d.e", IssuedAt: now.Add(-time.Hour), Expiry: now.Add(-time.Minute)}, oidc.KindInvalid},
		{"from the future", Claims{Email: "c@d.e", IssuedAt: now.Add(time.Hour)}, oidc.KindInvalid},
		{"other issuer", Claims{Email: "c@d.e", Issuer: "https://accounts.example"}, oidc.KindUntrustedIssuer},
		{"no subject", Claims{}, oidc.KindMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := is.Mint(tt.claims)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := v.Verify(context.Background(), raw)
			if oidc.KindOf(err) != tt.want {
				t.Fatalf("Verify: %v, want kind %v", err, tt.want)
			}
			if tt.want == 0 && (!tok.Expiry.Equal(now.Add(time.Minute).Truncate(time.Second)) || tok.Issuer != is.URL()) {
				t.Errorf("token %+v", tok)
			}
		})
	}
	if _, err := is.Mint(Claims{Audience: 42}); err == nil {
		t.Error("Mint accepted an int audience")
	}
}

func TestClose(t *testing.T) {
	is, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := is.Close(); err != nil {
		t.Fatal(err)
	}
	if err := is.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := noRedirects.Get(is.URL() + "/jwks"); err == nil {
		t.Error("still serving after Close")
	}
}
