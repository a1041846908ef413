package service

import (
	"net/http"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

func (s *Service) customerRoutes() []route {
	return []route{
		{"POST", "/customers", s.createCustomer, authPlatform},
		{"GET", "/customers", s.listCustomers, authPlatform},
		{"GET", "/customers/internal-accounts", s.listInternalAccounts, authPlatform},
		{"GET", "/customers/{customerId}", s.getCustomer, authPlatform},
		{"PATCH", "/customers/{customerId}", s.updateCustomer, authPlatform},
		{"DELETE", "/customers/{customerId}", s.deleteCustomer, authPlatform},
		{"PATCH", "/internal-accounts/{id}", s.updateInternalAccount, authPlatform},
		{"POST", "/internal-accounts/{id}/export", s.exportWallet, authPlatform},
	}
}

func (s *Service) createCustomer(w http.ResponseWriter, r *http.Request) error {
	var req wire.CustomerCreateRequest
	if _, err := decodeBody(r, &req, false); err != nil {
		return err
	}
	c, err := s.ops.CreateCustomer(r.Context(), req)
	return reply(w, http.StatusCreated, c, err)
}

func (s *Service) listCustomers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListCustomers(r.Context(), payments.CustomerFilter{
		PlatformCustomerID: q.Get("platformCustomerId"),
		CustomerType:       q.Get("customerType"),
		IsIncludingDeleted: q.Get("isIncludingDeleted"),
		Page:               page(r),
	})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) listInternalAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListInternalAccounts(r.Context(), payments.InternalAccountFilter{
		CustomerID: q.Get("customerId"),
		Type:       q.Get("type"),
		Currency:   q.Get("currency"),
		Page:       page(r),
	})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) getCustomer(w http.ResponseWriter, r *http.Request) error {
	c, err := s.ops.GetCustomer(r.Context(), r.PathValue("customerId"))
	return reply(w, http.StatusOK, c, err)
}

func (s *Service) deleteCustomer(w http.ResponseWriter, r *http.Request) error {
	if err := readEmptyBody(r); err != nil {
		return err
	}
	c, err := s.ops.DeleteCustomer(r.Context(), r.PathValue("customerId"))
	return reply(w, http.StatusOK, c, err)
}

func (s *Service) updateCustomer(w http.ResponseWriter, r *http.Request) error {
	var req wire.CustomerUpdateRequest
	call, err := signedBody(r, &req)
	if err != nil {
		return err
	}
	out, err := s.ops.UpdateCustomer(r.Context(), r.PathValue("customerId"), req, call)
	return replySigned(w, http.StatusOK, out, err)
}

func (s *Service) updateInternalAccount(w http.ResponseWriter, r *http.Request) error {
	var req wire.InternalAccountUpdateRequest
	call, err := signedBody(r, &req)
	if err != nil {
		return err
	}
	out, err := s.ops.UpdateInternalAccount(r.Context(), r.PathValue("id"), req, call)
	return replySigned(w, http.StatusOK, out, err)
}

func (s *Service) exportWallet(w http.ResponseWriter, r *http.Request) error {
	var req wire.ExportRequest
	call, err := signedBody(r, &req)
	if err != nil {
		return err
	}
	out, err := s.ops.ExportWallet(r.Context(), r.PathValue("id"), req, call)
	return replySigned(w, http.StatusOK, out, err)
}
