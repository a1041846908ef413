package walletcrypto

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// StampScheme is the only stamp scheme: ECDSA P-256 over SHA-256.
const StampScheme = "SIGNATURE_SCHEME_TK_API_P256"

// A Stamp is a parsed Service-Wallet-Signature header (Turnkey's X-Stamp):
// base64url, without padding, of
//
//	{"publicKey":"<66 hex, compressed>","scheme":"SIGNATURE_SCHEME_TK_API_P256","signature":"<DER hex>"}
//
// where signature is ECDSA P-256 over SHA-256 of the exact payload bytes.
type Stamp struct {
	PublicKey *PublicKey
	Scheme    string
	Signature []byte // ASN.1 DER
}

// Encode returns the header value of s: the keys in the order publicKey, scheme,
// signature (as JavaScript's stamper writes them), the key compressed, hex in lower case.
// s.PublicKey must not be nil.
func (s *Stamp) Encode() string {
	return string(s.AppendEncode(nil))
}

// AppendEncode appends the header value of s (see [Stamp.Encode]) to dst.
func (s *Stamp) AppendEncode(dst []byte) []byte {
	if !plainJSONString(s.Scheme) {
		return base64.RawURLEncoding.AppendEncode(dst, appendFlat(nil, flatObject{
			{"publicKey", s.PublicKey.CompressedHex()},
			{"scheme", s.Scheme},
			{"signature", hex.EncodeToString(s.Signature)},
		}))
	}
	// The usual case, written straight into buffers of the exact size: a
	// stamp is made per signed request, and in the wasm module the
	// general path's allocations cost as much as the rest of the stamp.
	const (
		keyPart    = `{"publicKey":"`
		schemePart = `","scheme":"`
		sigPart    = `","signature":"`
		end        = `"}`
	)
	var compressed [33]byte
	compressed[0] = 2 | s.PublicKey.raw[64]&1
	copy(compressed[1:], s.PublicKey.raw[1:33])
	js := make([]byte, 0, len(keyPart)+66+len(schemePart)+len(s.Scheme)+len(sigPart)+2*len(s.Signature)+len(end))
	js = append(js, keyPart...)
	js = hex.AppendEncode(js, compressed[:])
	js = append(js, schemePart...)
	js = append(js, s.Scheme...)
	js = append(js, sigPart...)
	js = hex.AppendEncode(js, s.Signature)
	js = append(js, end...)
	return base64.RawURLEncoding.AppendEncode(dst, js)
}

// plainJSONString reports whether s is printable ASCII that JSON writes as
// is (no quote, no backslash).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// ParseStamp parses a stamp header value. The JSON must have exactly the keys
// publicKey, scheme and signature, in any order (Go's SDK writes publicKey,
// signature, scheme). publicKey is 66 hex characters (compressed) or 130
// (uncompressed); signature is strict DER (see [ParseDERSignature]). Failures are
// a [*StampError] whose Reason tells what was wrong. ParseStamp does not verify;
// call [Stamp.Verify].
func ParseStamp(header string) (*Stamp, error) {
	if header == "" {
		return nil, &StampError{Reason: StampEmpty}
	}
	// The decoder skips CR and LF; refuse them so the encoding stays canonical.
	if strings.ContainsAny(header, "\r\n") {
		return nil, &StampError{Reason: StampBadBase64, Err: malformed("stamp: line break in base64url")}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(header)
	if err != nil {
		return nil, &StampError{Reason: StampBadBase64, Err: malformed("stamp: not unpadded base64url")}
	}
	o, err := parseFlat(raw)
	if err != nil {
		return nil, &StampError{Reason: StampBadJSON, Err: err}
	}
	if err := unknownKey(o, "publicKey", "scheme", "signature"); err != nil {
		return nil, &StampError{Reason: StampUnknownField, Err: err}
	}
	if err := missingKey(o, "publicKey", "scheme", "signature"); err != nil {
		return nil, &StampError{Reason: StampMissingField, Err: err}
	}
	scheme, _ := o.get("scheme")
	if scheme != StampScheme {
		return nil, &StampError{Reason: StampBadScheme, Err: malformed("stamp: unsupported scheme " + quote(scheme))}
	}
	pubHex, _ := o.get("publicKey")
	pub, err := ParsePublicKeyHex(pubHex)
	if err != nil {
		return nil, &StampError{Reason: StampBadPublicKey, Err: err}
	}
	sigHex, _ := o.get("signature")
	sig, err := decodeHex(sigHex)
	if err != nil {
		return nil, &StampError{Reason: StampBadSignatureEncoding, Err: malformed("stamp: signature is not hex")}
	}
	if _, err := parseDER(sig); err != nil {
		return nil, &StampError{Reason: StampBadSignatureEncoding, Err: err}
	}
	return &Stamp{PublicKey: pub, Scheme: scheme, Signature: sig}, nil
}

// A StampError reports why a stamp header did not parse. The service maps every
// reason to WALLET_SIGNATURE_MALFORMED; the reason is for logs and tests.
type StampError struct {
	Reason StampErrorReason
	Err    error // the underlying problem; nil for StampEmpty
}

// Error returns "walletcrypto: malformed stamp: <reason>: <detail>".
func (e *StampError) Error() string {
	msg := "walletcrypto: malformed stamp: " + e.Reason.String()
	if e.Err != nil {
		msg += ": " + strings.TrimPrefix(e.Err.Error(), "walletcrypto: ")
	}
	return msg
}

// Unwrap returns e.Err, which wraps one of the package's sentinels when not nil.
func (e *StampError) Unwrap() error { return e.Err }

// A StampErrorReason classifies a [StampError].
type StampErrorReason int

const (
	StampEmpty                StampErrorReason = iota + 1 // the header is empty
	StampBadBase64                                        // not unpadded base64url
	StampBadJSON                                          // not a flat JSON object of strings
	StampMissingField                                     // publicKey, scheme or signature missing
	StampUnknownField                                     // a key other than those three
	StampBadScheme                                        // scheme is not StampScheme
	StampBadPublicKey                                     // publicKey is not a hex P-256 point
	StampBadSignatureEncoding                             // signature is not hex of strict DER
)

var stampReasons = [...]string{
	StampEmpty:                "empty",
	StampBadBase64:            "bad base64url",
	StampBadJSON:              "bad json",
	StampMissingField:         "missing field",
	StampUnknownField:         "unknown field",
	StampBadScheme:            "bad scheme",
	StampBadPublicKey:         "bad public key",
	StampBadSignatureEncoding: "bad signature encoding",
}

// String returns a short lower-case name such as "bad scheme".
func (r StampErrorReason) String() string {
	if r > 0 && int(r) < len(stampReasons) {
		return stampReasons[r]
	}
	return "StampErrorReason(" + strconv.Itoa(int(r)) + ")"
}
