package service

import (
	"net/http"

	"paywallet/service/payments"
)

// routes is the route table: every operation of the interface, the
// credential it needs, and its handler. Each area's lines are in the file
// of its handlers.
func (s *Service) routes() []route {
	var rts []route
	for _, area := range [][]route{s.customerRoutes(), s.credentialRoutes(), s.sessionRoutes(),
		s.externalAccountRoutes(), s.platformRoutes(), s.agentRoutes(), s.quoteRoutes(), s.transferRoutes(),
		s.transactionRoutes(), s.incomingRoutes(), s.bookRoutes(), s.webhookRoutes(), s.documentRoutes()} {
		rts = append(rts, area...)
	}
	rts = append(rts, s.tokenRoutes()...)
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
