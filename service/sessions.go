package service

import (
	"net/http"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

func (s *Service) sessionRoutes() []route {
	return []route{
		{"GET", "/auth/sessions", s.listSessions, authPlatform},
		{"DELETE", "/auth/sessions/{id}", s.revokeSession, authPlatform},
		{"POST", "/auth/sessions/{id}/refresh", s.refreshSession, authPlatform},
	}
}

func (s *Service) listSessions(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.ListSessions(r.Context(), r.URL.Query().Get("accountId"))
	return reply(w, http.StatusOK, out, err)
}

// revokeSession takes no body, or an empty JSON object.
func (s *Service) revokeSession(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if !emptyBody(body) {
		return errorf(http.StatusBadRequest, payments.CodeInvalidRequestFormat, "this request takes no body")
	}
	call, err := signedCall(r, nil)
	if err != nil {
		return err
	}
	out, err := s.ops.RevokeSession(r.Context(), r.PathValue("id"), call)
	return replySigned(w, http.StatusNoContent, out, err)
}

func (s *Service) refreshSession(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	call, err := signedCall(r, body)
	if err != nil {
		return err
	}
	var req wire.ChallengeRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	out, err := s.ops.RefreshSession(r.Context(), r.PathValue("id"), req, call)
	return replySigned(w, http.StatusCreated, out, err)
}
