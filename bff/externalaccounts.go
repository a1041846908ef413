package bff

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"paywallet/shared/accountrules"
)

// checkAccount runs the shared account rules over the JSON that is about to
// be forwarded, decoded as the service decodes it (numbers as float64).
func checkAccount(out []byte) *Error {
	var tree map[string]any
	if err := json.Unmarshal(out, &tree); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat, Message: "the body must be one JSON object"}
	}
	errs := accountrules.ValidateCreate(tree)
	if len(errs) == 0 {
		return nil
	}
	// The service's wording, so the browser cannot tell who answered.
	msg := "invalid " + errs[0].Field + ": " + errs[0].Message
	if len(errs) > 1 {
		msg = strconv.Itoa(len(errs)) + " fields are invalid; see details.errors"
	}
	return &Error{Status: http.StatusBadRequest, Code: codeInvalidInput, Message: msg,
		Details: map[string]any{"errors": errs}}
}

// decodeObject decodes exactly one JSON object, keeping numbers as written
// (json.Number), with nothing after it but white space.
func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not an object")
	}
	if err := d.Decode(&json.RawMessage{}); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return obj, nil
}
