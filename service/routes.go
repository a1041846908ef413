package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
)

// routes is the route table: every operation of the interface, the
// credential it needs, and its handler. Each area's lines are in the file
// of its handlers.
func (s *Service) routes() []route {
	var rts []route
	for _, area := range [][]route{s.customerRoutes(), s.credentialRoutes(), s.sessionRoutes(),
		s.externalAccountRoutes(), s.agentRoutes(), s.quoteRoutes(), s.transactionRoutes(), s.webhookRoutes()} {
		rts = append(rts, area...)
	}
	// LEGACY (issue 17, the layering): handlers not yet moved here.
	for key, h := range s.ops.LegacyRoutes() {
		method, path, _ := strings.Cut(key, " ")
		auth := authPlatform
		switch path {
		case "/agents/device-codes/{code}/redeem", "/webhooks/jwks.json":
			auth = authNone
		}
		rts = append(rts, route{method, path, handlerFunc(h), auth})
	}
	return rts
}

// reply answers an operation's result with status, or its refusal.
func reply[T any](w http.ResponseWriter, status int, v T, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// replySigned answers a signed operation: 202 with the challenge of a first
// call, status with the result of a retry (no body for 204), or the
// refusal.
func replySigned[T any](w http.ResponseWriter, status int, v payments.Signed[T], err error) error {
	switch {
	case err != nil:
		return err
	case v.Challenge != nil:
		writeJSON(w, http.StatusAccepted, v.Challenge)
	case status == http.StatusNoContent:
		w.WriteHeader(status)
	default:
		writeJSON(w, status, v.Result)
	}
	return nil
}
