package service

import (
	"net/http"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

func (s *Service) transactionRoutes() []route {
	return []route{
		{"GET", "/exchange-rates", s.exchangeRates, authPlatform},
		{"GET", "/transactions", s.listTransactions, authPlatform},
		{"GET", "/transactions/{transactionId}", s.getTransaction, authPlatform},
		{"POST", "/transactions/{transactionId}/confirm", s.confirmReceipt, authPlatform},
		{"POST", "/transactions/{transactionId}/cancel", s.cancelTransaction, authPlatform},
	}
}

func (s *Service) exchangeRates(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ExchangeRates(r.Context(), payments.ExchangeRatesRequest{SourceCurrency: q.Get("sourceCurrency"),
		DestinationCurrencies: q["destinationCurrency"], SendingAmount: q.Get("sendingAmount")})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) listTransactions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := s.ops.ListTransactions(r.Context(), payments.TransactionFilter{CustomerID: q.Get("customerId"),
		AccountID: q.Get("accountId"), Status: q.Get("status"), Type: q.Get("type"), StartDate: q.Get("startDate"),
		EndDate: q.Get("endDate"), SortOrder: q.Get("sortOrder"), Page: page(r)})
	return reply(w, http.StatusOK, out, err)
}

func (s *Service) getTransaction(w http.ResponseWriter, r *http.Request) error {
	out, err := s.ops.GetTransaction(r.Context(), r.PathValue("transactionId"))
	return reply(w, http.StatusOK, out, err)
}

// confirmReceipt takes an optional body: without one the receipt is
// confirmed now.
func (s *Service) confirmReceipt(w http.ResponseWriter, r *http.Request) error {
	var req wire.ConfirmReceiptRequest
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	out, err := s.ops.ConfirmReceipt(r.Context(), r.PathValue("transactionId"), req)
	return reply(w, http.StatusOK, out, err)
}

// cancelTransaction takes an optional body ({"reason": …}).
func (s *Service) cancelTransaction(w http.ResponseWriter, r *http.Request) error {
	var req payments.CancelRequest
	if _, err := decodeBody(r, &req, true); err != nil {
		return err
	}
	out, err := s.ops.CancelTransaction(r.Context(), r.PathValue("transactionId"), req)
	return reply(w, http.StatusOK, out, err)
}
