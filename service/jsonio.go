package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// readBody reads the whole request body (bounded by the handler's
// MaxBytesReader). Signed retries need the raw bytes to hash them.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errorf(http.StatusRequestEntityTooLarge, codeInvalidRequestFormat, "request body is larger than 1 MiB")
		}
		return nil, errorf(http.StatusBadRequest, codeInvalidRequestFormat, "could not read the request body")
	}
	return b, nil
}

// readEmptyBody reads the body of an operation without parameters: none,
// or an empty JSON object; any field is refused as unknown.
func readEmptyBody(r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var none struct{}
	return decodeJSON(r, body, &none, true)
}

// decodeJSON decodes body into v strictly: the body must be one JSON object,
// with no fields v does not declare. Unknown fields and type mismatches are
// reported per field. An empty body decodes as {} when optional is set.
func decodeJSON(r *http.Request, body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "a JSON request body is required")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(http.StatusUnsupportedMediaType, codeInvalidRequestFormat, "Content-Type must be application/json")
		}
	}
	// No text the service stores may hold NUL: PostgreSQL cannot store it,
	// and no field of the interface has a use for it.
	if bytes.IndexByte(body, 0) >= 0 || bytes.Contains(body, []byte(`\u0000`)) {
		return errorf(http.StatusBadRequest, codeInvalidInput, "text values must not contain NUL characters")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonDecodeError(err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "the body must hold exactly one JSON object")
	}
	return nil
}

func jsonDecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "the body must be a JSON object")
		}
		return invalidField(field, "must be of type "+typeErr.Type.String())
	case errors.As(err, &syntaxErr):
		return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "malformed JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return invalidField(name, "unknown field")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "malformed JSON: unexpected end of body")
	}
	return errorf(http.StatusBadRequest, codeInvalidRequestFormat, "malformed JSON body")
}

// canonicalBodyHash hashes the canonical form of a JSON body: objects with
// sorted keys, no insignificant whitespace, numbers as written. Two bodies
// that mean the same thing hash the same, so a retry that re-serialises the
// body (a proxy, another JSON library) still matches, while any change of a
// value does not. An empty body hashes as the empty string.
func canonicalBodyHash(body []byte) ([]byte, error) {
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
