package payments

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Just-in-time funded quotes (grid-api-facts §3.6, §5): a quote whose
// source is {sourceType: REALTIME_FUNDING, customerId, currency} pays one
// of the customer's ACTIVE external accounts with money that is sent in
// for this one payment instead of being taken from an internal account.
//
// CreateQuote prices it like any quote, from the funding currency, and
// stores it with a deposit reference of its own (store.NewDepositReference,
// the format of the internal accounts' references, unique among both) and
// its PENDING transaction, which has no source account. Its
// paymentInstructions are the operator's receiving bank account for the
// funding currency (Config.DepositAccounts, or the sandbox details) with
// that reference; there is no payloadToSign: no wallet is debited, so
// POST /quotes/{id}/execute refuses it and immediatelyExecute is refused.
//
// The quote executes when exactly totalSendingAmount in the sending
// currency arrives before expiresAt: RecordDeposit (`paymentsd deposit`)
// with the quote's reference in production, POST /sandbox/send in sandbox
// mode (fundQuote). Its transaction then goes PROCESSING in a
// compare-and-set on PENDING (of two fundings only one executes), with its
// OUTGOING_PAYMENT.PROCESSING event, and the settlement worker pays the
// destination as for any executed quote (the sandbox destination digits
// apply); no internal balance moves at any step. A payment that arrives
// for an expired or already funded quote, or in another amount or
// currency, is refused and not applied: the operator returns it to its
// sender.

// checkRealtime names the bad members of a REALTIME_FUNDING source.
func (q *QuoteRequest) checkRealtime(fe *fieldErrors) {
	src := q.Source
	if src.CustomerID == "" {
		fe.add("source.customerId", "required with a REALTIME_FUNDING source: this service makes quotes for a customer, not for the platform itself")
	}
	switch {
	case src.Currency == "":
		fe.add("source.currency", "required with a REALTIME_FUNDING source: the currency the funds are sent in")
	case !currencyCode(src.Currency):
		fe.addConstraint("source.currency", "must be a currency code such as USD", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if src.AccountID != "" {
		fe.add("source.accountId", "is not taken with a REALTIME_FUNDING source: the funds are sent in, not taken from an account")
	}
	if q.ImmediatelyExecute {
		fe.add("immediatelyExecute", "is not supported with a REALTIME_FUNDING source: the quote executes when its funds arrive (see paymentInstructions)")
	}
}

// realtimePayer checks the customer of a REALTIME_FUNDING source and
// returns an internal account of the customer for the quote's row
// (store.Quote.FundingReference): nothing is taken from it. A problem is
// added to fe and the account is then nil.
func (s *Service) realtimePayer(ctx context.Context, tx store.Tx, req *QuoteRequest, fe *fieldErrors) (*store.InternalAccount, error) {
	c, err := tx.GetCustomer(ctx, req.Source.CustomerID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.add("source.customerId", "no customer with this id")
		return nil, nil
	case err != nil:
		return nil, err
	case !c.DeletedAt.IsZero():
		fe.add("source.customerId", "the customer is deleted")
		return nil, nil
	}
	page, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: c.ID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, fmt.Errorf("service: customer %s has no internal account", c.ID)
	}
	a := page.Items[0]
	return &a, nil
}

// newFundingReference is a deposit reference that no internal account and
// no quote has (the store's unique index stays the guarantee).
func newFundingReference(ctx context.Context, tx store.Tx) (string, error) {
	for range 8 {
		ref := store.NewDepositReference()
		_, err := tx.InternalAccountByDepositReference(ctx, ref)
		if err == nil {
			continue
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		_, err = tx.QuoteByFundingReference(ctx, ref)
		if errors.Is(err, store.ErrNotFound) {
			return ref, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("service: no free deposit reference after 8 tries")
}

// depositBank is the operator's receiving bank account for currency:
// Config.DepositAccounts, else in sandbox mode the sandbox details.
func (s *Service) depositBank(currency string) (map[string]any, bool) {
	bank, ok := s.cfg.DepositAccounts[currency]
	if !ok && s.mode == ModeSandbox {
		bank, ok = sandboxDepositAccounts[currency]
	}
	return bank, ok
}

// realtimeInstructions is a funded quote's paymentInstructions: where to
// send exactly totalSendingAmount, with the quote's reference.
func (s *Service) realtimeInstructions(q *store.Quote) []wire.PaymentInstructions {
	info := map[string]any{}
	amount := strconv.FormatInt(q.TotalSendingAmount, 10) + " " + q.SendingCurrency + " (smallest unit)"
	var notes string
	if bank, ok := s.depositBank(q.SendingCurrency); ok {
		maps.Copy(info, bank)
		if _, has := info["paymentRails"]; !has {
			t, _ := info["accountType"].(string)
			info["paymentRails"] = paymentRails(t, info)
		}
		notes = "Send exactly " + amount + " by an instant transfer to this account before " + timestamp(q.ExpiresAt)
	} else {
		if t := accountTypeOf(q.SendingCurrency); t != "" {
			info["accountType"] = t
		}
		notes = "Ask the operator of this service for the bank account that receives " + q.SendingCurrency +
			" and send exactly " + amount + " by an instant transfer to it before " + timestamp(q.ExpiresAt)
	}
	notes += ", quoting the reference " + q.FundingReference + " exactly in the payment's reference or memo field: " +
		"the payment executes this quote when it arrives. A payment that arrives after expiresAt, or in another amount " +
		"or currency, is not applied to the quote and is returned to its sender."
	if s.mode == ModeSandbox {
		notes += " Sandbox: no real money moves; simulate the payment with POST /sandbox/send {quoteId: " + q.ID +
			", currencyCode: " + q.SendingCurrency + "}."
	}
	info["reference"] = q.FundingReference
	return []wire.PaymentInstructions{{InstructionsNotes: notes, AccountOrWalletInfo: info}}
}

// fundQuote executes a PENDING funded quote for a payment of amount in
// currency that arrived for it; quoteField, currencyField and amountField
// name the request members a problem is reported on. The transaction goes
// PROCESSING in a compare-and-set on PENDING, with its event.
func (s *Service) fundQuote(ctx context.Context, tx store.Tx, q *store.Quote, x *store.Transaction, currency string, amount int64, quoteField, currencyField, amountField string) (*store.Transaction, error) {
	now := s.now()
	if st := quoteStatus(q, x, now); st != "PENDING" {
		msg := "the quote is " + st + ": it has already been funded and the payment is not applied to it"
		if st == "EXPIRED" {
			msg = "the quote expired at " + timestamp(q.ExpiresAt) + ": the payment is not applied to it (ask for a new quote)"
		}
		return nil, &Error{Code: "INVALID_STATE_TRANSITION", Message: msg, Details: map[string]any{"quoteStatus": st}}
	}
	if _, _, err := executableAccounts(ctx, tx, q, quoteField, true); err != nil {
		return nil, err
	}
	var fe fieldErrors
	if currency != q.SendingCurrency {
		fe.addConstraint(currencyField, "the quote is funded in "+q.SendingCurrency+", not "+currency,
			wire.FieldConstraint{Enum: []string{q.SendingCurrency}})
	}
	if amount != q.TotalSendingAmount {
		fe.add(amountField, fmt.Sprintf("must be exactly the quote's totalSendingAmount (%d), not %d", q.TotalSendingAmount, amount))
	}
	if e := fe.err(); e != nil {
		return nil, e
	}
	next := *x
	next.Status, next.UpdatedAt = "PROCESSING", now
	next.NextStepAt = now.Add(s.settleAfter(q.PaymentRail, x.Outcome))
	won, err := tx.AdvanceTransaction(ctx, &next, "PENDING")
	if err != nil {
		return nil, err
	}
	if !won {
		return nil, &Error{Code: "INVALID_STATE_TRANSITION", Message: "the quote was funded by another payment meanwhile",
			Details: map[string]any{"quoteStatus": "PROCESSING"}}
	}
	if err := s.emitTransaction(ctx, tx, &next); err != nil {
		return nil, err
	}
	return &next, nil
}

// SandboxSendRequest is the body of POST /sandbox/send: a simulated
// payment of a REALTIME_FUNDING quote's paymentInstructions.
type SandboxSendRequest struct {
	QuoteID      string `json:"quoteId"`
	CurrencyCode string `json:"currencyCode"`
	// CurrencyAmount defaults to the quote's totalSendingAmount.
	CurrencyAmount *int64 `json:"currencyAmount"`
}

// SandboxSend simulates the arrival of the funds of a REALTIME_FUNDING
// quote (POST /sandbox/send, sandbox mode only) and answers its
// transaction, now PROCESSING. It runs under o's Idempotency-Key.
func (s *Service) SandboxSend(ctx context.Context, o Once, req SandboxSendRequest) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.Transaction, error) { return s.sandboxSend(ctx, req, fin) })
}

func (s *Service) sandboxSend(ctx context.Context, req SandboxSendRequest, fin *then) (wire.Transaction, error) {
	if s.mode != ModeSandbox {
		return wire.Transaction{}, ErrSandboxOnly
	}
	var fe fieldErrors
	if strings.TrimSpace(req.QuoteID) == "" {
		fe.add("quoteId", "required")
	}
	switch {
	case req.CurrencyCode == "":
		fe.add("currencyCode", "required")
	case !currencyCode(req.CurrencyCode):
		fe.addConstraint("currencyCode", "must be a currency code such as USD", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if a := req.CurrencyAmount; a != nil && (*a <= 0 || *a > maxLockedAmount) {
		fe.add("currencyAmount", "must be an integer from 1 to 9000000000000000 (smallest unit of currencyCode)")
	}
	if e := fe.err(); e != nil {
		return wire.Transaction{}, e
	}
	return commit(ctx, s, "", fin, func(tx store.Tx) (wire.Transaction, error) {
		q, x, err := loadQuote(ctx, tx, req.QuoteID)
		if err != nil {
			return wire.Transaction{}, err
		}
		if q.FundingReference == "" {
			return wire.Transaction{}, invalidField("quoteId", "is paid from an internal account (source ACCOUNT), not funded by a payment: execute it with POST /quotes/"+q.ID+"/execute")
		}
		amount := q.TotalSendingAmount
		if req.CurrencyAmount != nil {
			amount = *req.CurrencyAmount
		}
		next, err := s.fundQuote(ctx, tx, q, x, req.CurrencyCode, amount, "quoteId", "currencyCode", "currencyAmount")
		if err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(next), nil
	})
}

// recordQuoteDeposit records a bank credit that quoted a funded quote's
// reference (RecordDeposit): it executes the quote. found is false when
// no quote has the reference (the reference is then an account's, or
// unknown).
func (s *Service) recordQuoteDeposit(ctx context.Context, ref string, req DepositRequest) (out wire.Transaction, found bool, err error) {
	var quoteID string
	_ = s.store.Tx(ctx, func(tx store.Tx) error {
		q, err := tx.QuoteByFundingReference(ctx, ref)
		if err == nil {
			quoteID = q.ID
		}
		return err
	})
	if quoteID == "" {
		return wire.Transaction{}, false, nil
	}
	out, err = commit(ctx, s, "", nil, func(tx store.Tx) (wire.Transaction, error) {
		q, x, err := loadQuote(ctx, tx, quoteID)
		if err != nil {
			return wire.Transaction{}, err
		}
		next, err := s.fundQuote(ctx, tx, q, x, req.Currency, *req.Amount, "reference", "currency", "amount")
		if err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(next), nil
	})
	return out, true, err
}
