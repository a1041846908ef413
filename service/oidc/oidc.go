// Package oidc verifies OpenID Connect ID tokens, the proof of identity
// behind OAUTH wallet credentials.
//
// A token is believed only when it was signed by a key its issuer publishes
// (found through the issuer's discovery document and JWKS), it is addressed
// to our client id, and it is within its lifetime. Only RS256 and ES256 are
// accepted: those are what real providers use, and refusing everything else
// closes the classic JWT holes ("alg":"none", and HS256 with a public key
// used as the HMAC secret).
//
// The package checks what every caller must check. Checks that depend on
// the request (nonce, how fresh iat must be, which sub maps to which
// customer) are left to the service.
//
// It imports only the standard library.
package oidc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Provider is one trusted issuer and the audience its tokens must carry.
type Provider struct {
	// Issuer is compared byte for byte with the token's iss claim and with
	// the issuer member of the discovery document, e.g.
	// "https://accounts.google.com" or "http://127.0.0.1:43123".
	Issuer string
	// ClientID is our client id at that issuer; aud must contain it.
	ClientID string
}

// Leeway tolerates clock skew between us and the issuer for exp and iat.
const Leeway = 30 * time.Second

// Verifier checks ID tokens against a fixed set of providers. It is safe for
// concurrent use; keys are fetched lazily and cached per issuer.
type Verifier struct {
	client  *http.Client
	now     func() time.Time
	sources map[string]*keySource
}

// NewVerifier checks the providers and returns a Verifier for them. A nil
// client means one with a 10 s timeout (http.DefaultClient has none, and a
// hung issuer must not hang sign-in); a nil now means time.Now.
func NewVerifier(providers []Provider, client *http.Client, now func() time.Time) (*Verifier, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	v := &Verifier{client: client, now: now, sources: make(map[string]*keySource, len(providers))}
	for _, p := range providers {
		if err := checkURL(p.Issuer, true); err != nil {
			return nil, newErr(KindConfig, "issuer must be an https URL (http only on loopback)", err)
		}
		if p.ClientID == "" {
			return nil, newErr(KindConfig, "provider has no client id", nil)
		}
		if _, dup := v.sources[p.Issuer]; dup {
			return nil, newErr(KindConfig, "duplicate issuer", nil)
		}
		v.sources[p.Issuer] = newKeySource(p)
	}
	return v, nil
}

// Trusted reports whether issuer is one of the configured issuers (exact
// match), so the service can answer "unsupported issuer" before anything
// else.
func (v *Verifier) Trusted(issuer string) bool {
	_, ok := v.sources[issuer]
	return ok
}

// Verify parses raw and checks its issuer, audience, lifetime, algorithm
// and signature. It returns the token only when every check passes; errors
// are *Error, with a Kind that tells the caller which status to answer.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Token, error) {
	t, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	src, ok := v.sources[t.Issuer]
	if !ok {
		return nil, newErr(KindUntrustedIssuer, "", nil)
	}
	// Claim checks first: they are free, and a token that fails them must
	// not cost the issuer a key fetch.
	if t.Alg != "RS256" && t.Alg != "ES256" {
		return nil, newErr(KindInvalid, "unsupported alg", nil)
	}
	if t.crit {
		return nil, newErr(KindInvalid, "unsupported critical header", nil)
	}
	if !slices.Contains(t.Audience, src.provider.ClientID) {
		return nil, newErr(KindInvalid, "wrong audience", nil)
	}
	now := v.now()
	if !now.Before(t.Expiry.Add(Leeway)) {
		return nil, newErr(KindInvalid, "token expired", nil)
	}
	if t.IssuedAt.After(now.Add(Leeway)) {
		return nil, newErr(KindInvalid, "token issued in the future", nil)
	}
	key, err := src.key(ctx, v, t.Alg, t.KeyID)
	if err != nil {
		return nil, err
	}
	if !verifySignature(key, t.signingInput, t.signature) {
		return nil, newErr(KindInvalid, "bad signature", nil)
	}
	return t, nil
}

// verifySignature checks sig over input with a key already matched to the
// token's alg (RSA for RS256, P-256 ECDSA for ES256).
func verifySignature(key crypto.PublicKey, input, sig []byte) bool {
	h := sha256.Sum256(input)
	switch k := key.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
	case *ecdsa.PublicKey:
		// JOSE (RFC 7518 §3.4) sends r‖s as two fixed 32-byte halves, not
		// the DER that crypto/ecdsa's ASN.1 functions expect.
		if len(sig) != 64 {
			return false
		}
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, h[:], r, s)
	}
	return false
}

// checkURL enforces the transport rule for issuers and JWKS locations:
// https, or http only to this machine (the development issuer), because
// keys fetched in the clear from elsewhere could be swapped by anyone on
// the path. An issuer also may not carry user info, a query or a fragment
// (OpenID Connect Discovery §2); a JWKS location may have a query.
func checkURL(s string, issuer bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errors.New("not an absolute URL")
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(s, "#") {
		return errors.New("URL has user info or a fragment")
	}
	if issuer && strings.Contains(s, "?") {
		return errors.New("issuer has a query")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("http is allowed only to a loopback host")
	}
	return errors.New("scheme is not https")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
