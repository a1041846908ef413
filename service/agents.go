package service

import "net/http"

func (s *Service) agentRoutes() []route {
	return []route{
		{"GET", "/agents/me/external-accounts/{externalAccountId}", s.agentExternalAccount, authAgent},
	}
}

func (s *Service) agentExternalAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := s.ops.AgentExternalAccount(r.Context(), agentOf(r), r.PathValue("externalAccountId"))
	return reply(w, http.StatusOK, a, err)
}
