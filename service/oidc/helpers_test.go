package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	rsaKey2048 = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(2048) })
	rsaKey1024 = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(1024) })
	ecKey1     = sync.OnceValue(mustEC)
	ecKey2     = sync.OnceValue(mustEC)
	ecKey3     = sync.OnceValue(mustEC)
)

func mustRSA(bits int) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func encJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return enc(b)
}

// signJWT makes a compact JWS over header and claims with key, which is an
// *rsa.PrivateKey (RS256), an *ecdsa.PrivateKey (ES256, JOSE r‖s), a
// []byte (HMAC-SHA256) or nil (empty signature).
func signJWT(t testing.TB, header, claims map[string]any, key any) string {
	t.Helper()
	input := encJSON(t, header) + "." + encJSON(t, claims)
	h := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:]); err != nil {
			t.Fatal(err)
		}
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, h[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case []byte:
		m := hmac.New(sha256.New, k)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	case nil:
	default:
		t.Fatalf("signJWT: key type %T", key)
	}
	return input + "." + enc(sig)
}

func rsaJWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]any {
	b, err := k.Bytes()
	if err != nil {
		panic(err)
	}
	return map[string]any{"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
		"x": enc(b[1:33]), "y": enc(b[33:])}
}

// fakeIssuer serves a discovery document and a JWKS that tests can change
// while it runs, and counts the requests for each.
type fakeIssuer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	keys      []map[string]any
	discIss   string // issuer in the discovery document; "" means srv.URL
	jwksBody  []byte // when set, served instead of keys
	discHits  atomic.Int32
	jwksHits  atomic.Int32
	jwksDelay time.Duration
}

func newFakeIssuer(t testing.TB, keys ...map[string]any) *fakeIssuer {
	f := &fakeIssuer{keys: keys}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		f.discHits.Add(1)
		f.mu.Lock()
		iss := f.discIss
		f.mu.Unlock()
		if iss == "" {
			iss = f.srv.URL
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "jwks_uri": f.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		f.jwksHits.Add(1)
		f.mu.Lock()
		body, keys, delay := f.jwksBody, f.keys, f.jwksDelay
		f.mu.Unlock()
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/plain") // must not matter
		if body != nil {
			w.Write(body)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIssuer) setKeys(keys ...map[string]any) {
	f.mu.Lock()
	f.keys = keys
	f.mu.Unlock()
}

// clock is a settable time source for the verifier.
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

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func claimsAt(iss, aud string, now time.Time) map[string]any {
	return map[string]any{
		"iss": iss, "sub": "user-1", "aud": aud,
		"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
		"nonce": "n-1", "email": "a@example.com", "email_verified": true,
	}
}

func hdr(alg, kid string) map[string]any {
	h := map[string]any{"alg": alg, "typ": "JWT"}
	if kid != "" {
		h["kid"] = kid
	}
	return h
}
