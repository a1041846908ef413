package payments

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// Transactions: reads, receipt confirmation, and sandbox funding (which
// records an INCOMING transaction next to the credit).

var transactionStatuses = []string{"CREATED", "PENDING", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"}

var errTransactionNotFound = errorf("TRANSACTION_NOT_FOUND", "no transaction with this id")

func loadTransaction(ctx context.Context, tx store.Tx, id string) (*store.Transaction, error) {
	if !ids.Valid("Transaction", id) {
		return nil, errTransactionNotFound
	}
	x, err := tx.GetTransaction(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errTransactionNotFound
	}
	return x, err
}

// transactionJSON renders a transaction. A PENDING transaction whose quote
// has expired is shown EXPIRED at once, as its quote is.
func (s *Service) transactionJSON(x *store.Transaction) wire.Transaction {
	status, reason := x.Status, x.FailureReason
	if status == "PENDING" && !x.NextStepAt.IsZero() && !s.now().Before(x.NextStepAt) {
		status, reason = "EXPIRED", "QUOTE_EXPIRED"
	}
	out := wire.Transaction{
		ID: x.ID, Status: status, Type: x.Type,
		Destination:        wire.TransactionEndpoint{DestinationType: "ACCOUNT", AccountID: x.DestinationAccountID, Currency: x.ReceivingCurrency},
		CustomerID:         x.CustomerID,
		PlatformCustomerID: x.PlatformCustomerID,
		ReceivedAmount:     wire.CurrencyAmount{Amount: x.ReceivedAmount, Currency: s.currencyJSON(x.ReceivingCurrency)},
		ExchangeRate:       x.ExchangeRate,
		QuoteID:            x.QuoteID,
		PaymentRail:        x.PaymentRail,
		CreatedAt:          timestamp(x.CreatedAt),
		UpdatedAt:          timestamp(x.UpdatedAt),
		Description:        x.Description,
		FailureReason:      reason,
	}
	if x.SourceAccountID != "" {
		out.Source = &wire.TransactionEndpoint{SourceType: "ACCOUNT", AccountID: x.SourceAccountID, Currency: x.SendingCurrency}
		out.SentAmount = &wire.CurrencyAmount{Amount: x.SentAmount, Currency: s.currencyJSON(x.SendingCurrency)}
	}
	if x.Type == "OUTGOING" {
		out.Fees = new(x.Fees)
	}
	if !x.SettledAt.IsZero() {
		out.SettledAt = timestamp(x.SettledAt)
	}
	if !x.ReceiptConfirmedAt.IsZero() {
		out.ReceiptDeliveryConfirmedAt = timestamp(x.ReceiptConfirmedAt)
	}
	if status != "CREATED" {
		out.ReconciliationInstructions = &wire.ReconciliationInstructions{Reference: x.Reference}
	}
	if len(x.RateDetails) > 0 {
		var rd wire.RateDetails
		if json.Unmarshal(x.RateDetails, &rd) == nil {
			out.RateDetails = &rd
		}
	}
	if len(x.Counterparty) > 0 {
		_ = json.Unmarshal(x.Counterparty, &out.CounterpartyInformation)
	}
	return out
}

// getTransaction handles GET /transactions/{transactionId}.
func (s *Service) getTransaction(w http.ResponseWriter, r *http.Request) error {
	return s.respond(w, r, func(tx store.Tx) (any, error) {
		x, err := loadTransaction(r.Context(), tx, r.PathValue("transactionId"))
		if err != nil {
			return nil, err
		}
		return s.transactionJSON(x), nil
	})
}

// respond runs fn in one store transaction and answers 200 with what it
// returns, or with its error; nothing is written before the transaction
// committed.
func (s *Service) respond(w http.ResponseWriter, r *http.Request, fn func(tx store.Tx) (any, error)) error {
	return s.respondFor(w, r, "", fn)
}

// respondFor is respond in turn's turn (see Service.tx).
func (s *Service) respondFor(w http.ResponseWriter, r *http.Request, turn string, fn func(tx store.Tx) (any, error)) error {
	var out any
	err := s.tx(r.Context(), turn, func(tx store.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listTransactions handles GET /transactions: filters customerId,
// accountId (source or destination), status, type, startDate and endDate
// (RFC 3339; start inclusive, end exclusive), sortOrder (desc by default,
// newest first), limit and cursor.
func (s *Service) listTransactions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fe fieldErrors
	f := store.TransactionFilter{CustomerID: q.Get("customerId"), AccountID: q.Get("accountId"),
		Status: q.Get("status"), Type: q.Get("type"), Descending: true}
	f.Limit, f.Cursor = pageParams(q, "Transaction", &fe)
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if f.AccountID != "" && !ids.Valid("InternalAccount", f.AccountID) && !ids.Valid("ExternalAccount", f.AccountID) {
		fe.add("accountId", "must be an InternalAccount:<uuid> or ExternalAccount:<uuid> id")
	}
	if f.Status != "" && !slices.Contains(transactionStatuses, f.Status) {
		fe.addConstraint("status", "is not a transaction status", wire.FieldConstraint{Enum: transactionStatuses})
	}
	if f.Type != "" && f.Type != "INCOMING" && f.Type != "OUTGOING" {
		fe.addConstraint("type", "must be INCOMING or OUTGOING", wire.FieldConstraint{Enum: []string{"INCOMING", "OUTGOING"}})
	}
	for name, dst := range map[string]*time.Time{"startDate": &f.CreatedAfter, "endDate": &f.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				fe.addConstraint(name, "must be an RFC 3339 date-time such as 2026-11-22T12:00:00Z", wire.FieldConstraint{Format: "date-time"})
				continue
			}
			*dst = t.UTC()
		}
	}
	switch q.Get("sortOrder") {
	case "", "desc":
	case "asc":
		f.Descending = false
	default:
		fe.addConstraint("sortOrder", "must be asc or desc", wire.FieldConstraint{Enum: []string{"asc", "desc"}})
	}
	if e := fe.err(); e != nil {
		return e
	}
	var page store.Page[store.Transaction]
	err := s.store.Tx(r.Context(), func(tx store.Tx) error {
		var err error
		page, err = tx.ListTransactions(r.Context(), f)
		return err
	})
	if err != nil {
		return err
	}
	out := wire.List[wire.Transaction]{Data: make([]wire.Transaction, 0, len(page.Items)), HasMore: page.HasMore,
		NextCursor: page.NextCursor, TotalCount: &page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, s.transactionJSON(&page.Items[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// confirmClockSkew is how far in the future a receiptDeliveryConfirmedAt
// may lie, for a platform whose clock runs slightly ahead.
const confirmClockSkew = 5 * time.Second

// confirmReceipt handles POST /transactions/{transactionId}/confirm: it
// records when the platform delivered the receipt (now when the body does
// not say); a repeat overwrites the time (grid-api-facts §3.7).
func (s *Service) confirmReceipt(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req wire.ConfirmReceiptRequest
	if err := decodeJSON(r, body, &req, true); err != nil {
		return err
	}
	now := s.now()
	at := now
	if req.ReceiptDeliveryConfirmedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.ReceiptDeliveryConfirmedAt)
		if err != nil {
			var fe fieldErrors
			fe.addConstraint("receiptDeliveryConfirmedAt", "must be an RFC 3339 date-time such as 2026-11-22T12:00:00Z", wire.FieldConstraint{Format: "date-time"})
			return fe.err()
		}
		at = t.UTC().Truncate(time.Microsecond)
		if at.After(now.Add(confirmClockSkew)) {
			return invalidField("receiptDeliveryConfirmedAt", "is in the future; a receipt cannot be delivered before now")
		}
	}
	return s.respond(w, r, func(tx store.Tx) (any, error) {
		x, err := loadTransaction(r.Context(), tx, r.PathValue("transactionId"))
		if err != nil {
			return nil, err
		}
		if at.Before(x.CreatedAt) {
			return nil, invalidField("receiptDeliveryConfirmedAt", "is before the transaction was created ("+timestamp(x.CreatedAt)+")")
		}
		if err := tx.ConfirmReceipt(r.Context(), x.ID, at, now); err != nil {
			return nil, err
		}
		x.ReceiptConfirmedAt, x.UpdatedAt = at, now
		return s.transactionJSON(x), nil
	})
}

// MaxSandboxFunding is the reference's limit of one sandbox funding.
const MaxSandboxFunding = 100_000_000_000

// FundRequest is the request of FundSandbox.
type FundRequest struct {
	Amount *int64 `json:"amount"`
}

// FundSandbox credits an internal account of a customer (POST
// /sandbox/internal-accounts/{accountId}/fund) and records a COMPLETED
// INCOMING transaction; in production mode it is refused (403 FORBIDDEN).
// It answers the account as it is after the credit.
func (s *Service) FundSandbox(ctx context.Context, accountID string, req FundRequest) (wire.InternalAccount, error) {
	if s.mode != ModeSandbox {
		return wire.InternalAccount{}, ErrSandboxOnly
	}
	if req.Amount == nil {
		return wire.InternalAccount{}, invalidField("amount", "required")
	}
	if *req.Amount <= 0 || *req.Amount > MaxSandboxFunding {
		return wire.InternalAccount{}, invalidField("amount", "must be an integer from 1 to "+strconv.Itoa(MaxSandboxFunding)+" (smallest unit of the account's currency)")
	}
	// Fundings of one account take turns (the credit updates its balance
	// row), as executes from one wallet do.
	return commit(ctx, s, accountID, func(tx store.Tx) (wire.InternalAccount, error) {
		a, err := s.walletAccount(ctx, tx, accountID)
		if err != nil {
			return wire.InternalAccount{}, err
		}
		if a.Status != "ACTIVE" {
			return wire.InternalAccount{}, errorf(CodeInvalidInput, "the account is "+a.Status+"; only ACTIVE accounts can be funded")
		}
		if a.CustomerID == "" {
			return wire.InternalAccount{}, errorf(CodeInvalidInput, "platform accounts are not funded through the sandbox")
		}
		cust, err := tx.GetCustomer(ctx, a.CustomerID)
		if err != nil {
			return wire.InternalAccount{}, err
		}
		now := s.now()
		if err := tx.Credit(ctx, a.ID, *req.Amount, now); err != nil {
			return wire.InternalAccount{}, err
		}
		id := ids.New("Transaction")
		x := &store.Transaction{
			ID: id, Type: "INCOMING", Status: "COMPLETED", CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
			DestinationAccountID: a.ID, SendingCurrency: a.Currency, ReceivingCurrency: a.Currency,
			SentAmount: *req.Amount, ReceivedAmount: *req.Amount, ExchangeRate: 1,
			Description: "Sandbox funding", Reference: reference(id), SettledAt: now, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			return wire.InternalAccount{}, err
		}
		// Read back in the same transaction: the answer is what commits.
		a, err = tx.GetInternalAccount(ctx, a.ID)
		if err != nil {
			return wire.InternalAccount{}, err
		}
		account := s.internalAccountJSON(a)
		if err := s.emitTransaction(ctx, tx, x); err != nil {
			return wire.InternalAccount{}, err
		}
		if err := s.emit(ctx, tx, webhooksig.InternalAccountBalanceUpdated, a.ID, account); err != nil {
			return wire.InternalAccount{}, err
		}
		return account, nil
	})
}

// exchangeRates handles GET /exchange-rates (grid-api-facts §3.9):
// sourceCurrency (the wallet currency when omitted), destinationCurrency
// (repeatable; all when omitted) and sendingAmount (10000 by default).
func (s *Service) exchangeRates(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fe fieldErrors
	src := q.Get("sourceCurrency")
	if src == "" {
		src = s.cfg.WalletCurrency
	}
	if _, ok := s.rates.Currency(src); !ok {
		fe.add("sourceCurrency", "no rates are offered from this currency")
	}
	dsts := q["destinationCurrency"]
	for i, d := range dsts {
		if _, ok := s.rates.Currency(d); !ok {
			fe.add("destinationCurrency["+strconv.Itoa(i)+"]", "no rates are offered to this currency")
		}
	}
	var amount int64
	if v := q.Get("sendingAmount"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxLockedAmount {
			fe.add("sendingAmount", "must be an integer from 0 to 9000000000000000")
		}
		amount = n
	}
	if e := fe.err(); e != nil {
		return e
	}
	rows, err := s.rates.ExchangeRates(src, dsts, amount)
	if err != nil {
		return amountProblem(err, "SENDING")
	}
	out := wire.Data[wire.ExchangeRate]{Data: make([]wire.ExchangeRate, 0, len(rows))}
	updated := timestamp(s.rates.UpdatedAt())
	for _, row := range rows {
		out.Data = append(out.Data, wire.ExchangeRate{
			SourceCurrency:         wire.Currency{Code: row.Sending.Code, Name: row.Sending.Name, Symbol: row.Sending.Symbol, Decimals: row.Sending.Decimals},
			DestinationCurrency:    wire.Currency{Code: row.Receiving.Code, Name: row.Receiving.Name, Symbol: row.Receiving.Symbol, Decimals: row.Receiving.Decimals},
			DestinationPaymentRail: row.Rail,
			MinSendingAmount:       row.MinSending, MaxSendingAmount: row.MaxSending,
			SendingAmount: row.SendingAmount, ReceivingAmount: row.ReceivingAmount,
			ExchangeRate: row.ExchangeRate,
			Fees:         wire.ExchangeRateFees{Fixed: row.FixedFees, Total: row.TotalFees},
			UpdatedAt:    updated,
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// legacyTransactionRoutes are this area's handlers that are not yet operations (see
// LegacyRoutes).
func (s *Service) legacyTransactionRoutes() map[string]LegacyHandler {
	return map[string]LegacyHandler{
		"GET /exchange-rates":                        s.exchangeRates,
		"GET /transactions":                          s.listTransactions,
		"GET /transactions/{transactionId}":          s.getTransaction,
		"POST /transactions/{transactionId}/confirm": s.confirmReceipt,
	}
}
