package webhooksig

import (
	"crypto/ed25519"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com, spec version 1.0.0)
// with its asymmetric scheme: three headers, webhook-id, webhook-timestamp
// (decimal Unix seconds) and webhook-signature, a space-separated list of
// "<version>,<base64 signature>" entries. Version v1a is Ed25519 over the
// bytes "<webhook-id>.<webhook-timestamp>.<raw body>" ([SignedBytes] with
// the header's id); the list holds one entry per signing key so that keys
// can rotate without a gap. Public keys are shown as "whpk_" + base64 of
// the 32 key bytes, secret keys as "whsk_" + base64 of the 32-byte seed.
//
// A receiver that knows nothing of this package verifies with any Standard
// Webhooks library and the service's whpk_ keys; [VerifyStandard] does the
// same with keys from the JWKS ([JWKS.Ed25519Keys]) or from
// [ParseStandardPublicKey].

// The Standard Webhooks headers. HTTP header names are case-insensitive;
// the spec writes them in lower case.
const (
	StdIDHeader        = "webhook-id"
	StdTimestampHeader = "webhook-timestamp"
	StdSignatureHeader = "webhook-signature"
)

// Prefixes of the spec's key serialization.
const (
	StdPublicKeyPrefix = "whpk_"
	StdSecretKeyPrefix = "whsk_"
)

// maxStdHeader bounds the webhook-signature value a receiver parses: room
// for a dozen entries, v1a (88 characters) or another producer's v1 (HMAC,
// 44 characters).
const maxStdHeader = 2048

// maxStdID bounds the webhook-id a receiver accepts.
const maxStdID = 256

// StandardPublicKey formats an Ed25519 public key as whpk_<base64>.
func StandardPublicKey(pub ed25519.PublicKey) string {
	return StdPublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// StandardSecretKey formats an Ed25519 private key as whsk_<base64 of its
// seed>. It is a secret: the service never shows it; tests and tools use it.
func StandardSecretKey(priv ed25519.PrivateKey) string {
	return StdSecretKeyPrefix + base64.StdEncoding.EncodeToString(priv.Seed())
}

// ParseStandardPublicKey parses whpk_<base64 of 32 bytes>. The prefix is
// required: it is what tells a public key from a secret one or an HMAC
// secret (whsec_).
func ParseStandardPublicKey(s string) (ed25519.PublicKey, error) {
	enc, ok := strings.CutPrefix(s, StdPublicKeyPrefix)
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if !ok || err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errorf(ErrKey, "want "+StdPublicKeyPrefix+" and the base64 of 32 bytes")
	}
	return ed25519.PublicKey(raw), nil
}

// ParseStandardSecretKey parses whsk_<base64 of a 32-byte seed>.
func ParseStandardSecretKey(s string) (ed25519.PrivateKey, error) {
	enc, ok := strings.CutPrefix(s, StdSecretKeyPrefix)
	seed, err := base64.StdEncoding.Strict().DecodeString(enc)
	if !ok || err != nil || len(seed) != ed25519.SeedSize {
		clear(seed)
		return nil, errorf(ErrKey, "want "+StdSecretKeyPrefix+" and the base64 of a 32-byte seed")
	}
	defer clear(seed)
	return ed25519.NewKeyFromSeed(seed), nil
}

// validStdID tells a webhook-id this package signs and accepts: 1 to 256
// visible ASCII characters other than '.', as the spec asks of an id
// (a dot would make "<id>.<t>.<body>" ambiguous).
func validStdID(id string) bool {
	if id == "" || len(id) > maxStdID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' || id[i] == '.' {
			return false
		}
	}
	return true
}

// SignStandard is one v1a entry: v1a,<base64 Ed25519 signature over
// "<id>.<t>.<body>">.
func SignStandard(priv ed25519.PrivateKey, id string, t int64, body []byte) (string, error) {
	if !validStdID(id) {
		return "", errorf(ErrMalformed, "a webhook-id is 1 to 256 visible ASCII characters other than '.'")
	}
	if len(priv) != ed25519.PrivateKeySize {
		return "", errorf(ErrKey, "not an Ed25519 private key")
	}
	return signStandard(priv, SignedBytes(id, t, body)), nil
}

// signStandard is the v1a entry over signed, SignedBytes's result (Keys.Sign
// builds it once for all of a delivery's signatures).
func signStandard(priv ed25519.PrivateKey, signed []byte) string {
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signed))
}

// ParseStandardSignature returns the Ed25519 signatures of a
// webhook-signature value, in order. As the spec has receivers do, it
// skips what it cannot use rather than refusing the header: entries of
// another version (v1 is the spec's HMAC), entries without a comma, and
// v1a entries that are not the standard base64 of 64 bytes. Only an empty
// or overlong value is malformed; a value with nothing usable gives no
// signatures and no error.
func ParseStandardSignature(h string) ([][]byte, error) {
	if len(h) > maxStdHeader {
		return nil, errorf(ErrMalformed, "webhook-signature is longer than "+strconv.Itoa(maxStdHeader)+" bytes")
	}
	h = strings.TrimSpace(h)
	if h == "" {
		return nil, errorf(ErrMalformed, "webhook-signature is empty")
	}
	var sigs [][]byte
	for entry := range strings.SplitSeq(h, " ") {
		version, enc, ok := strings.Cut(entry, ",")
		if !ok || version != "v1a" {
			continue
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil || len(sig) != ed25519.SignatureSize {
			continue
		}
		sigs = append(sigs, sig)
	}
	return sigs, nil
}

// VerifyStandard checks the three Standard Webhooks headers of a delivery
// against the raw body and the receiver's trusted Ed25519 keys, at time
// now: the id must be one this package signs (see SignStandard), the
// timestamp decimal and within Tolerance of now, and one v1a entry must
// verify under one of keys (any entry, any key: while keys rotate the
// service lists one entry per signing key). It fails with ErrMalformed,
// ErrTimestamp, ErrUnknownKey (keys is empty) or ErrSignature (no entry
// verifies, including when the header has no usable v1a entry). The id to
// deduplicate by is the webhook-id header; the service sends its
// webhooks' "id" in it.
func VerifyStandard(id, timestamp, signature string, body []byte, keys []ed25519.PublicKey, now time.Time) error {
	if !validStdID(id) {
		return errorf(ErrMalformed, "webhook-id must be 1 to 256 visible ASCII characters other than '.'")
	}
	if !decimal(timestamp) {
		return errorf(ErrMalformed, "webhook-timestamp must be decimal Unix seconds")
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errorf(ErrMalformed, "webhook-timestamp is out of range")
	}
	sigs, err := ParseStandardSignature(signature)
	if err != nil {
		return err
	}
	signed := time.Unix(t, 0)
	if d := now.Sub(signed); d > Tolerance || d < -Tolerance {
		return errorf(ErrTimestamp, "signed at "+signed.UTC().Format(time.RFC3339)+", now is "+now.UTC().Format(time.RFC3339))
	}
	if len(keys) == 0 {
		return ErrUnknownKey
	}
	msg := SignedBytes(id, t, body)
	for _, sig := range sigs {
		for _, pub := range keys {
			if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig) {
				return nil
			}
		}
	}
	return ErrSignature
}
