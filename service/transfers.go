package service

import (
	"context"
	"errors"
	"net/http"

	"paywallet/service/payments"
	"paywallet/shared/wire"
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
	return s.idempotent(w, r, "transfers.in", body, http.StatusCreated, func(ctx context.Context) (any, error) {
		return s.ops.TransferIn(ctx, req)
	})
}

// errChallenged carries a first call's challenge out of s.idempotent, which
// passes an error it does not know through without recording it.
var errChallenged = errors.New("service: the operation answered a signed-retry challenge")

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
	var challenge *wire.SignedRequestChallenge
	err = s.idempotent(w, r, "transfers.out", body, http.StatusCreated, func(ctx context.Context) (any, error) {
		out, err := s.ops.TransferOut(ctx, req, call)
		if err == nil && out.Challenge != nil {
			challenge = out.Challenge
			return nil, errChallenged
		}
		return out.Result, err
	})
	if errors.Is(err, errChallenged) {
		writeJSON(w, http.StatusAccepted, challenge)
		return nil
	}
	return err
}
