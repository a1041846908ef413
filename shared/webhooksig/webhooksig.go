// Package webhooksig signs and verifies the payments service's webhooks.
//
// # Keys
//
// The service signs with key generations ([Generation]): a P-256 key and an
// Ed25519 key made together, each with a kid (16 hex digits of SHA-256 over
// the public key). [Keys] is the set in use: the generations that sign,
// oldest first (the oldest is the primary), and those only published. A
// rotation adds a generation (published, then signing), lets both sign
// for a while, then drops the old one from signing and, later, from the
// set. [Generation.MarshalPrivate] and [ParseGeneration] give the service
// bytes to seal at rest; [Keys.JWKS] is the public key set (GET
// /2025-10-13/webhooks/jwks.json, no credentials), EC P-256 and OKP Ed25519
// keys, and [Generation.PublicKey] the Ed25519 key as Standard Webhooks
// shows it, whpk_<base64>.
//
// # Headers
//
// [Keys.Sign] gives every delivery five headers ([Headers.Set] puts them
// on a request):
//
//   - [CompatHeader] (X-Service-Signature): {"v":"1","s":"<sig>"}, ECDSA
//     P-256 with SHA-256 (DER, base64) over the raw body alone, by the
//     primary: the reference API's shape. It cannot tell a replayed old
//     delivery from a new one; [VerifyCompat] checks it.
//   - [Header] (Service-Webhook-Signature): t=<unix seconds>, then
//     kid=<kid>,v1=<sig> per signing generation (newest first, the primary
//     last), ECDSA over "<webhook id>.<t>.<raw body>" ([SignedBytes]). With
//     one generation it is t=…,kid=…,v1=…, as it always was. [Verify]
//     accepts it when t is within [Tolerance] of now and one pair of a kid
//     the receiver knows verifies; [ParseHeader] parses it.
//   - [StdIDHeader], [StdTimestampHeader], [StdSignatureHeader]
//     (webhook-id, webhook-timestamp, webhook-signature): Standard Webhooks
//     (https://www.standardwebhooks.com), one v1a,<base64 Ed25519
//     signature> entry per signing generation over the same bytes. Any
//     Standard Webhooks library verifies them with the whpk_ keys;
//     [VerifyStandard] does too.
//
// The two ECDSA signatures are deterministic (RFC 6979): an event's
// X-Service-Signature is the same on every delivery, and signing costs
// less than with a hedged nonce.
//
// A receiver fetches the keys once and again on an unknown kid, parses
// them with [ParseJWKS] (which drops key kinds it does not use), and calls
// [Verify] (or [VerifyStandard] with [JWKS.Ed25519Keys]) with the header,
// the raw body and the keys; it then deduplicates by the webhook id and
// drops events whose sequence is not newer than the last one it applied
// for the resource. A receiver that reads only the last kid and v1 of
// Service-Webhook-Signature (the README's standard-library sample) checks
// the primary's signature, the key it already knows, during a rotation.
//
// The primary's P-256 key also signs what the service publishes to be
// kept, such as the ledger's chain head: a JWS with ES256 and the key's kid
// ([Keys.SignJWS], [Signer.SignJWS], [VerifyJWS]), which any JOSE library
// verifies with the same JWKS.
//
// [Signer] is one P-256 key alone, the package's first shape: it makes the
// first two headers only.
//
// The package imports only the standard library, so the BFF and any Go
// receiver can use it without the service.
package webhooksig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
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

// Signature is a parsed Service-Webhook-Signature header: one timestamp and
// one kid=…,v1=… pair per signing key. KeyID and V1 are the last pair,
// which the service makes with its primary key (the one every receiver
// knows); More holds the pairs before it, the newer keys while keys rotate,
// and is empty otherwise.
type Signature struct {
	Timestamp int64      // t: Unix seconds when it was signed
	KeyID     string     // kid of the last pair
	V1        []byte     // v1 of the last pair: DER ECDSA signature over SignedBytes
	More      []KeyedSig // the pairs before the last, in header order
}

// KeyedSig is one kid=…,v1=… pair of a Service-Webhook-Signature header.
type KeyedSig struct {
	KeyID string // kid: a P-256 key of the service's JWKS
	V1    []byte // v1: DER ECDSA signature over SignedBytes
}

// Pairs lists every pair in header order, the last (KeyID, V1) included.
func (s Signature) Pairs() []KeyedSig {
	return append(append(make([]KeyedSig, 0, len(s.More)+1), s.More...), KeyedSig{KeyID: s.KeyID, V1: s.V1})
}

// KeyIDs lists the kids of the header's pairs, in header order.
func (s Signature) KeyIDs() []string {
	ids := make([]string, 0, len(s.More)+1)
	for _, p := range s.Pairs() {
		ids = append(ids, p.KeyID)
	}
	return ids
}

// String formats the header value: t=…, then ,kid=…,v1=… per pair. Without
// More it is the header of one key, t=…,kid=…,v1=….
func (s Signature) String() string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(s.Timestamp, 10))
	for _, p := range s.Pairs() {
		b.WriteString(",kid=")
		b.WriteString(p.KeyID)
		b.WriteString(",v1=")
		b.WriteString(base64.StdEncoding.EncodeToString(p.V1))
	}
	return b.String()
}

// ParseHeader parses a Service-Webhook-Signature value: comma-separated
// name=value fields with exactly one t (decimal Unix seconds) and one or
// more kid (a key id) and v1 (standard base64) fields, as many of each: the
// n-th kid goes with the n-th v1, so "t=…,kid=A,v1=…,kid=B,v1=…" is two
// pairs, and the one-key header may put its fields in any order. A kid
// named twice is malformed. Fields with other lower-case names are
// ignored, so a later version can add some.
func ParseHeader(h string) (Signature, error) {
	var s Signature
	if len(h) > maxHeader {
		return s, errorf(ErrMalformed, "longer than "+strconv.Itoa(maxHeader)+" bytes")
	}
	var haveT bool
	var kids []string
	var v1s [][]byte
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
			if !validKeyID(value) {
				return Signature{}, errorf(ErrMalformed, "kid must be a key id of 1 to 64 letters, digits, '-', '_' or '.'")
			}
			if slices.Contains(kids, value) {
				return Signature{}, errorf(ErrMalformed, "kid "+value+" appears twice")
			}
			kids = append(kids, value)
		case "v1":
			sig, err := base64.StdEncoding.Strict().DecodeString(value)
			if err != nil || len(sig) < 8 || len(sig) > 72 {
				return Signature{}, errorf(ErrMalformed, "v1 must be a base64 DER signature")
			}
			v1s = append(v1s, sig)
		default:
			if !lowerName(name) {
				return Signature{}, errorf(ErrMalformed, "unexpected field name")
			}
		}
	}
	if !haveT || len(kids) == 0 || len(v1s) == 0 {
		return Signature{}, errorf(ErrMalformed, "t, kid and v1 are required")
	}
	if len(kids) != len(v1s) {
		return Signature{}, errorf(ErrMalformed, "every kid needs one v1")
	}
	last := len(kids) - 1
	for i := range last {
		s.More = append(s.More, KeyedSig{KeyID: kids[i], V1: v1s[i]})
	}
	s.KeyID, s.V1 = kids[last], v1s[last]
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

// sign256 is the DER ECDSA signature of a SHA-256 digest, deterministic
// (RFC 6979): the nonce comes from the key and the digest, not from the
// system's random source. Deliveries are signed with it because it costs a
// quarter less than the hedged signature ecdsa.SignASN1 makes (no DRBG over
// SHA-512, no read of fresh randomness: measured 33 µs against 41 µs on
// the two-core bench machine, and a delivery signs twice with P-256), and
// because the body-only X-Service-Signature then depends on the body
// alone, so every delivery of one event carries the same value. The
// hedged form only adds resistance to fault injection on the signing
// machine; RFC 6979 nonces are as unpredictable to anyone without the key.
func sign256(key *ecdsa.PrivateKey, digest []byte) ([]byte, error) {
	return key.Sign(nil, digest, crypto.SHA256)
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

// Headers are the values of the signature headers of one delivery. A
// Signer's Sign fills Compat and Signature; Keys.Sign fills all five.
type Headers struct {
	Compat       string // value of CompatHeader
	Signature    string // value of Header
	StdID        string // value of StdIDHeader
	StdTimestamp string // value of StdTimestampHeader
	StdSignature string // value of StdSignatureHeader
}

// Sign signs one delivery of the webhook with the given id and raw body,
// at time now.
func (s *Signer) Sign(id string, body []byte, now time.Time) (Headers, error) {
	bodyDigest := sha256.Sum256(body)
	compat, err := sign256(s.key, bodyDigest[:])
	if err != nil {
		return Headers{}, err
	}
	t := now.Unix()
	digest := sha256.Sum256(SignedBytes(id, t, body))
	v1, err := sign256(s.key, digest[:])
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
// top-level "id"). One pair whose kid names a P-256 key of keys and whose
// signature verifies is enough: while keys rotate the header carries a
// pair per signing key, and a receiver may know only some of them. It
// fails with ErrMalformed, ErrTimestamp (more than Tolerance before or
// after now), ErrUnknownKey (no pair names a key of keys), ErrBody or
// ErrSignature.
func Verify(header string, body []byte, keys JWKS, now time.Time) (id string, err error) {
	sig, err := ParseHeader(header)
	if err != nil {
		return "", err
	}
	signed := time.Unix(sig.Timestamp, 0)
	if d := now.Sub(signed); d > Tolerance || d < -Tolerance {
		return "", errorf(ErrTimestamp, "signed at "+signed.UTC().Format(time.RFC3339)+", now is "+now.UTC().Format(time.RFC3339))
	}
	pairs := sig.Pairs()
	pubs := make([]*ecdsa.PublicKey, len(pairs))
	known := false
	for i, p := range pairs {
		if pub, err := keys.Key(p.KeyID); err == nil {
			pubs[i], known = pub, true
		}
	}
	if !known {
		return "", ErrUnknownKey
	}
	id, err = WebhookID(body)
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256(SignedBytes(id, sig.Timestamp, body))
	for i, p := range pairs {
		if pubs[i] != nil && ecdsa.VerifyASN1(pubs[i], digest[:], p.V1) {
			return id, nil
		}
	}
	return "", ErrSignature
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

// JWK is one public key of a JWKS (RFC 7517), as the service publishes it:
// a P-256 key, {"kty":"EC","crv":"P-256","x":…,"y":…,"kid":…,"use":"sig",
// "alg":"ES256"}, or an Ed25519 key (RFC 8037),
// {"kty":"OKP","crv":"Ed25519","x":…,"kid":…,"use":"sig"}.
type JWK struct {
	Kty string `json:"kty"`         // "EC" or "OKP"
	Crv string `json:"crv"`         // "P-256" or "Ed25519"
	X   string `json:"x"`           // base64url, 32 bytes
	Y   string `json:"y,omitempty"` // base64url, 32 bytes; EC only
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"` // "sig"
	Alg string `json:"alg,omitempty"` // "ES256" (EC); "EdDSA" or none (OKP)
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

// Ed25519KeyID is the key id the service gives an Ed25519 public key: the
// first 16 hex digits of SHA-256 over its 32 bytes.
func Ed25519KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
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

// NewEd25519JWK describes an Ed25519 public key with its Ed25519KeyID.
func NewEd25519JWK(pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: Ed25519KeyID(pub), Use: "sig"}
}

// isEC and isEd25519 tell the kinds of key this package uses; ParseJWKS
// drops the others (another kty or crv, a use other than sig, another alg).
func (k JWK) isEC() bool {
	return k.Kty == "EC" && k.Crv == "P-256" && (k.Use == "" || k.Use == "sig") && (k.Alg == "" || k.Alg == "ES256")
}

func (k JWK) isEd25519() bool {
	return k.Kty == "OKP" && k.Crv == "Ed25519" && (k.Use == "" || k.Use == "sig") && (k.Alg == "" || k.Alg == "EdDSA")
}

// PublicKey checks the JWK (EC, P-256, 32-byte coordinates of a point on
// the curve, a kid, use "sig" and alg "ES256" when present) and returns the key.
func (k JWK) PublicKey() (*ecdsa.PublicKey, error) {
	if k.Kty != "EC" || k.Crv != "P-256" {
		return nil, errorf(ErrKey, "want kty EC and crv P-256")
	}
	if !k.isEC() {
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

// Ed25519PublicKey checks the JWK (OKP, Ed25519, a 32-byte x, no y, a kid,
// use "sig" and alg "EdDSA" when present) and returns the key.
func (k JWK) Ed25519PublicKey() (ed25519.PublicKey, error) {
	if !k.isEd25519() {
		return nil, errorf(ErrKey, "want kty OKP, crv Ed25519, use sig and alg EdDSA or none")
	}
	if !validKeyID(k.Kid) {
		return nil, errorf(ErrKey, "kid must be 1 to 64 letters, digits, '-', '_' or '.'")
	}
	x, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize || k.Y != "" {
		return nil, errorf(ErrKey, "x must be a 32-byte base64url value, and there is no y")
	}
	return ed25519.PublicKey(x), nil
}

// ParseJWKS parses and checks a key set. Keys of kinds this package does
// not use (RSA, another curve, an encryption key, …) are dropped, so that
// the service can publish new kinds without breaking its receivers; a key
// of a known kind must be valid, kids must be unique, and a set left
// empty is refused.
func ParseJWKS(b []byte) (JWKS, error) {
	var doc JWKS
	if err := json.Unmarshal(b, &doc); err != nil {
		return JWKS{}, errorf(ErrKey, "not a JWKS document")
	}
	var s JWKS
	seen := map[string]bool{}
	for _, k := range doc.Keys {
		var err error
		switch {
		case k.isEC():
			_, err = k.PublicKey()
		case k.isEd25519():
			_, err = k.Ed25519PublicKey()
		default:
			continue
		}
		if err != nil {
			return JWKS{}, err
		}
		if seen[k.Kid] {
			return JWKS{}, errorf(ErrKey, "kid "+k.Kid+" appears twice")
		}
		seen[k.Kid] = true
		s.Keys = append(s.Keys, k)
	}
	if len(s.Keys) == 0 {
		return JWKS{}, errorf(ErrKey, "the key set has no P-256 or Ed25519 signing key")
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

// Key returns the P-256 public key with the kid (ErrUnknownKey when the
// set has no EC key of that kid).
func (s JWKS) Key(kid string) (*ecdsa.PublicKey, error) {
	for _, k := range s.Keys {
		if k.Kid == kid && k.Kty == "EC" {
			return k.PublicKey()
		}
	}
	return nil, ErrUnknownKey
}

// Ed25519Keys returns the set's valid Ed25519 keys, for VerifyStandard.
func (s JWKS) Ed25519Keys() []ed25519.PublicKey {
	var keys []ed25519.PublicKey
	for _, k := range s.Keys {
		if pub, err := k.Ed25519PublicKey(); err == nil {
			keys = append(keys, pub)
		}
	}
	return keys
}

type wrapped struct {
	kind error
	msg  string
}

func (e *wrapped) Error() string { return e.kind.Error() + ": " + e.msg }
func (e *wrapped) Unwrap() error { return e.kind }

func errorf(kind error, msg string) error { return &wrapped{kind, msg} }
