package service

import (
	"net/http"

	"paywallet/service/payments"
)

// bookRoutes read the books (our extension): a wallet's statement, and for
// the platform the accounts, one ledger transaction and the signed chain
// head.
func (s *Service) bookRoutes() []route {
	return []route{
		{"GET", "/internal-accounts/{id}/entries", s.listLedgerEntries, authPlatform},
		{"GET", "/ledger/accounts", s.ledgerAccounts, authPlatform},
		{"GET", "/ledger/transactions/{id}", s.getLedgerTransaction, authPlatform},
		{"GET", "/ledger/head", s.ledgerHead, authPlatform},
	}
}

func (s *Service) listLedgerEntries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListLedgerEntries(r.Context(), payments.LedgerEntryFilter{AccountID: r.PathValue("id"),
		CreatedAfter: q.Get("createdAfter"), CreatedBefore: q.Get("createdBefore"), SortOrder: q.Get("sortOrder"),
		Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) ledgerAccounts(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.LedgerAccounts(r.Context())
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) getLedgerTransaction(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.GetLedgerTransaction(r.Context(), r.PathValue("id"))
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) ledgerHead(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.LedgerHead(r.Context())
	return reply(w, http.StatusOK, out, err)
}
