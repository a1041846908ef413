package devoidc

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Claims describes a token for Mint. Zero fields take the values a real
// sign-in would give, so a test sets only what it is about.
type Claims struct {
	// Subject defaults to SubjectFor(Email); with no Email either, the
	// token has no sub (which verifiers refuse: useful for tests).
	Subject string
	// Email, when set, is sent with email_verified true.
	Email string
	// Nonce is omitted when empty.
	Nonce string
	// Audience is a string or a []string; nil or empty means the client id.
	Audience any
	// IssuedAt defaults to now, Expiry to now plus the TTL.
	IssuedAt, Expiry time.Time
	// Issuer defaults to URL(); set it to mint a token from elsewhere.
	Issuer string
}

// idClaims fixes the member order of the payload, which keeps tokens
// readable and stable in test output.
type idClaims struct {
	Iss           string `json:"iss"`
	Sub           string `json:"sub,omitempty"`
	Aud           any    `json:"aud"`
	Iat           int64  `json:"iat"`
	Exp           int64  `json:"exp"`
	Nonce         string `json:"nonce,omitempty"`
	Email         string `json:"email,omitempty"`
	EmailVerified bool   `json:"email_verified,omitempty"`
}

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// Mint signs an ID token with the issuer's key. Sign-in uses it; tests use
// it to make tokens the page would never produce (expired, for another
// audience, from another issuer).
func (is *Issuer) Mint(c Claims) (string, error) {
	now := is.now()
	ic := idClaims{
		Iss:           c.Issuer,
		Sub:           c.Subject,
		Nonce:         c.Nonce,
		Email:         c.Email,
		EmailVerified: c.Email != "",
	}
	if ic.Iss == "" {
		ic.Iss = is.url
	}
	if ic.Sub == "" && c.Email != "" {
		ic.Sub = SubjectFor(c.Email)
	}
	switch a := c.Audience.(type) {
	case nil:
		ic.Aud = is.clientID
	case string:
		ic.Aud = a
		if a == "" {
			ic.Aud = is.clientID
		}
	case []string:
		ic.Aud = a
		if len(a) == 0 {
			ic.Aud = is.clientID
		}
	default:
		return "", &Error{Op: "mint", Msg: "Audience must be a string or []string"}
	}
	iat, exp := c.IssuedAt, c.Expiry
	if iat.IsZero() {
		iat = now
	}
	if exp.IsZero() {
		exp = now.Add(is.ttl)
	}
	ic.Iat, ic.Exp = iat.Unix(), exp.Unix()
	return is.sign(ic)
}

func (is *Issuer) sign(c idClaims) (string, error) {
	h, err := json.Marshal(header{Alg: "ES256", Kid: is.kid, Typ: "JWT"})
	if err != nil {
		return "", &Error{Op: "mint", Msg: "encoding header", Err: err}
	}
	p, err := json.Marshal(c)
	if err != nil {
		return "", &Error{Op: "mint", Msg: "encoding claims", Err: err}
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, is.key, digest[:])
	if err != nil {
		return "", &Error{Op: "mint", Msg: "signing", Err: err}
	}
	// JOSE wants r and s as fixed-width 32-byte halves (RFC 7518 §3.4),
	// not the DER that ecdsa.SignASN1 would give.
	var sig [64]byte
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + enc.EncodeToString(sig[:]), nil
}
