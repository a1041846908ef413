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
	out, err := s.ops.ListSessions(r.Context(), payments.AccountQuery{AccountID: r.URL.Query().Get("accountId")})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) revokeSession(w http.ResponseWriter, r *http.Request) error {
	call, err := signedNoBody(r)
	if err != nil {
		return err
	}
	out, err := s.ops.RevokeSession(r.Context(), r.PathValue("id"), call)
	return replySigned(w, http.StatusNoContent, out, err)
}

func (s *Service) refreshSession(w http.ResponseWriter, r *http.Request) error {
	var req wire.ChallengeRequest
	call, err := signedBody(r, &req)
	if err != nil {
		return err
	}
	out, err := s.ops.RefreshSession(r.Context(), r.PathValue("id"), req, call)
	return replySigned(w, http.StatusCreated, out, err)
}
