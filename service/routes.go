package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
)

// routes is the route table: every operation of the interface, the
// credential it needs, and its handler.
func (s *Service) routes() []route {
	rts := []route{
		{"GET", "/agents/me/external-accounts/{externalAccountId}", s.agentExternalAccount, authAgent},
		{"POST", "/quotes", s.createQuote, authPlatform},
		{"GET", "/quotes/{quoteId}", s.getQuote, authPlatform},
		{"POST", "/quotes/{quoteId}/execute", s.executeQuote, authPlatform},
		{"POST", "/sandbox/internal-accounts/{accountId}/fund", s.fundSandbox, authSandbox},
		{"GET", "/auth/sessions", s.listSessions, authPlatform},
		{"DELETE", "/auth/sessions/{id}", s.revokeSession, authPlatform},
		{"POST", "/auth/sessions/{id}/refresh", s.refreshSession, authPlatform},
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
