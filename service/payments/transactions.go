package payments

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// Transactions: reads, receipt confirmation, and sandbox funding (which
// records an INCOMING transaction next to the credit).

var transactionStatuses = []string{"CREATED", "PENDING", "PENDING_AUTHORIZATION", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"}

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
	if x.QuoteID != "" && !x.NextStepAt.IsZero() && !s.now().Before(x.NextStepAt) {
		switch status {
		case "PENDING":
			status, reason = "EXPIRED", "QUOTE_EXPIRED"
		case "PENDING_AUTHORIZATION":
			status, reason = "EXPIRED", "SCA_NOT_COMPLETED"
		}
	}
	out := wire.Transaction{
		ID: x.ID, Status: status, Type: x.Type, Direction: transactionDirection(x.Type),
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
	if x.SourceAccountID == "" && x.QuoteID != "" {
		// A just-in-time funded quote's payment (realtime.go).
		out.Source = &wire.TransactionEndpoint{SourceType: "REALTIME_FUNDING", Currency: x.SendingCurrency}
		out.SentAmount = &wire.CurrencyAmount{Amount: x.SentAmount, Currency: s.currencyJSON(x.SendingCurrency)}
	}
	if x.SenderUmaAddress != "" {
		out.Source = &wire.TransactionEndpoint{SourceType: "UMA_ADDRESS", UmaAddress: x.SenderUmaAddress, Currency: x.SendingCurrency}
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
	out.RateDetails = rateDetails(x.RateDetails)
	if len(x.Counterparty) > 0 {
		_ = json.Unmarshal(x.Counterparty, &out.CounterpartyInformation)
	}
	return out
}

// transactionDirection is the reference's required direction: whether the
// transaction credits (funds in) or debits (funds out) the customer's
// account. Every INCOMING transaction of this service (sandbox funding, a
// deposit) credits it and every OUTGOING one (a quote's payment) debits
// it; the service has no pulls, the case where the two differ.
func transactionDirection(typ string) string {
	if typ == "OUTGOING" {
		return "DEBIT"
	}
	return "CREDIT"
}

// GetTransaction is one transaction (GET /transactions/{transactionId}); a
// malformed or unknown id is 404 TRANSACTION_NOT_FOUND.
func (s *Service) GetTransaction(ctx context.Context, id string) (wire.Transaction, error) {
	return read(ctx, s, func(tx store.Tx) (wire.Transaction, error) {
		x, err := loadTransaction(ctx, tx, id)
		if err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(x), nil
	})
}

// TransactionFilter is the query of ListTransactions, as the query gives
// it (text, so that every bad value is named in one answer).
type TransactionFilter struct {
	CustomerID string `query:"customerId"`
	AccountID  string `query:"accountId"` // the source or the destination
	Status     string `query:"status"`
	Type       string `query:"type"`      // INCOMING or OUTGOING
	StartDate  string `query:"startDate"` // RFC 3339, inclusive
	EndDate    string `query:"endDate"`   // RFC 3339, exclusive
	SortOrder  string `query:"sortOrder"` // asc, or desc (the default: newest first)
	Page       PageRequest
}

// ListTransactions is a page of transactions (GET /transactions): filters
// customerId, accountId (source or destination), status, type, startDate
// and endDate (RFC 3339; start inclusive, end exclusive), sortOrder (desc
// by default, newest first), limit and cursor.
func (s *Service) ListTransactions(ctx context.Context, req TransactionFilter) (wire.List[wire.Transaction], error) {
	var fe fieldErrors
	f := transactionFilter(req, "accountId", &fe)
	if f.CustomerID != "" && !ids.Valid("Customer", f.CustomerID) {
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if e := fe.err(); e != nil {
		return wire.List[wire.Transaction]{}, e
	}
	return s.listTransactions(ctx, f)
}

// transactionFilter checks the filters of a transaction list but the
// customer (the platform's and an agent's lists bind it differently) and
// builds the store's filter, recording bad values in fe; accountField is the
// name the list gives AccountID.
func transactionFilter(req TransactionFilter, accountField string, fe *fieldErrors) store.TransactionFilter {
	f := store.TransactionFilter{CustomerID: req.CustomerID, AccountID: req.AccountID,
		Status: req.Status, Type: req.Type, Descending: true}
	f.Limit, f.Cursor = req.Page.check("Transaction", fe)
	if f.AccountID != "" && !ids.Valid("InternalAccount", f.AccountID) && !ids.Valid("ExternalAccount", f.AccountID) {
		fe.add(accountField, "must be an InternalAccount:<uuid> or ExternalAccount:<uuid> id")
	}
	if f.Status != "" && !slices.Contains(transactionStatuses, f.Status) {
		fe.addConstraint("status", "is not a transaction status", wire.FieldConstraint{Enum: transactionStatuses})
	}
	if f.Type != "" && f.Type != "INCOMING" && f.Type != "OUTGOING" {
		fe.addConstraint("type", "must be INCOMING or OUTGOING", wire.FieldConstraint{Enum: []string{"INCOMING", "OUTGOING"}})
	}
	f.CreatedAfter = dateTime(fe, "startDate", req.StartDate)
	f.CreatedBefore = dateTime(fe, "endDate", req.EndDate)
	f.Descending = descending(fe, req.SortOrder, true)
	return f
}

// listTransactions is one page of the transactions f selects.
func (s *Service) listTransactions(ctx context.Context, f store.TransactionFilter) (wire.List[wire.Transaction], error) {
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.Transaction], error) { return tx.ListTransactions(ctx, f) },
		s.transactionJSON)
}

// dateTime reads the RFC 3339 date-time v of the field name, in UTC; the
// zero time when v is empty or bad (recorded in fe).
func dateTime(fe *fieldErrors, name, v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		fe.addConstraint(name, "must be an RFC 3339 date-time such as 2026-11-22T12:00:00Z", wire.FieldConstraint{Format: "date-time"})
		return time.Time{}
	}
	return t.UTC()
}

// confirmClockSkew is how far in the future a receiptDeliveryConfirmedAt
// may lie, for a platform whose clock runs slightly ahead.
const confirmClockSkew = 5 * time.Second

// ConfirmReceipt records when the platform delivered the receipt of a
// transaction (POST /transactions/{transactionId}/confirm; now when the
// request does not say); a repeat overwrites the time (grid-api-facts
// §3.7). It answers the transaction.
func (s *Service) ConfirmReceipt(ctx context.Context, id string, req wire.ConfirmReceiptRequest) (wire.Transaction, error) {
	now := s.now()
	at := now
	if req.ReceiptDeliveryConfirmedAt != "" {
		var fe fieldErrors
		t := dateTime(&fe, "receiptDeliveryConfirmedAt", req.ReceiptDeliveryConfirmedAt)
		if e := fe.err(); e != nil {
			return wire.Transaction{}, e
		}
		at = t.Truncate(time.Microsecond)
		if at.After(now.Add(confirmClockSkew)) {
			return wire.Transaction{}, invalidField("receiptDeliveryConfirmedAt", "is in the future; a receipt cannot be delivered before now")
		}
	}
	return commit(ctx, s, "", nil, func(tx store.Tx) (wire.Transaction, error) {
		x, err := loadTransaction(ctx, tx, id)
		if err != nil {
			return wire.Transaction{}, err
		}
		if at.Before(x.CreatedAt) {
			return wire.Transaction{}, invalidField("receiptDeliveryConfirmedAt", "is before the transaction was created ("+timestamp(x.CreatedAt)+")")
		}
		if err := tx.ConfirmReceipt(ctx, x.ID, at, now); err != nil {
			return wire.Transaction{}, err
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
// It answers the account as it is after the credit, under o's
// Idempotency-Key.
func (s *Service) FundSandbox(ctx context.Context, o Once, accountID string, req FundRequest) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.InternalAccount, error) { return s.fundSandbox(ctx, accountID, req, fin) })
}

func (s *Service) fundSandbox(ctx context.Context, accountID string, req FundRequest, fin *then) (wire.InternalAccount, error) {
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
	return commit(ctx, s, accountID, fin, func(tx store.Tx) (wire.InternalAccount, error) {
		a, err := s.walletAccount(ctx, tx, accountID)
		if err != nil {
			return wire.InternalAccount{}, err
		}
		if a.Status != "ACTIVE" {
			return wire.InternalAccount{}, errorf(CodeInvalidInput, "the account is "+a.Status+"; only ACTIVE accounts can be funded")
		}
		if a.CustomerID == "" {
			return wire.InternalAccount{}, errorf(CodeInvalidInput, "this is a platform internal account; the sandbox funds customers' accounts, the only ones payments are made from")
		}
		cust, err := tx.GetCustomer(ctx, a.CustomerID)
		if err != nil {
			return wire.InternalAccount{}, err
		}
		now := s.now()
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
		if err := s.credit(ctx, tx, ledger.KindFunding, "Sandbox funding", x, ledger.Sandbox(a.Currency), a.ID, now); err != nil {
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

// noRailPayout is the destinationPaymentRail of an exchange-rate row for a
// currency paid out without a bank rail (BTC): the row is required to name
// one, and such a payout goes to a SPARK_WALLET account over the Spark
// network. The reference's PaymentRail enum has no crypto value; SPARK is
// the name its CryptoNetwork enum gives that network. Quotes to such an
// account still carry no paymentRail.
const noRailPayout = "SPARK"

// ExchangeRatesRequest is the query of ExchangeRates.
type ExchangeRatesRequest struct {
	SourceCurrency        string   `query:"sourceCurrency"`      // the wallet currency when empty
	DestinationCurrencies []string `query:"destinationCurrency"` // every one offered when empty
	SendingAmount         string   `query:"sendingAmount"`       // 10000 when empty
}

// ExchangeRates is the rates offered from one currency (GET
// /exchange-rates, grid-api-facts §3.9): sourceCurrency (the wallet
// currency when omitted), destinationCurrency (repeatable; all when
// omitted) and sendingAmount (10000 by default).
func (s *Service) ExchangeRates(ctx context.Context, req ExchangeRatesRequest) (wire.Data[wire.ExchangeRate], error) {
	var fe fieldErrors
	src := req.SourceCurrency
	if src == "" {
		src = s.cfg.WalletCurrency
	}
	if _, ok := s.rates.Currency(src); !ok {
		fe.add("sourceCurrency", "no rates are offered from this currency")
	}
	dsts := req.DestinationCurrencies
	for i, d := range dsts {
		if _, ok := s.rates.Currency(d); !ok {
			fe.add("destinationCurrency["+strconv.Itoa(i)+"]", "no rates are offered to this currency")
		}
	}
	var amount int64
	if v := req.SendingAmount; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > maxLockedAmount {
			fe.add("sendingAmount", "must be an integer from 0 to 9000000000000000")
		}
		amount = n
	}
	if e := fe.err(); e != nil {
		return wire.Data[wire.ExchangeRate]{}, e
	}
	rows, err := s.rates.ExchangeRates(src, dsts, amount)
	if err != nil {
		return wire.Data[wire.ExchangeRate]{}, amountProblem(err, "SENDING")
	}
	out := wire.Data[wire.ExchangeRate]{Data: make([]wire.ExchangeRate, 0, len(rows))}
	updated := timestamp(s.rates.UpdatedAt())
	for _, row := range rows {
		if row.Rail == "" {
			row.Rail = noRailPayout
		}
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
	return out, nil
}
