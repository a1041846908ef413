package service

import (
	"net/http"

	"paywallet/service/payments"
)

// Same-currency transfers (payments/transfers.go): POST /transfer-in and
// POST /transfer-out, both with Idempotency-Key. A transfer-out from an
// embedded wallet is a signed operation: its first call answers 202 with
// the challenge, which is never recorded under the Idempotency-Key (only
// the transfer the signed retry makes is).
func (s *Service) transferRoutes() []route {
	return []route{
		{"POST", "/transfer-in", s.transferIn, authPlatform},
		{"POST", "/transfer-out", s.transferOut, authPlatform},
	}
}

func (s *Service) transferIn(w http.ResponseWriter, r *http.Request) error {
	var req payments.TransferInRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	return s.once(w, r, "transfers.in", body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.TransferIn(r.Context(), o, req)
	})
}

func (s *Service) transferOut(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	call, err := signedCall(r, body)
	if err != nil {
		return err
	}
	var req payments.TransferOutRequest
	if err := decodeJSON(r, body, &req, false); err != nil {
		return err
	}
	return s.once(w, r, "transfers.out", body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.TransferOut(r.Context(), o, req, call)
	})
}
