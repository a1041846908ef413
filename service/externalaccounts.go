package service

import (
	"net/http"

	"paywallet/service/payments"
)

func (s *Service) externalAccountRoutes() []route {
	return []route{
		{"GET", "/discoveries", s.discoveries, authPlatform},
		{"POST", "/customers/external-accounts", s.createExternalAccount(false), authPlatform},
		{"GET", "/customers/external-accounts", s.listExternalAccounts(false), authPlatform},
		{"GET", "/customers/external-accounts/{externalAccountId}", s.getExternalAccount(false), authPlatform},
		{"DELETE", "/customers/external-accounts/{externalAccountId}", s.deactivateExternalAccount(false), authPlatform},
		{"POST", "/platform/external-accounts", s.createExternalAccount(true), authPlatform},
		{"GET", "/platform/external-accounts", s.listExternalAccounts(true), authPlatform},
		{"GET", "/receiver/external-account/{accountId}", s.lookupExternalAccount, authPlatform},
	}
}

func (s *Service) discoveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.Discoveries(r.Context(), payments.DiscoveryFilter{Country: q.Get("country"), Currency: q.Get("currency")})
	return reply(w, http.StatusOK, out, err)
}

// createExternalAccount serves POST /customers/external-accounts and, with
// platform set, POST /platform/external-accounts. The body is any JSON
// object: the operation's validator names what is wrong in it.
func (s *Service) createExternalAccount(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body map[string]any
		if _, err := decodeBody(r, &body, false); err != nil {
			return err
		}
		a, err := s.ops.CreateExternalAccount(r.Context(), payments.ExternalAccountRequest{Platform: platform, Body: body})
		return reply(w, http.StatusCreated, a, err)
	}
}

// listExternalAccounts serves GET /customers/external-accounts (every
// customer's accounts, or one customer's with customerId) and, with
// platform set, GET /platform/external-accounts, where a customerId in the
// query is not read.
func (s *Service) listExternalAccounts(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f := payments.ExternalAccountFilter{Platform: platform, Currency: q.Get("currency"), Page: page(r)}
		if !platform {
			f.CustomerID = q.Get("customerId")
		}
		out, err := s.ops.ListExternalAccounts(r.Context(), f)
		return reply(w, http.StatusOK, out, err)
	}
}

// getExternalAccount serves GET /customers/external-accounts/{id} and,
// with platform set, GET /platform/external-accounts/{id}.
func (s *Service) getExternalAccount(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := s.ops.GetExternalAccount(r.Context(), payments.ExternalAccountRef{Platform: platform, ID: r.PathValue("externalAccountId")})
		return reply(w, http.StatusOK, a, err)
	}
}

// deactivateExternalAccount serves DELETE on the same paths; it does not
// read the body, and answers 204.
func (s *Service) deactivateExternalAccount(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ref := payments.ExternalAccountRef{Platform: platform, ID: r.PathValue("externalAccountId")}
		if err := s.ops.DeactivateExternalAccount(r.Context(), ref); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// lookupExternalAccount serves GET /receiver/external-account/{accountId}
// ?customerId=&senderUmaAddress=.
func (s *Service) lookupExternalAccount(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.LookupExternalAccount(r.Context(), payments.ReceiverLookupRequest{AccountID: r.PathValue("accountId"),
		CustomerID: q.Get("customerId"), SenderUmaAddress: q.Get("senderUmaAddress")})
	return reply(w, http.StatusOK, out, err)
}
