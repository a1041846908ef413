package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

const clientID = "paywallet-test"

func newTestVerifier(t *testing.T, issuer string, c *clock) *Verifier {
	t.Helper()
	v, err := NewVerifier([]Provider{{Issuer: issuer, ClientID: clientID}}, nil, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerify(t *testing.T) {
	rk, ek := rsaKey2048(), ecKey1()
	f := newFakeIssuer(t, rsaJWK("rsa1", &rk.PublicKey), ecJWK("ec1", &ek.PublicKey))
	c := &clock{t: t0}
	v := newTestVerifier(t, f.srv.URL, c)
	iss := f.srv.URL

	with := func(change func(m map[string]any)) map[string]any {
		m := claimsAt(iss, clientID, t0)
		change(m)
		return m
	}
	good := claimsAt(iss, clientID, t0)
	derSig := func() string {
		tok := signJWT(t, hdr("ES256", "ec1"), good, ek)
		input := tok[:strings.LastIndexByte(tok, '.')]
		h := sha256.Sum256([]byte(input))
		der, err := ecdsa.SignASN1(rand.Reader, ek, h[:])
		if err != nil {
			t.Fatal(err)
		}
		return input + "." + enc(der)
	}()
	tampered := func() string {
		tok := signJWT(t, hdr("ES256", "ec1"), good, ek)
		parts := strings.Split(tok, ".")
		parts[1] = encJSON(t, with(func(m map[string]any) { m["sub"] = "someone-else" }))
		return strings.Join(parts, ".")
	}()

	tests := []struct {
		name string
		raw  string
		want Kind // 0: must verify
	}{
		{"RS256", signJWT(t, hdr("RS256", "rsa1"), good, rk), 0},
		{"ES256", signJWT(t, hdr("ES256", "ec1"), good, ek), 0},
		{"ES256 without kid, one EC key", signJWT(t, hdr("ES256", ""), good, ek), 0},
		{"aud array containing client", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["aud"] = []string{"other", clientID} }), ek), 0},
		{"expired within leeway", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["exp"] = t0.Add(-20 * time.Second).Unix() }), ek), 0},
		{"iat ahead within leeway", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["iat"] = t0.Add(20 * time.Second).Unix() }), ek), 0},

		{"malformed", "not.a.jwt", KindMalformed},
		{"untrusted issuer", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["iss"] = "https://evil.example" }), ek), KindUntrustedIssuer},
		{"issuer with extra slash", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["iss"] = iss + "/" }), ek), KindUntrustedIssuer},
		{"wrong aud", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["aud"] = "someone-else" }), ek), KindInvalid},
		{"expired", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["exp"] = t0.Add(-31 * time.Second).Unix() }), ek), KindInvalid},
		{"iat in the future", signJWT(t, hdr("ES256", "ec1"), with(func(m map[string]any) { m["iat"] = t0.Add(time.Minute).Unix() }), ek), KindInvalid},
		{"alg none", signJWT(t, hdr("none", ""), good, nil), KindInvalid},
		{"alg none with kid", signJWT(t, hdr("none", "ec1"), good, nil), KindInvalid},
		{"HS256 keyed with the public key", signJWT(t, hdr("HS256", "rsa1"), good, []byte(enc(rk.PublicKey.N.Bytes()))), KindInvalid},
		{"RS384", signJWT(t, hdr("RS384", "rsa1"), good, rk), KindInvalid},
		{"ES256 header on RSA signature", signJWT(t, hdr("ES256", "rsa1"), good, rk), KindInvalid},
		{"signature by another key", signJWT(t, hdr("ES256", "ec1"), good, ecKey2()), KindInvalid},
		{"DER signature", derSig, KindInvalid},
		{"tampered payload", tampered, KindInvalid},
		{"crit header", signJWT(t, map[string]any{"alg": "ES256", "kid": "ec1", "crit": []string{"exp"}}, good, ek), KindInvalid},
		{"empty signature", signJWT(t, hdr("ES256", "ec1"), good, nil), KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := v.Verify(context.Background(), tt.raw)
			if tt.want == 0 {
				if err != nil {
					t.Fatalf("Verify: %v (%v)", err, errorsCause(err))
				}
				if tok.Subject != "user-1" || tok.Nonce != "n-1" || tok.Email != "a@example.com" || !tok.EmailVerified {
					t.Errorf("claims: %+v", tok)
				}
				return
			}
			if tok != nil || KindOf(err) != tt.want {
				t.Fatalf("Verify = %v, %v; want kind %v", tok, err, tt.want)
			}
		})
	}
	if n := f.discHits.Load(); n != 1 {
		t.Errorf("discovery fetched %d times, want 1 (keys are cached)", n)
	}
}

func errorsCause(err error) error {
	if e, ok := err.(*Error); ok {
		return e.Err
	}
	return nil
}

func TestKeyRotationAndThrottle(t *testing.T) {
	old, next := ecKey1(), ecKey2()
	f := newFakeIssuer(t, ecJWK("old", &old.PublicKey))
	c := &clock{t: t0}
	v := newTestVerifier(t, f.srv.URL, c)
	ctx := context.Background()
	claims := claimsAt(f.srv.URL, clientID, t0)

	if _, err := v.Verify(ctx, signJWT(t, hdr("ES256", "old"), claims, old)); err != nil {
		t.Fatal(err)
	}
	// The issuer rotates, and a token with the new kid arrives at once: the
	// last fetch was just now, so no refetch happens yet.
	f.setKeys(ecJWK("old", &old.PublicKey), ecJWK("new", &next.PublicKey))
	rotated := signJWT(t, hdr("ES256", "new"), claims, next)
	if _, err := v.Verify(ctx, rotated); KindOf(err) != KindInvalid {
		t.Fatalf("within the refetch interval: %v, want invalid", err)
	}
	// A flood of unknown kids, concurrently, costs the issuer nothing.
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			raw := signJWT(t, hdr("ES256", "bogus-"+string(rune('a'+i%26))), claims, next)
			if _, err := v.Verify(ctx, raw); KindOf(err) != KindInvalid {
				t.Errorf("bogus kid: %v", err)
			}
		})
	}
	wg.Wait()
	if n := f.jwksHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times during the flood, want 1", n)
	}

	c.Advance(RefetchInterval + time.Second)
	claims = claimsAt(f.srv.URL, clientID, c.Now())
	rotated = signJWT(t, hdr("ES256", "new"), claims, next)
	if _, err := v.Verify(ctx, rotated); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if n := f.jwksHits.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
	// Both keys now verify without any further fetch; unknown kids are
	// throttled again.
	for range 10 {
		v.Verify(ctx, signJWT(t, hdr("ES256", "old"), claims, old))
		v.Verify(ctx, signJWT(t, hdr("ES256", "zzz"), claims, old))
	}
	if n := f.jwksHits.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}

	// The issuer withdraws the old key; after keyMaxAge it stops verifying.
	f.setKeys(ecJWK("new", &next.PublicKey))
	c.Advance(keyMaxAge)
	claims = claimsAt(f.srv.URL, clientID, c.Now())
	if _, err := v.Verify(ctx, signJWT(t, hdr("ES256", "old"), claims, old)); KindOf(err) != KindInvalid {
		t.Fatalf("withdrawn key: %v, want invalid", err)
	}
}

func TestColdConcurrentVerify(t *testing.T) {
	k := ecKey1()
	f := newFakeIssuer(t, ecJWK("k", &k.PublicKey))
	f.jwksDelay = 50 * time.Millisecond
	c := &clock{t: t0}
	v := newTestVerifier(t, f.srv.URL, c)
	raw := signJWT(t, hdr("ES256", "k"), claimsAt(f.srv.URL, clientID, t0), k)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), raw); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := f.jwksHits.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1", n)
	}
}

func TestTrailingSlashIssuer(t *testing.T) {
	k := ecKey1()
	f := newFakeIssuer(t, ecJWK("k", &k.PublicKey))
	iss := f.srv.URL + "/"
	f.discIss = iss
	c := &clock{t: t0}
	v := newTestVerifier(t, iss, c)
	if _, err := v.Verify(context.Background(), signJWT(t, hdr("ES256", "k"), claimsAt(iss, clientID, t0), k)); err != nil {
		t.Fatal(err)
	}
}

func TestKeysUnavailable(t *testing.T) {
	k := ecKey1()
	tests := []struct {
		name  string
		setup func(f *fakeIssuer)
	}{
		{"discovery names another issuer", func(f *fakeIssuer) { f.discIss = "https://accounts.example" }},
		{"JWKS not JSON", func(f *fakeIssuer) { f.jwksBody = []byte("<html>") }},
		{"JWKS without usable keys", func(f *fakeIssuer) { f.jwksBody = []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`) }},
		{"JWKS too large", func(f *fakeIssuer) {
			f.jwksBody = []byte(`{"keys":[],"pad":"` + strings.Repeat("a", maxDocument) + `"}`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeIssuer(t, ecJWK("k", &k.PublicKey))
			tt.setup(f)
			c := &clock{t: t0}
			v := newTestVerifier(t, f.srv.URL, c)
			raw := signJWT(t, hdr("ES256", "k"), claimsAt(f.srv.URL, clientID, t0), k)
			for range 3 {
				if _, err := v.Verify(context.Background(), raw); KindOf(err) != KindUnavailable {
					t.Fatalf("Verify: %v, want unavailable", err)
				}
			}
			if n := f.discHits.Load(); n != 1 {
				t.Errorf("discovery fetched %d times, want 1 (failures are throttled too)", n)
			}
		})
	}

	// An issuer that does not answer at all.
	c := &clock{t: t0}
	v := newTestVerifier(t, "http://127.0.0.1:1", c)
	raw := signJWT(t, hdr("ES256", "k"), claimsAt("http://127.0.0.1:1", clientID, t0), k)
	if _, err := v.Verify(context.Background(), raw); KindOf(err) != KindUnavailable {
		t.Fatalf("unreachable issuer: %v", err)
	}
}

func TestCancelledCallerDoesNotThrottle(t *testing.T) {
	k := ecKey1()
	f := newFakeIssuer(t, ecJWK("k", &k.PublicKey))
	c := &clock{t: t0}
	v := newTestVerifier(t, f.srv.URL, c)
	raw := signJWT(t, hdr("ES256", "k"), claimsAt(f.srv.URL, clientID, t0), k)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Verify(ctx, raw); KindOf(err) != KindUnavailable {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := v.Verify(context.Background(), raw); err != nil {
		t.Fatalf("next caller: %v", err)
	}
}

func TestParseJWKS(t *testing.T) {
	rk, weak, ek := rsaKey2048(), rsaKey1024(), ecKey1()
	offCurve := ecJWK("off", &ek.PublicKey)
	offCurve["y"] = offCurve["x"]
	padded := ecJWK("padded", &ek.PublicKey)
	padded["x"] = padded["x"].(string) + "="
	padded["y"] = padded["y"].(string) + "="
	noAlg := rsaJWK("noalg", &rk.PublicKey)
	delete(noAlg, "alg")
	delete(noAlg, "use")
	encUse := ecJWK("enc", &ek.PublicKey)
	encUse["use"] = "enc"
	ps256 := rsaJWK("ps", &rk.PublicKey)
	ps256["alg"] = "PS256"
	p384 := ecJWK("p384", &ek.PublicKey)
	p384["crv"] = "P-384"
	keys := []any{
		rsaJWK("rsa", &rk.PublicKey), ecJWK("ec", &ek.PublicKey), padded, noAlg, // kept
		rsaJWK("weak", &weak.PublicKey), offCurve, encUse, ps256, p384, // skipped
		map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
		map[string]any{"kty": "RSA", "kid": "bad-n", "n": "!!", "e": "AQAB"},
		map[string]any{"kty": "RSA", "kid": "even-e", "n": enc(rk.PublicKey.N.Bytes()), "e": "Ag"},
		"not an object",
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	got, err := parseJWKS(b)
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range got {
		kids = append(kids, k.kid+"/"+k.alg)
	}
	if want := "rsa/RS256 ec/ES256 padded/ES256 noalg/RS256"; strings.Join(kids, " ") != want {
		t.Errorf("kept %q, want %q", strings.Join(kids, " "), want)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"keys":{}}`, `{"keys":[]}`} {
		if _, err := parseJWKS([]byte(bad)); err == nil {
			t.Errorf("parseJWKS(%q) accepted", bad)
		}
	}
}

func TestNoKidWithSeveralKeys(t *testing.T) {
	a, b := ecKey1(), ecKey3()
	f := newFakeIssuer(t, ecJWK("a", &a.PublicKey), ecJWK("b", &b.PublicKey))
	c := &clock{t: t0}
	v := newTestVerifier(t, f.srv.URL, c)
	claims := claimsAt(f.srv.URL, clientID, t0)
	if _, err := v.Verify(context.Background(), signJWT(t, hdr("ES256", "a"), claims, a)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), signJWT(t, hdr("ES256", ""), claims, a)); KindOf(err) != KindInvalid {
		t.Fatalf("no kid, two keys: %v", err)
	}
}

func TestNewVerifier(t *testing.T) {
	tests := []struct {
		name      string
		providers []Provider
		ok        bool
	}{
		{"https", []Provider{{"https://accounts.google.com", "c"}}, true},
		{"https with path and slash", []Provider{{"https://login.example/tenant/v2.0/", "c"}}, true},
		{"http loopback v4", []Provider{{"http://127.0.0.1:43123", "c"}}, true},
		{"http loopback v6", []Provider{{"http://[::1]:43123", "c"}}, true},
		{"http localhost", []Provider{{"http://localhost:5556", "c"}}, true},
		{"none", nil, true},
		{"http non-loopback", []Provider{{"http://accounts.example", "c"}}, false},
		{"http private address", []Provider{{"http://10.0.0.1", "c"}}, false},
		{"other scheme", []Provider{{"ftp://accounts.example", "c"}}, false},
		{"relative", []Provider{{"accounts.example", "c"}}, false},
		{"empty issuer", []Provider{{"", "c"}}, false},
		{"query", []Provider{{"https://accounts.example?x=1", "c"}}, false},
		{"fragment", []Provider{{"https://accounts.example#x", "c"}}, false},
		{"user info", []Provider{{"https://u@accounts.example", "c"}}, false},
		{"no client id", []Provider{{"https://accounts.example", ""}}, false},
		{"duplicate", []Provider{{"https://a.example", "c"}, {"https://a.example", "d"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVerifier(tt.providers, nil, nil)
			if tt.ok != (err == nil) || (v == nil) == (err == nil) {
				t.Fatalf("NewVerifier = %v, %v; want ok=%v", v, err, tt.ok)
			}
			if err != nil {
				if KindOf(err) != KindConfig {
					t.Errorf("kind %v", KindOf(err))
				}
				return
			}
			for _, p := range tt.providers {
				if !v.Trusted(p.Issuer) || v.Trusted(p.Issuer+"x") {
					t.Errorf("Trusted(%q) wrong", p.Issuer)
				}
			}
		})
	}
}
