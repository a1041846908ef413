package payments

// LEGACY (issue 17, the layering): the request reading and answer writing
// of the handlers that are not yet operations. It goes when the last of
// them has moved to the HTTP layer (service/).

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"paywallet/shared/wire"
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
			return nil, errorf(CodeInvalidRequestFormat, "request body is larger than 1 MiB")
		}
		return nil, errorf(CodeInvalidRequestFormat, "could not read the request body")
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
		return errorf(CodeInvalidRequestFormat, "a JSON request body is required")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errorf(CodeInvalidRequestFormat, "Content-Type must be application/json")
		}
	}
	// No text the service stores may hold NUL: PostgreSQL cannot store it,
	// and no field of the interface has a use for it.
	if bytes.IndexByte(body, 0) >= 0 || bytes.Contains(body, []byte(`\u0000`)) {
		return errorf(CodeInvalidInput, "text values must not contain NUL characters")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonDecodeError(err)
	}
	if dec.More() {
		return errorf(CodeInvalidRequestFormat, "the body must hold exactly one JSON object")
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
			return errorf(CodeInvalidRequestFormat, "the body must be a JSON object")
		}
		return invalidField(field, "must be of type "+typeErr.Type.String())
	case errors.As(err, &syntaxErr):
		return errorf(CodeInvalidRequestFormat, "malformed JSON at byte "+strconv.FormatInt(syntaxErr.Offset, 10))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return invalidField(name, "unknown field")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(CodeInvalidRequestFormat, "malformed JSON: unexpected end of body")
	}
	return errorf(CodeInvalidRequestFormat, "malformed JSON body")
}

// retryHeaders is the legacy handlers' name of a SignedCall.
type retryHeaders = SignedCall

// readRetryHeaders reports whether the request is a retry. Both headers must
// come together: a signature without Request-Id is REQUEST_ID_MISSING, a
// Request-Id without a signature is WALLET_SIGNATURE_MISSING (facts §4.6).
func readRetryHeaders(r *http.Request) (SignedCall, bool, *Error) {
	h := SignedCall{
		Stamp:     strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature)),
		RequestID: strings.TrimSpace(r.Header.Get(wire.HeaderRequestID)),
	}
	switch {
	case h.Stamp == "" && h.RequestID == "":
		return h, false, nil
	case h.Stamp == "":
		return h, true, errorf(CodeSignatureMissing, "Request-Id was sent without Service-Wallet-Signature")
	case h.RequestID == "":
		return h, true, errorf(CodeRequestIDMissing, "Service-Wallet-Signature was sent without Request-Id")
	}
	return h, true, nil
}
