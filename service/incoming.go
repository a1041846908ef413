package service

import (
	"net/http"

	"paywallet/service/payments"
)

// Incoming UMA payments and their approval (payments/incoming.go).
func (s *Service) incomingRoutes() []route {
	return []route{
		{"POST", "/sandbox/uma/receive", s.sandboxUmaReceive, authSandbox},
		{"POST", "/transactions/{transactionId}/approve", s.approvePayment, authPlatform},
		{"POST", "/transactions/{transactionId}/reject", s.rejectPayment, authPlatform},
		{"GET", "/receiver/uma/{receiverUmaAddress}", s.lookupUma, authPlatform},
	}
}

func (s *Service) sandboxUmaReceive(w http.ResponseWriter, r *http.Request) error {
	var req payments.SandboxUmaReceiveRequest
	body, err := decodeBody(r, &req, false)
	if err != nil {
		return err
	}
	return s.once(w, r, "sandbox.uma.receive", body, http.StatusOK, func(o payments.Once) (payments.Answer, error) {
		return s.ops.SandboxUmaReceive(r.Context(), o, req)
	})
}

// approvePayment takes an optional body ({"receiverCustomerInfo": {…}}).
func (s *Service) approvePayment(w http.ResponseWriter, r *http.Request) error {
	var req payments.ApprovePaymentRequest
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	out, err := s.ops.ApprovePayment(r.Context(), r.PathValue("transactionId"), req)
	return reply(w, http.StatusOK, out, err)
}

// rejectPayment takes an optional body ({"reason": …}).
func (s *Service) rejectPayment(w http.ResponseWriter, r *http.Request) error {
	var req payments.RejectPaymentRequest
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	out, err := s.ops.RejectPayment(r.Context(), r.PathValue("transactionId"), req)
	return reply(w, http.StatusOK, out, err)
}

// lookupUma serves GET /receiver/uma/{receiverUmaAddress}?customerId=…&senderUmaAddress=….
func (s *Service) lookupUma(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.LookupUma(r.Context(), payments.UmaLookupRequest{ReceiverUmaAddress: r.PathValue("receiverUmaAddress"),
		CustomerID: q.Get("customerId"), SenderUmaAddress: q.Get("senderUmaAddress")})
	return reply(w, http.StatusOK, out, err)
}
