package webhooksig

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
)

// The webhook key also signs documents the service publishes to be kept
// rather than delivered (the ledger's chain head, GET /ledger/head): as a
// JWS in compact serialization (RFC 7515) with alg ES256 (RFC 7518 §3.4:
// the signature is R ‖ S, 32 bytes each, not DER) and the key's kid in the
// protected header. Any JOSE library verifies one with the service's JWKS;
// so does [VerifyJWS]. Its signing input, "<base64url header>.<base64url
// payload>", cannot be taken for a webhook body (which is JSON), so a
// signature of one kind never passes for the other.

// ErrJWS reports a JWS that is malformed or names another algorithm.
var ErrJWS = errorf(ErrMalformed, "not an ES256 JWS in compact serialization")

// maxJWS bounds the JWS a verifier parses.
const maxJWS = 16 << 10

// JWSHeader is the protected header of the service's JWS.
type JWSHeader struct {
	Alg string `json:"alg"`           // "ES256"
	Kid string `json:"kid"`           // the key in the JWKS
	Typ string `json:"typ,omitempty"` // what the payload is, e.g. "paywallet-ledger-head"
}

// SignJWS signs payload as a compact JWS whose header names typ and the
// signer's kid.
func (s *Signer) SignJWS(typ string, payload []byte) (string, error) {
	h, err := json.Marshal(JWSHeader{Alg: "ES256", Kid: s.kid, Typ: typ})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	r, sv, err := ecdsa.Sign(rand.Reader, s.key, digest[:])
	if err != nil {
		return "", err
	}
	var sig [64]byte
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return input + "." + enc.EncodeToString(sig[:]), nil
}

// VerifyJWS checks a compact JWS signed with ES256 by a key of keys and
// returns its header and payload. It fails with ErrMalformed (a JWS of
// another shape or algorithm), ErrUnknownKey or ErrSignature.
func VerifyJWS(jws string, keys JWKS) (JWSHeader, []byte, error) {
	var h JWSHeader
	if len(jws) > maxJWS {
		return h, nil, ErrJWS
	}
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return h, nil, ErrJWS
	}
	enc := base64.RawURLEncoding.Strict()
	rawHeader, errH := enc.DecodeString(parts[0])
	payload, errP := enc.DecodeString(parts[1])
	sig, errS := enc.DecodeString(parts[2])
	if errH != nil || errP != nil || errS != nil || len(sig) != 64 {
		return h, nil, ErrJWS
	}
	// The header has exactly the members the service writes: a "crit" or
	// any other member this verifier does not understand is refused
	// (RFC 7515 §4.1.11).
	dec := json.NewDecoder(strings.NewReader(string(rawHeader)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || dec.More() || h.Alg != "ES256" || !validKeyID(h.Kid) {
		return JWSHeader{}, nil, ErrJWS
	}
	pub, err := keys.Key(h.Kid)
	if err != nil {
		return JWSHeader{}, nil, err
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return JWSHeader{}, nil, ErrSignature
	}
	return h, payload, nil
}
