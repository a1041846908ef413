package service

import (
	"net/http"
	"strings"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

func (s *Service) quoteRoutes() []route {
	return []route{
		{"POST", "/quotes", s.createQuote, authPlatform},
		{"GET", "/quotes/{quoteId}", s.getQuote, authPlatform},
		{"POST", "/quotes/{quoteId}/execute", s.executeQuote, authPlatform},
		{"POST", "/sandbox/internal-accounts/{accountId}/fund", s.fundSandbox, authSandbox},
		{"POST", "/sandbox/send", s.sandboxSend, authSandbox},
	}
}

func (s *Service) createQuote(w http.ResponseWriter, r *http.Request) error {
	var req payments.QuoteRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	return s.once(w, r, "quotes.create", body, http.StatusCreated, func(o payments.Once) (payments.Answer, error) {
		return s.ops.CreateQuote(r.Context(), o, req)
	})
}

func (s *Service) getQuote(w http.ResponseWriter, r *http.Request) error {
	q, err := s.ops.GetQuote(r.Context(), r.PathValue("quoteId"))
	return reply(w, http.StatusOK, q, err)
}

// executeQuote takes an optional empty body: the reference's scaFactor
// concerns EU strong customer authentication, which this service does not
// run, so it is refused as an unknown field rather than ignored.
func (s *Service) executeQuote(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	body, err := decodeBody(r, &none, true)
	if err != nil {
		return err
	}
	id := r.PathValue("quoteId")
	stamp := strings.TrimSpace(r.Header.Get(wire.HeaderWalletSignature))
	return s.once(w, r, "quotes.execute "+id, body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.ExecuteQuote(r.Context(), o, id, payments.Stamp(stamp))
	})
}

func (s *Service) fundSandbox(w http.ResponseWriter, r *http.Request) error {
	var req payments.FundRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	id := r.PathValue("accountId")
	return s.once(w, r, "sandbox.fund "+id, body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.FundSandbox(r.Context(), o, id, req)
	})
}

// sandboxSend simulates the payment of a REALTIME_FUNDING quote's
// paymentInstructions and answers the quote's transaction.
func (s *Service) sandboxSend(w http.ResponseWriter, r *http.Request) error {
	var req payments.SandboxSendRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	return s.once(w, r, "sandbox.send", body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.SandboxSend(r.Context(), o, req)
	})
}
