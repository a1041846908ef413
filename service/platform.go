package service

import (
	"net/http"

	"paywallet/service/payments"
)

// platformRoutes are the platform's own accounts: its internal accounts
// (made at start, one per wallet currency) and one external account by id
// (the list and create are with the customers' in externalaccounts.go).
func (s *Service) platformRoutes() []route {
	return []route{
		{"GET", "/platform/internal-accounts", s.listPlatformInternalAccounts, authPlatform},
		{"GET", "/platform/external-accounts/{externalAccountId}", s.getExternalAccount(true), authPlatform},
		{"DELETE", "/platform/external-accounts/{externalAccountId}", s.deactivateExternalAccount(true), authPlatform},
	}
}

func (s *Service) listPlatformInternalAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListPlatformInternalAccounts(r.Context(), payments.PlatformInternalAccountFilter{Type: q.Get("type"), Currency: q.Get("currency")})
	return reply(w, http.StatusOK, out, err)
}
