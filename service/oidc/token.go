package oidc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxTokenSize bounds the raw token. Real ID tokens are one or two KiB; the
// bound keeps a hostile client from making the service decode megabytes.
const MaxTokenSize = 16 << 10

// maxUnixTime is the last second of the year 9999. Larger (or negative)
// times are not dates any issuer means, and refusing them keeps the
// float-to-time conversion exact and free of overflow.
const maxUnixTime = 253402300799

// Token is an ID token's header and claims as sent. A Token from Parse has
// had no signature or claim check at all; one from Verifier.Verify has.
type Token struct {
	Issuer        string
	Subject       string
	Audience      []string
	IssuedAt      time.Time
	Expiry        time.Time
	Nonce         string
	Email         string
	EmailVerified bool
	Alg           string
	KeyID         string

	signingInput []byte // header "." payload, the bytes the signature covers
	signature    []byte
	crit         bool // the header has "crit": extensions we do not implement
}

var b64 = base64.RawURLEncoding.Strict()

// Parse decodes a JWS compact serialization into a Token without checking
// the signature. The service uses it to refuse garbage with 400 before any
// key is fetched and to route by issuer.
//
// It is stricter than JSON and base64 need to be: only the unpadded
// base64url alphabet (the standard decoder would skip line breaks), exact
// member names (encoding/json matches struct fields case-insensitively, so
// "ISS" would pass for "iss"; a map does not), valid UTF-8, and canonical
// base64 (no stray low bits), so that one token has one meaning.
func Parse(raw string) (*Token, error) {
	if len(raw) > MaxTokenSize {
		return nil, newErr(KindMalformed, "token too large", nil)
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, newErr(KindMalformed, "not a three-part JWS", nil)
	}
	hdrBytes, err := decodeSegment(parts[0], false)
	if err != nil {
		return nil, newErr(KindMalformed, "bad header encoding", err)
	}
	payloadBytes, err := decodeSegment(parts[1], false)
	if err != nil {
		return nil, newErr(KindMalformed, "bad payload encoding", err)
	}
	// An empty signature is structurally fine (alg "none" has one); Verify
	// refuses it as invalid rather than malformed.
	sig, err := decodeSegment(parts[2], true)
	if err != nil {
		return nil, newErr(KindMalformed, "bad signature encoding", err)
	}

	t := &Token{
		signingInput: []byte(raw[:len(parts[0])+1+len(parts[1])]),
		signature:    sig,
	}
	if err := t.parseHeader(hdrBytes); err != nil {
		return nil, err
	}
	if err := t.parseClaims(payloadBytes); err != nil {
		return nil, err
	}
	return t, nil
}

func decodeSegment(s string, emptyOK bool) ([]byte, error) {
	if s == "" {
		if emptyOK {
			return []byte{}, nil
		}
		return nil, newErr(KindMalformed, "empty segment", nil)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return nil, newErr(KindMalformed, "not base64url", nil)
		}
	}
	return b64.DecodeString(s)
}

// object decodes a JSON object into its raw members. Duplicate names keep
// the last value, the choice RFC 7519 §4 allows.
func object(b []byte) (map[string]json.RawMessage, bool) {
	if !utf8.Valid(b) {
		return nil, false
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false
	}
	return m, true
}

func isNull(r json.RawMessage) bool { return string(r) == "null" }

// optString reads an optional string member: absent and null are "".
func optString(m map[string]json.RawMessage, name string) (string, bool) {
	r, ok := m[name]
	if !ok || isNull(r) {
		return "", true
	}
	var s string
	if len(r) == 0 || r[0] != '"' || json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}

func (t *Token) parseHeader(b []byte) error {
	m, ok := object(b)
	if !ok {
		return newErr(KindMalformed, "header is not a JSON object", nil)
	}
	if r, ok := m["alg"]; !ok || isNull(r) {
		return newErr(KindMalformed, "header has no alg", nil)
	}
	var okAlg, okKid, okTyp bool
	t.Alg, okAlg = optString(m, "alg")
	t.KeyID, okKid = optString(m, "kid")
	_, okTyp = optString(m, "typ")
	if !okAlg || t.Alg == "" || !okKid || !okTyp {
		return newErr(KindMalformed, "bad header member", nil)
	}
	_, t.crit = m["crit"]
	return nil
}

func (t *Token) parseClaims(b []byte) error {
	m, ok := object(b)
	if !ok {
		return newErr(KindMalformed, "payload is not a JSON object", nil)
	}
	var okIss, okSub bool
	t.Issuer, okIss = optString(m, "iss")
	t.Subject, okSub = optString(m, "sub")
	if !okIss || t.Issuer == "" {
		return newErr(KindMalformed, "missing or bad iss", nil)
	}
	if !okSub || t.Subject == "" {
		return newErr(KindMalformed, "missing or bad sub", nil)
	}
	aud, err := audience(m["aud"])
	if err != nil {
		return err
	}
	t.Audience = aud
	if t.IssuedAt, ok = numericDate(m["iat"]); !ok {
		return newErr(KindMalformed, "missing or bad iat", nil)
	}
	if t.Expiry, ok = numericDate(m["exp"]); !ok {
		return newErr(KindMalformed, "missing or bad exp", nil)
	}
	var okNonce, okEmail bool
	t.Nonce, okNonce = optString(m, "nonce")
	t.Email, okEmail = optString(m, "email")
	if !okNonce || !okEmail {
		return newErr(KindMalformed, "bad nonce or email", nil)
	}
	if t.EmailVerified, ok = flexBool(m["email_verified"]); !ok {
		return newErr(KindMalformed, "bad email_verified", nil)
	}
	return nil
}

// audience accepts the two shapes RFC 7519 §4.1.3 allows: one string or an
// array of strings. Empty strings are refused: they match no client.
func audience(r json.RawMessage) ([]string, error) {
	bad := newErr(KindMalformed, "missing or bad aud", nil)
	if len(r) == 0 || isNull(r) {
		return nil, bad
	}
	var out []string
	switch r[0] {
	case '"':
		var s string
		if json.Unmarshal(r, &s) != nil {
			return nil, bad
		}
		out = []string{s}
	case '[':
		var raws []json.RawMessage
		if json.Unmarshal(r, &raws) != nil {
			return nil, bad
		}
		for _, e := range raws {
			var s string
			if len(e) == 0 || e[0] != '"' || json.Unmarshal(e, &s) != nil {
				return nil, bad
			}
			out = append(out, s)
		}
	default:
		return nil, bad
	}
	if len(out) == 0 {
		return nil, bad
	}
	for _, s := range out {
		if s == "" {
			return nil, bad
		}
	}
	return out, nil
}

// numericDate reads a required NumericDate: a JSON number of seconds since
// the epoch, integer or not (some issuers send fractions). Strings holding
// numbers are refused, as the RFC's type is a number.
func numericDate(r json.RawMessage) (time.Time, bool) {
	if len(r) == 0 || !(r[0] == '-' || '0' <= r[0] && r[0] <= '9') {
		return time.Time{}, false
	}
	var n json.Number
	if json.Unmarshal(r, &n) != nil {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxUnixTime {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	nsec := int64(math.Round(frac * 1e9))
	return time.Unix(int64(sec), nsec).UTC(), true
}

// flexBool reads email_verified, which some providers send as the string
// "true" or "false" instead of a JSON boolean. Absent means false.
func flexBool(r json.RawMessage) (bool, bool) {
	switch string(r) {
	case "", "null", "false", `"false"`:
		return false, true
	case "true", `"true"`:
		return true, true
	}
	return false, false
}
