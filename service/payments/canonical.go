package payments

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"time"
)

// CanonicalBodyHash hashes the canonical form of a JSON body: objects with
// sorted keys, no insignificant whitespace, numbers as written. Two bodies
// that mean the same thing hash the same, so a retry that re-serialises the
// body (a proxy, another JSON library) still matches, while any change of a
// value does not. An empty body hashes as the empty string.
func CanonicalBodyHash(body []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		h := sha256.Sum256(nil)
		return h[:], nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.InputOffset() != int64(len(trimmed)) {
		return nil, errors.New("payments: text after the JSON value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	h := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return h[:], nil
}

// timestamp formats t as RFC 3339 in UTC with a Z, exactly (fractional
// seconds only when present), so a client sees the very instant the service
// compares against.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}
