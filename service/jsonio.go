package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"paywallet/service/payments"
	"paywallet/service/strictjson"
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
			return nil, errorf(http.StatusRequestEntityTooLarge, payments.CodeInvalidRequestFormat, "request body is larger than 1 MiB")
		}
		return nil, errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "could not read the request body")
	}
	return b, nil
}

// emptyBody reports whether a body is empty or the empty JSON object.
func emptyBody(body []byte) bool {
	t := bytes.TrimSpace(body)
	return len(t) == 0 || bytes.Equal(t, []byte("{}"))
}

// decodeJSON decodes body into v strictly: the body must be one JSON object,
// with no fields v does not declare. Unknown fields and type mismatches are
// reported per field. An empty body decodes as {} when optional is set.
func decodeJSON(r *http.Request, body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "a JSON request body is required")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(http.StatusUnsupportedMediaType, payments.CodeInvalidRequestFormat, "Content-Type must be application/json")
		}
	}
	// No text the service stores may hold NUL: PostgreSQL cannot store it,
	// and no field of the interface has a use for it.
	if bytes.IndexByte(body, 0) >= 0 || bytes.Contains(body, []byte(`\u0000`)) {
		return errorf(http.StatusBadRequest, payments.CodeInvalidInput, "text values must not contain NUL characters")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// Every unknown member and every value of the wrong type, by
		// path, rather than encoding/json's first.
		if problems := strictjson.Problems(body, v, ""); len(problems) > 0 {
			return fieldErrors(problems)
		}
		return jsonDecodeError(err)
	}
	// Anything after the value, even a stray "}" (which dec.More does
	// not see), makes it not one JSON object.
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "the body must hold exactly one JSON object")
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
			return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "the body must be a JSON object")
		}
		return invalidField(field, "must be of type "+typeErr.Type.String())
	case errors.As(err, &syntaxErr):
		return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "malformed JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return invalidField(name, "unknown field")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "malformed JSON: unexpected end of body")
	}
	return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "malformed JSON body")
}

// writeRawJSON writes an answer already encoded (an idempotency record).
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}
