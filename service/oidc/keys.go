package oidc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

const (
	// RefetchInterval is the least time between two key fetches for one
	// issuer. Tokens naming unknown keys cost nothing to make; without this
	// bound a flood of them would become a flood of requests to the issuer.
	RefetchInterval = 30 * time.Second
	// keyMaxAge is how long fetched keys are used before they are refreshed,
	// so that a key the issuer withdraws stops being trusted. If the refresh
	// fails the old keys stay in use: an issuer's outage should not become
	// ours.
	keyMaxAge = time.Hour
	// maxDocument bounds discovery and JWKS responses.
	maxDocument = 1 << 20
	minRSABits  = 2048
	maxRSABits  = 8192 // larger moduli only make verification slow
)

// publicKey is one usable signing key from a JWKS.
type publicKey struct {
	kid string
	alg string // "RS256" or "ES256"
	key crypto.PublicKey
}

// keySource holds one issuer's keys and the bookkeeping that limits how
// often they are fetched.
type keySource struct {
	provider Provider
	// fetching is a one-slot semaphore held while a fetch runs. A channel
	// rather than a mutex so that a request waiting behind a slow fetch can
	// still give up when its context ends.
	fetching chan struct{}

	mu      sync.Mutex
	keys    []publicKey
	fetched time.Time // last successful fetch; zero if never
	tried   time.Time // last attempt; zero if never
	lastErr error     // cause of the last failed attempt
}

func newKeySource(p Provider) *keySource {
	return &keySource{provider: p, fetching: make(chan struct{}, 1)}
}

type pickResult int

const (
	pickFound pickResult = iota
	pickNone
	pickAmbiguous // no kid in the token and several keys could fit
)

// pick finds the key for a token's alg and kid. A token without kid is
// matched only when exactly one key for its alg exists: guessing among
// several would turn one bad signature into several verification attempts
// and hide issuer misconfiguration.
func pick(keys []publicKey, alg, kid string) (crypto.PublicKey, pickResult) {
	var found crypto.PublicKey
	n := 0
	for _, k := range keys {
		if k.alg != alg {
			continue
		}
		if kid != "" {
			if k.kid == kid {
				return k.key, pickFound
			}
			continue
		}
		found = k.key
		n++
	}
	switch {
	case n == 1:
		return found, pickFound
	case n > 1:
		return nil, pickAmbiguous
	}
	return nil, pickNone
}

// key returns the issuer's key for alg and kid, fetching the JWKS when the
// cache has no such key or has grown old, at most once per RefetchInterval.
func (s *keySource) key(ctx context.Context, v *Verifier, alg, kid string) (crypto.PublicKey, error) {
	s.mu.Lock()
	k, res := pick(s.keys, alg, kid)
	fresh := !s.fetched.IsZero() && v.now().Sub(s.fetched) < keyMaxAge
	s.mu.Unlock()
	switch {
	case res == pickFound && fresh:
		return k, nil
	case res == pickAmbiguous:
		return nil, newErr(KindInvalid, "token has no key id and the issuer has several keys", nil)
	}

	select {
	case s.fetching <- struct{}{}:
	case <-ctx.Done():
		return nil, newErr(KindUnavailable, "gave up waiting for issuer keys", ctx.Err())
	}
	defer func() { <-s.fetching }()

	// Another request may have fetched while this one waited; look again.
	s.mu.Lock()
	now := v.now()
	k, res = pick(s.keys, alg, kid)
	if res == pickFound && !s.fetched.IsZero() && now.Sub(s.fetched) < keyMaxAge {
		s.mu.Unlock()
		return k, nil
	}
	if !s.tried.IsZero() && now.Sub(s.tried) < RefetchInterval {
		defer s.mu.Unlock()
		return s.fallback(k, res)
	}
	prevTried := s.tried
	s.tried = now
	s.mu.Unlock()

	keys, err := fetchKeys(ctx, v.client, s.provider.Issuer)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			// This caller gave up; that says nothing about the issuer, so
			// the attempt should not hold back the next caller.
			s.tried = prevTried
		}
		s.lastErr = err
		return s.fallback(k, res)
	}
	s.keys, s.fetched, s.lastErr = keys, now, nil
	k, res = pick(keys, alg, kid)
	switch res {
	case pickFound:
		return k, nil
	case pickAmbiguous:
		return nil, newErr(KindInvalid, "token has no key id and the issuer has several keys", nil)
	}
	return nil, newErr(KindInvalid, "unknown signing key", nil)
}

// fallback answers when no fetch could be made or it failed: a cached key
// (even an old one) is used; without one, the answer depends on whether the
// issuer's keys were ever known. s.mu must be held.
func (s *keySource) fallback(k crypto.PublicKey, res pickResult) (crypto.PublicKey, error) {
	switch {
	case res == pickFound:
		return k, nil
	case s.fetched.IsZero() || s.lastErr != nil:
		return nil, newErr(KindUnavailable, "issuer keys could not be fetched", s.lastErr)
	}
	return nil, newErr(KindInvalid, "unknown signing key", nil)
}

// fetchKeys reads the issuer's discovery document, checks that it speaks
// for exactly this issuer (so one issuer cannot vouch for another's
// tokens), and reads the JWKS it points to.
func fetchKeys(ctx context.Context, client *http.Client, issuer string) ([]publicKey, error) {
	disc, err := getDocument(ctx, client, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	m, ok := object(disc)
	if !ok {
		return nil, errors.New("discovery: not a JSON object")
	}
	iss, ok1 := optString(m, "issuer")
	jwksURI, ok2 := optString(m, "jwks_uri")
	if !ok1 || !ok2 {
		return nil, errors.New("discovery: issuer or jwks_uri is not a string")
	}
	if iss != issuer {
		return nil, fmt.Errorf("discovery: issuer %q is not %q", iss, issuer)
	}
	if err := checkURL(jwksURI, false); err != nil {
		return nil, fmt.Errorf("discovery: jwks_uri: %w", err)
	}
	set, err := getDocument(ctx, client, jwksURI)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	return parseJWKS(set)
}

// getDocument GETs a JSON document of bounded size. The Content-Type is not
// looked at: providers label JWKS variously, and the body is parsed
// strictly anyway.
func getDocument(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// A redirect must not lead the fetch to plain http elsewhere.
	if err := checkURL(resp.Request.URL.String(), false); err != nil {
		return nil, fmt.Errorf("redirected: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxDocument {
		return nil, errors.New("document too large")
	}
	return body, nil
}

// parseJWKS keeps the keys that can verify RS256 or ES256 signatures and
// skips the rest (encryption keys, other algorithms, weak or broken keys):
// one odd key in a provider's set must not break sign-in for all.
func parseJWKS(b []byte) ([]publicKey, error) {
	m, ok := object(b)
	if !ok {
		return nil, errors.New("jwks: not a JSON object")
	}
	var raws []json.RawMessage
	if r, ok := m["keys"]; !ok || len(r) == 0 || r[0] != '[' || json.Unmarshal(r, &raws) != nil {
		return nil, errors.New("jwks: keys is not an array")
	}
	var out []publicKey
	for _, r := range raws {
		km, ok := object(r)
		if !ok {
			continue
		}
		if k, ok := parseJWK(km); ok {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("jwks: no usable RS256 or ES256 key")
	}
	return out, nil
}

func parseJWK(m map[string]json.RawMessage) (publicKey, bool) {
	var str [8]string
	names := [8]string{"kty", "use", "alg", "kid", "n", "e", "crv", "x"}
	for i, name := range names {
		var ok bool
		if str[i], ok = optString(m, name); !ok {
			return publicKey{}, false
		}
	}
	kty, use, alg, kid := str[0], str[1], str[2], str[3]
	if use != "" && use != "sig" {
		return publicKey{}, false
	}
	switch kty {
	case "RSA":
		if alg != "" && alg != "RS256" {
			return publicKey{}, false
		}
		key, ok := rsaKey(str[4], str[5])
		return publicKey{kid: kid, alg: "RS256", key: key}, ok
	case "EC":
		if alg != "" && alg != "ES256" {
			return publicKey{}, false
		}
		y, ok := optString(m, "y")
		if !ok || str[6] != "P-256" {
			return publicKey{}, false
		}
		key, ok := p256Key(str[7], y)
		return publicKey{kid: kid, alg: "ES256", key: key}, ok
	}
	return publicKey{}, false
}

// keyBytes decodes a JWK member. Padding is tolerated here, unlike in
// tokens: the JWKS comes from the issuer we trust, and a few emit it.
func keyBytes(s string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	return b, err == nil && len(b) > 0
}

func rsaKey(n64, e64 string) (*rsa.PublicKey, bool) {
	nb, ok1 := keyBytes(n64)
	eb, ok2 := keyBytes(e64)
	if !ok1 || !ok2 || len(eb) > 4 {
		return nil, false
	}
	n := new(big.Int).SetBytes(nb)
	if n.BitLen() < minRSABits || n.BitLen() > maxRSABits || n.Bit(0) == 0 {
		return nil, false
	}
	e := new(big.Int).SetBytes(eb).Int64()
	if e < 3 || e%2 == 0 || e > 1<<31-1 {
		return nil, false
	}
	return &rsa.PublicKey{N: n, E: int(e)}, true
}

// p256Key builds the key and, through ParseUncompressedPublicKey, checks
// that the point is on the curve: an off-curve point is the start of
// invalid-curve attacks.
func p256Key(x64, y64 string) (*ecdsa.PublicKey, bool) {
	x, ok1 := keyBytes(x64)
	y, ok2 := keyBytes(y64)
	if !ok1 || !ok2 || len(x) != 32 || len(y) != 32 {
		return nil, false
	}
	pt := append(append([]byte{4}, x...), y...)
	k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
	return k, err == nil
}
