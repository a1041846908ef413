package bff

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The replay-safe webhook signature, as the service signs it (DESIGN.md
// "Events"):
//
//	Service-Webhook-Signature: t=<unix seconds>,kid=<key id>,v1=<base64 DER ECDSA P-256>
//
// over SHA-256 of "<webhook id>.<t>.<raw body>", with the service's public
// keys published as a JWKS (ES256 keys on P-256). This file is the BFF's
// own reading of that contract, kept apart so that it can give way to a
// package shared with the service.

// HeaderWebhookSignature is the replay-safe signature header of a webhook.
const HeaderWebhookSignature = "Service-Webhook-Signature"

// webhookSignature is a parsed Service-Webhook-Signature header.
type webhookSignature struct {
	t   int64
	kid string
	v1  [][]byte // DER signatures; more than one while keys rotate
}

var errSignatureHeader = errors.New("malformed " + HeaderWebhookSignature + " header")

// parseWebhookSignature reads the header. Elements it does not know
// (a future v2) are skipped.
func parseWebhookSignature(h string) (webhookSignature, error) {
	var sig webhookSignature
	if h == "" || len(h) > 4096 {
		return sig, errSignatureHeader
	}
	haveT := false
	for _, part := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return sig, errSignatureHeader
		}
		switch k {
		case "t":
			if haveT || len(v) == 0 || len(v) > 12 || strings.Trim(v, "0123456789") != "" {
				return sig, errSignatureHeader
			}
			sig.t, _ = strconv.ParseInt(v, 10, 64)
			haveT = true
		case "kid":
			if sig.kid != "" || v == "" || len(v) > 200 {
				return sig, errSignatureHeader
			}
			sig.kid = v
		case "v1":
			if len(sig.v1) == 4 {
				return sig, errSignatureHeader
			}
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				// Tolerate the unpadded and URL-safe alphabets.
				b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(v), "="))
			}
			if err != nil || len(b) == 0 || len(b) > 80 {
				return sig, errSignatureHeader
			}
			sig.v1 = append(sig.v1, b)
		}
	}
	if !haveT || sig.kid == "" || len(sig.v1) == 0 {
		return sig, errSignatureHeader
	}
	return sig, nil
}

// webhookSigned is the message the replay-safe signature covers.
func webhookSigned(id string, t int64, body []byte) []byte {
	msg := make([]byte, 0, len(id)+len(body)+24)
	msg = append(msg, id...)
	msg = append(msg, '.')
	msg = strconv.AppendInt(msg, t, 10)
	msg = append(msg, '.')
	return append(msg, body...)
}

// verifyWebhook reports whether one of sig's signatures is key's over the
// webhook id, sig's time and body.
func verifyWebhook(key *ecdsa.PublicKey, sig webhookSignature, id string, body []byte) bool {
	digest := sha256.Sum256(webhookSigned(id, sig.t, body))
	for _, s := range sig.v1 {
		if ecdsa.VerifyASN1(key, digest[:], s) {
			return true
		}
	}
	return false
}

// jwk is one key of a JWKS, as far as the BFF reads it.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// parseJWKS returns the ES256 signing keys of a JWKS by kid. Keys of
// other kinds are skipped; a set with no usable key is an error.
func parseJWKS(b []byte) (map[string]*ecdsa.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("webhook keys: %w", err)
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "EC" || k.Crv != "P-256" || k.Kid == "" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "ES256") {
			continue
		}
		x, errX := base64.RawURLEncoding.DecodeString(k.X)
		y, errY := base64.RawURLEncoding.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			continue
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			continue
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("webhook keys: no ES256 P-256 signing key in the set")
	}
	return keys, nil
}

// Refetching the service's keys: an unknown kid makes the BFF fetch them
// again, at most once a minute after a fetch that worked (a forged kid
// cannot make it hammer the service) and every few seconds after one that
// failed; known keys are fetched again after an hour, so that a key the
// service withdrew stops being honoured.
const (
	jwksRefetchAfter = time.Minute
	jwksRetryAfter   = 5 * time.Second
	jwksMaxAge       = time.Hour
	maxJWKSBody      = 64 << 10
)

var errUnknownKid = errors.New("webhook signed with a key the service does not publish")

// jwksCache holds the service's webhook keys.
type jwksCache struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    map[string]*ecdsa.PublicKey
	fetched time.Time // the last fetch that worked
	tried   time.Time // the last attempt
	failed  bool      // the last attempt failed
}

// key returns the key kid names, fetching the set when it is unknown or
// old (see above). An error other than errUnknownKid means the keys could
// not be had at all.
func (c *jwksCache) key(ctx context.Context, kid string) (*ecdsa.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	k, ok := c.keys[kid]
	if ok && now.Sub(c.fetched) < jwksMaxAge {
		return k, nil
	}
	wait := jwksRefetchAfter
	if c.failed {
		wait = jwksRetryAfter
	}
	if !c.tried.IsZero() && now.Sub(c.tried) < wait {
		if ok {
			return k, nil // old, but not withdrawn as far as we know
		}
		if c.keys == nil {
			return nil, errors.New("webhook keys: not fetched yet")
		}
		return nil, errUnknownKid
	}
	c.tried = now
	keys, err := c.fetch(ctx)
	c.failed = err != nil
	if err != nil {
		if ok {
			return k, nil // keep using it until the service answers
		}
		if c.keys == nil {
			return nil, err
		}
		return nil, errUnknownKid
	}
	c.keys, c.fetched = keys, now
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, errUnknownKid
}

func (c *jwksCache) fetch(ctx context.Context) (map[string]*ecdsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("webhook keys: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "paywallet-bff")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("webhook keys: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody+1))
	if err != nil {
		return nil, fmt.Errorf("webhook keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK || len(b) > maxJWKSBody {
		return nil, fmt.Errorf("webhook keys: GET %s answered %d (%d bytes)", c.url, resp.StatusCode, len(b))
	}
	return parseJWKS(b)
}
