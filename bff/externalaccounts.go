package bff

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"paywallet/shared/accountrules"
)

// handleCreateExternalAccount is POST /api/customers/external-accounts: it
// creates an external account for the cookie's customer.
//
// The route table cannot express a create (bind only sets query parameters
// and there is no resource to own yet), so this handler binds the body
// itself: it decodes the browser's JSON object, replaces customerId, whatever
// it was (absent, another customer's, null, which would mean a platform
// account, or not a string), with the cookie's customer, and forwards the
// re-encoded object. The service sees exactly the object built here, whatever
// duplicate keys the browser sent. Its status and body are passed through
// (201 with the account, 400 INVALID_INPUT with details.errors, 409
// CONFLICT, …).
//
// Before forwarding, the body is checked with the same rules the service and
// the wasm module run (shared/accountrules): a body the service would refuse
// is answered here with the same 400 INVALID_INPUT and details.errors, and
// never reaches the service.
func (s *Server) handleCreateExternalAccount(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	body, err := decodeObject(c.Body())
	if err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat,
			Message: "the body must be one JSON object"}
	}
	mine := customer.of(cs.data)
	if mine == "" {
		return errSignedOut
	}
	body["customerId"] = mine
	out, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if e := checkAccount(out); e != nil {
		return e
	}
	return s.forwardJSON(c, http.MethodPost, "/customers/external-accounts", out)
}

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
