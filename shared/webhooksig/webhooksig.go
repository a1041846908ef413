// Package webhooksig signs and verifies the payments service's webhooks.
//
// Every delivery carries two signatures, both ECDSA P-256 with SHA-256,
// DER-encoded and then base64 (standard alphabet, padded):
//
//   - [CompatHeader] (X-Service-Signature): {"v":"1","s":"<sig>"} over the
//     raw body alone, the reference API's shape. It cannot tell a replayed
//     old delivery from a new one; [VerifyCompat] checks it.
//   - [Header] (Service-Webhook-Signature): t=<unix seconds>,kid=<key
//     id>,v1=<sig> over the bytes "<webhook id>.<t>.<raw body>" (see
//     [SignedBytes]). The key id names the key in the service's JWKS, and
//     [Verify] refuses a timestamp more than [Tolerance] away from now.
//
// A receiver fetches the service's public keys once (GET
// /2025-10-13/webhooks/jwks.json, no credentials), parses them with
// [ParseJWKS], and calls [Verify] with the header, the raw body and the
// keys; it then deduplicates by the returned webhook id and drops events
// whose sequence is not newer than the last one it applied for the resource.
//
// The same key signs what the service publishes to be kept, such as the
// ledger's chain head: a JWS with ES256 and the key's kid ([Signer.SignJWS],
// [VerifyJWS]), which any JOSE library verifies with the same JWKS.
//
// The package imports only the standard library, so the BFF and any Go
// receiver can use it without the service.
package webhooksig

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// Header names and the verification window.
const (
	// Header carries the replay-safe signature.
	Header = "Service-Webhook-Signature"
	// CompatHeader carries the reference API's body signature.
	CompatHeader = "X-Service-Signature"
	// Tolerance is how far a signature's timestamp may lie from the
	// receiver's clock, into the past or the future.
	Tolerance = 5 * time.Minute
)

// maxHeader bounds the signature header a receiver parses.
const maxHeader = 1024

// Errors of Verify and VerifyCompat. Test with errors.Is.
var (
	ErrMalformed  = errors.New("webhooksig: malformed signature header")
	ErrUnknownKey = errors.New("webhooksig: the signature names a key that is not in the key set")
	ErrTimestamp  = errors.New("webhooksig: the signature's timestamp is outside the tolerance")
	ErrSignature  = errors.New("webhooksig: the signature does not verify")
	ErrBody       = errors.New("webhooksig: the body is not a webhook with an id")
	ErrKey        = errors.New("webhooksig: invalid key")
)

// Signature is a parsed Service-Webhook-Signature header.
type Signature struct {
	Timestamp int64  // t: Unix seconds when it was signed
	KeyID     string // kid
	V1        []byte // v1: DER ECDSA signature over SignedBytes
}

// String formats the header value: t=…,kid=…,v1=….
func (s Signature) String() string {
	return "t=" + strconv.FormatInt(s.Timestamp, 10) + ",kid=" + s.KeyID + ",v1=" + base64.StdEncoding.EncodeToString(s.V1)
}

// ParseHeader parses a Service-Webhook-Signature value: comma-separated
// key=value pairs with exactly one t (decimal Unix seconds), one kid and
// one v1 (standard base64). Pairs with other lower-case names are ignored,
// so a later version can add fields; a repeated t, kid or v1 is malformed.
func ParseHeader(h string) (Signature, error) {
	var s Signature
	if len(h) > maxHeader {
		return s, errorf(ErrMalformed, "longer than "+strconv.Itoa(maxHeader)+" bytes")
	}
	var haveT, haveKid, haveV1 bool
	for part := range strings.SplitSeq(h, ",") {
		part = strings.TrimSpace(part)
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" {
			return Signature{}, errorf(ErrMalformed, "expected name=value pairs")
		}
		switch name {
		case "t":
			if haveT || !decimal(value) {
				return Signature{}, errorf(ErrMalformed, "t must be one decimal Unix time")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return Signature{}, errorf(ErrMalformed, "t is out of range")
			}
			s.Timestamp, haveT = n, true
		case "kid":
			if haveKid || !validKeyID(value) {
				return Signature{}, errorf(ErrMalformed, "kid must be one key id of 1 to 64 letters, digits, '-', '_' or '.'")
			}
			s.KeyID, haveKid = value, true
		case "v1":
			if haveV1 {
				return Signature{}, errorf(ErrMalformed, "more than one v1")
			}
			sig, err := base64.StdEncoding.Strict().DecodeString(value)
			if err != nil || len(sig) < 8 || len(sig) > 72 {
				return Signature{}, errorf(ErrMalformed, "v1 must be a base64 DER signature")
			}
			s.V1, haveV1 = sig, true
		default:
			if !lowerName(name) {
				return Signature{}, errorf(ErrMalformed, "unexpected field name")
			}
		}
	}
	if !haveT || !haveKid || !haveV1 {
		return Signature{}, errorf(ErrMalformed, "t, kid and v1 are required")
	}
	return s, nil
}

func decimal(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validKeyID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func lowerName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !('a' <= s[i] && s[i] <= 'z' || '0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}

// SignedBytes is what the replay-safe signature covers: the webhook id, the
// timestamp in decimal and the raw body, joined by dots.
func SignedBytes(id string, t int64, body []byte) []byte {
	b := make([]byte, 0, len(id)+len(body)+22)
	b = append(b, id...)
	b = append(b, '.')
	b = strconv.AppendInt(b, t, 10)
	b = append(b, '.')
	return append(b, body...)
}

// Signer signs deliveries with one P-256 key.
type Signer struct {
	key *ecdsa.PrivateKey
	kid string
}

// NewSigner returns a signer for a P-256 private key.
func NewSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return nil, errorf(ErrKey, "the signing key must be a P-256 key")
	}
	return &Signer{key: key, kid: KeyID(&key.PublicKey)}, nil
}

// KeyID is the signer's kid.
func (s *Signer) KeyID() string { return s.kid }

// JWK is the signer's public key as published in the JWKS.
func (s *Signer) JWK() JWK { return NewJWK(&s.key.PublicKey) }

// Headers are the values of the two signature headers of one delivery.
type Headers struct {
	Compat    string // value of CompatHeader
	Signature string // value of Header
}

// Sign signs one delivery of the webhook with the given id and raw body,
// at time now.
func (s *Signer) Sign(id string, body []byte, now time.Time) (Headers, error) {
	bodyDigest := sha256.Sum256(body)
	compat, err := ecdsa.SignASN1(rand.Reader, s.key, bodyDigest[:])
	if err != nil {
		return Headers{}, err
	}
	t := now.Unix()
	digest := sha256.Sum256(SignedBytes(id, t, body))
	v1, err := ecdsa.SignASN1(rand.Reader, s.key, digest[:])
	if err != nil {
		return Headers{}, err
	}
	c, err := json.Marshal(compatValue{V: "1", S: base64.StdEncoding.EncodeToString(compat)})
	if err != nil {
		return Headers{}, err
	}
	return Headers{Compat: string(c), Signature: Signature{Timestamp: t, KeyID: s.kid, V1: v1}.String()}, nil
}

type compatValue struct {
	V string `json:"v"`
	S string `json:"s"`
}

// Verify checks a Service-Webhook-Signature header against the raw body
// and the keys, at time now, and returns the webhook's id (the body's
// top-level "id"). It fails with ErrMalformed, ErrTimestamp (more than
// Tolerance before or after now), ErrUnknownKey, ErrBody or ErrSignature.
func Verify(header string, body []byte, keys JWKS, now time.Time) (id string, err error) {
	sig, err := ParseHeader(header)
	if err != nil {
		return "", err
	}
	signed := time.Unix(sig.Timestamp, 0)
	if d := now.Sub(signed); d > Tolerance || d < -Tolerance {
		return "", errorf(ErrTimestamp, "signed at "+signed.UTC().Format(time.RFC3339)+", now is "+now.UTC().Format(time.RFC3339))
	}
	pub, err := keys.Key(sig.KeyID)
	if err != nil {
		return "", err
	}
	id, err = WebhookID(body)
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256(SignedBytes(id, sig.Timestamp, body))
	if !ecdsa.VerifyASN1(pub, digest[:], sig.V1) {
		return "", ErrSignature
	}
	return id, nil
}

// VerifyCompat checks an X-Service-Signature value, {"v":"1","s":"<base64
// DER>"} or a bare base64 signature, over the raw body against every key of
// the set. It has no timestamp: prefer Verify.
func VerifyCompat(header string, body []byte, keys JWKS) error {
	enc := strings.TrimSpace(header)
	if strings.HasPrefix(enc, "{") {
		var v compatValue
		dec := json.NewDecoder(strings.NewReader(enc))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil || v.V != "1" {
			return errorf(ErrMalformed, `expected {"v":"1","s":"<base64 signature>"}`)
		}
		enc = v.S
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(sig) < 8 || len(sig) > 72 {
		return errorf(ErrMalformed, "the signature must be base64 DER")
	}
	digest := sha256.Sum256(body)
	for _, k := range keys.Keys {
		pub, err := k.PublicKey()
		if err == nil && ecdsa.VerifyASN1(pub, digest[:], sig) {
			return nil
		}
	}
	return ErrSignature
}

// WebhookID returns the top-level "id" string of a webhook body. A body
// that is not one JSON object, has no id, or has more than one is refused
// (ErrBody), so that no two readers of one body can disagree on its id.
func WebhookID(body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return "", ErrBody
	}
	var id string
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", ErrBody
		}
		name, _ := tok.(string)
		if name == "id" {
			var v string
			if found || dec.Decode(&v) != nil || v == "" {
				return "", ErrBody
			}
			id, found = v, true
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", ErrBody
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", ErrBody
	}
	if _, err := dec.Token(); err != io.EOF || !found {
		return "", ErrBody
	}
	return id, nil
}

// JWK is one public key of a JWKS (RFC 7517), as the service publishes it.
type JWK struct {
	Kty string `json:"kty"` // "EC"
	Crv string `json:"crv"` // "P-256"
	X   string `json:"x"`   // base64url, 32 bytes
	Y   string `json:"y"`   // base64url, 32 bytes
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"` // "sig"
	Alg string `json:"alg,omitempty"` // "ES256"
}

// JWKS is a key set: {"keys":[…]}.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// KeyID is the key id the service gives a public key: the first 16 hex
// digits of SHA-256 over its uncompressed SEC 1 encoding (04 || X || Y).
func KeyID(pub *ecdsa.PublicKey) string {
	raw, err := pub.Bytes()
	if err != nil {
		return ""
	}
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:8])
}

// NewJWK describes a P-256 public key with its KeyID.
func NewJWK(pub *ecdsa.PublicKey) JWK {
	raw, _ := pub.Bytes() // 65 bytes for P-256
	k := JWK{Kty: "EC", Crv: "P-256", Kid: KeyID(pub), Use: "sig", Alg: "ES256"}
	if len(raw) == 65 {
		k.X = base64.RawURLEncoding.EncodeToString(raw[1:33])
		k.Y = base64.RawURLEncoding.EncodeToString(raw[33:])
	}
	return k
}

// PublicKey checks the JWK (EC, P-256, 32-byte coordinates of a point on
// the curve, a kid, use "sig" and alg "ES256" when present) and returns the key.
func (k JWK) PublicKey() (*ecdsa.PublicKey, error) {
	if k.Kty != "EC" || k.Crv != "P-256" {
		return nil, errorf(ErrKey, "want kty EC and crv P-256")
	}
	if (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "ES256") {
		return nil, errorf(ErrKey, "want use sig and alg ES256")
	}
	if !validKeyID(k.Kid) {
		return nil, errorf(ErrKey, "kid must be 1 to 64 letters, digits, '-', '_' or '.'")
	}
	x, errX := base64.RawURLEncoding.Strict().DecodeString(k.X)
	y, errY := base64.RawURLEncoding.Strict().DecodeString(k.Y)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return nil, errorf(ErrKey, "x and y must be 32-byte base64url values")
	}
	raw := append(append([]byte{4}, x...), y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return nil, errorf(ErrKey, "the point is not on P-256")
	}
	return pub, nil
}

// ParseJWKS parses and checks a key set. Every key must be valid and kids
// unique; an empty set is refused.
func ParseJWKS(b []byte) (JWKS, error) {
	var s JWKS
	if err := json.Unmarshal(b, &s); err != nil {
		return JWKS{}, errorf(ErrKey, "not a JWKS document")
	}
	if len(s.Keys) == 0 {
		return JWKS{}, errorf(ErrKey, "the key set is empty")
	}
	seen := map[string]bool{}
	for _, k := range s.Keys {
		if _, err := k.PublicKey(); err != nil {
			return JWKS{}, err
		}
		if seen[k.Kid] {
			return JWKS{}, errorf(ErrKey, "kid "+k.Kid+" appears twice")
		}
		seen[k.Kid] = true
	}
	return s, nil
}

// Marshal encodes the set as JSON.
func (s JWKS) Marshal() ([]byte, error) {
	if s.Keys == nil {
		s.Keys = []JWK{}
	}
	return json.Marshal(s)
}

// Key returns the public key with the kid (ErrUnknownKey when none).
func (s JWKS) Key(kid string) (*ecdsa.PublicKey, error) {
	for _, k := range s.Keys {
		if k.Kid == kid {
			return k.PublicKey()
		}
	}
	return nil, ErrUnknownKey
}

type wrapped struct {
	kind error
	msg  string
}

func (e *wrapped) Error() string { return e.kind.Error() + ": " + e.msg }
func (e *wrapped) Unwrap() error { return e.kind }

func errorf(kind error, msg string) error { return &wrapped{kind, msg} }
