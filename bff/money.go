package bff

import (
	"encoding/json"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// handleCreateQuote is POST /api/quotes: a quote paying from the cookie's
// wallet. Like an external-account create it has no resource to own yet,
// so it binds the body itself: source becomes the cookie's account and
// customer whatever the browser sent, and the rest (destination, locked
// side and amount, description) goes to the service, which refuses a
// destination of another customer (it must belong to the source's
// customer) and one that is not ACTIVE.
func (s *Server) handleCreateQuote(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	body, err := decodeObject(c.Body())
	if err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequestFormat, Message: "the body must be one JSON object"}
	}
	if cs.data.InternalAccountID == "" || cs.data.CustomerID == "" {
		return errSignedOut
	}
	body["source"] = map[string]any{"sourceType": "ACCOUNT", "accountId": cs.data.InternalAccountID, "customerId": cs.data.CustomerID}
	out, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return s.forwardJSON(c, http.MethodPost, "/quotes", out)
}

// handleSandboxFund is POST /api/sandbox/fund {amount}: adds sandbox money
// to the cookie's wallet. The service refuses it (403) unless it runs in
// sandbox mode, and checks the amount.
func (s *Server) handleSandboxFund(c *fiber.Ctx) error {
	cs, err := s.signedIn(c)
	if err != nil {
		return err
	}
	if cs.data.InternalAccountID == "" {
		return errSignedOut
	}
	return s.forwardJSON(c, http.MethodPost, "/sandbox/internal-accounts/"+cs.data.InternalAccountID+"/fund", c.Body())
}
