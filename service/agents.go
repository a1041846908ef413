package service

import "net/http"

func (s *Service) agentExternalAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.AgentExternalAccount(r.Context(), agentOf(r), r.PathValue("externalAccountId"))
	return reply(w, http.StatusOK, a, err)
}
