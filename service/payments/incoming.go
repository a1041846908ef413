package payments

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Incoming UMA payments (POST /sandbox/uma/receive) and the platform's
// approval of them (POST /transactions/{transactionId}/approve and
// /reject).
//
// There is no UMA network behind this service: the only incoming UMA
// payments are the sandbox's simulated ones, from the reference's sandbox
// sender addresses ($<outcome>.<currency>@sandbox.uma.money). The sender
// address chooses the outcome:
//
//	$success.<ccy>      PENDING (INCOMING_PAYMENT.PENDING, waiting for the platform's approval);
//	                    approved: COMPLETED at once, credited
//	$pending.long.<ccy> PENDING as above; approved: PROCESSING for Config.LongPaymentDelay, then
//	                    COMPLETED and credited by the settlement worker
//	$fail.compliance.<ccy> FAILED at once with failureReason COMPLIANCE_REJECTED; nothing credited
//
// Approval: the reference's INCOMING_PAYMENT.PENDING webhook is an
// approval mechanism. This service delivers webhooks from its event log, after
// the transaction committed, so it does not read a decision from the
// webhook's answer: every PENDING incoming UMA payment waits for POST
// /transactions/{id}/approve or /reject. One not decided within
// Config.IncomingApprovalWindow is failed by the settlement worker with
// PAYMENT_APPROVAL_TIMED_OUT. A decision is a compare-and-set on the
// status PENDING: of two racing decisions (or a decision and the timeout)
// exactly one wins, the other is 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL.
//
// Where the money goes: the customer's external account marked
// defaultUmaDepositAccount (ACTIVE, in the receiving currency) when there is
// one, else the customer's internal account in the receiving currency. An
// external account is outside the service: crediting it means the payment
// completes with that account as its destination and no internal balance
// changes (there is no payout network behind this service either).

// CodeNotPendingApproval is the refusal of a decision about a transaction
// that is not waiting for the platform's approval.
const CodeNotPendingApproval = "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL"

// CodeUmaNotFound is an UMA address with no receiver (or sender) here.
const CodeUmaNotFound = "UMA_NOT_FOUND"

// Outcomes of a sandbox UMA sender, kept in store.Transaction.Outcome.
const (
	umaSuccess     = "uma-success"
	umaPendingLong = "uma-pending-long"
	umaCompliance  = "uma-fail-compliance"
)

// sandboxSender is a sandbox UMA sender address: outcome, currency.
var sandboxSender = regexp.MustCompile(`^\$(success|pending\.long|fail\.compliance)\.([a-z]{3})@sandbox\.(?:grid\.)?uma\.money$`)

// SandboxUmaReceiveRequest is the request of SandboxUmaReceive.
type SandboxUmaReceiveRequest struct {
	SenderUmaAddress        string `json:"senderUmaAddress"`
	ReceiverUmaAddress      string `json:"receiverUmaAddress,omitempty"`
	CustomerID              string `json:"customerId,omitempty"`
	ReceivingCurrencyCode   string `json:"receivingCurrencyCode"`
	ReceivingCurrencyAmount *int64 `json:"receivingCurrencyAmount"`
}

// ApprovePaymentRequest is the optional body of ApprovePayment.
type ApprovePaymentRequest struct {
	ReceiverCustomerInfo map[string]any `json:"receiverCustomerInfo,omitempty"`
}

// RejectPaymentRequest is the optional body of RejectPayment.
type RejectPaymentRequest struct {
	Reason string `json:"reason,omitempty"`
}

// SandboxUmaReceive simulates an incoming UMA payment from a sandbox sender
// to one of the platform's customers (see the comment above). It answers
// the INCOMING transaction: PENDING (waiting for approval) or FAILED
// (COMPLIANCE_REJECTED). 403 FORBIDDEN in production mode; 400 naming every
// bad field; 404 UMA_NOT_FOUND for a sender that is not a sandbox address
// or a receiverUmaAddress of no customer; 404 USER_NOT_FOUND for an
// unknown customerId.
//
// It runs under o's Idempotency-Key.
func (s *Service) SandboxUmaReceive(ctx context.Context, o Once, req SandboxUmaReceiveRequest) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.Transaction, error) { return s.sandboxUmaReceive(ctx, req, fin) })
}

func (s *Service) sandboxUmaReceive(ctx context.Context, req SandboxUmaReceiveRequest, fin *then) (wire.Transaction, error) {
	if s.mode != ModeSandbox {
		return wire.Transaction{}, ErrSandboxOnly
	}
	var fe fieldErrors
	switch {
	case req.SenderUmaAddress == "":
		fe.add("senderUmaAddress", "required")
	case !validUMA(req.SenderUmaAddress):
		fe.addConstraint("senderUmaAddress", "must be an UMA address such as $success.usd@sandbox.uma.money", wire.FieldConstraint{Pattern: umaPattern})
	}
	switch {
	case req.ReceiverUmaAddress == "" && req.CustomerID == "":
		fe.add("receiverUmaAddress", "required when customerId is not given")
		fe.add("customerId", "required when receiverUmaAddress is not given")
	default:
		if req.ReceiverUmaAddress != "" && !validUMA(req.ReceiverUmaAddress) {
			fe.addConstraint("receiverUmaAddress", "must be an UMA address such as $alice@example.com", wire.FieldConstraint{Pattern: umaPattern})
		}
		if req.CustomerID != "" && !ids.Valid("Customer", req.CustomerID) {
			fe.add("customerId", "must be a Customer:<uuid> id")
		}
	}
	if req.ReceivingCurrencyCode == "" {
		fe.add("receivingCurrencyCode", "required")
	} else if _, ok := s.rates.Currency(req.ReceivingCurrencyCode); !ok {
		fe.add("receivingCurrencyCode", "is not a currency this service offers")
	}
	switch {
	case req.ReceivingCurrencyAmount == nil:
		fe.add("receivingCurrencyAmount", "required")
	case *req.ReceivingCurrencyAmount <= 0 || *req.ReceivingCurrencyAmount > MaxSandboxFunding:
		fe.add("receivingCurrencyAmount", "must be an integer from 1 to "+strconv.Itoa(MaxSandboxFunding)+" (smallest unit of the receiving currency)")
	}
	if e := fe.err(); e != nil {
		return wire.Transaction{}, e
	}
	m := sandboxSender.FindStringSubmatch(strings.ToLower(req.SenderUmaAddress))
	if m == nil {
		return wire.Transaction{}, &Error{Code: CodeUmaNotFound, Message: "no sandbox sender has this address; use $success.<ccy>, $pending.long.<ccy> or $fail.compliance.<ccy> @sandbox.uma.money",
			Details: map[string]any{"field": "senderUmaAddress"}}
	}
	outcome := map[string]string{"success": umaSuccess, "pending.long": umaPendingLong, "fail.compliance": umaCompliance}[m[1]]
	sending := strings.ToUpper(m[2])
	amount := *req.ReceivingCurrencyAmount
	return commit(ctx, s, "", fin, func(tx store.Tx) (wire.Transaction, error) {
		cust, err := s.umaReceiver(ctx, tx, req.ReceiverUmaAddress, req.CustomerID)
		if err != nil {
			return wire.Transaction{}, err
		}
		dst, err := umaDestination(ctx, tx, cust.ID, req.ReceivingCurrencyCode)
		if err != nil {
			return wire.Transaction{}, err
		}
		now := s.now()
		id := ids.New("Transaction")
		x := &store.Transaction{
			ID: id, Type: "INCOMING", Status: "PENDING", CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
			DestinationAccountID: dst, SendingCurrency: sending, ReceivingCurrency: req.ReceivingCurrencyCode,
			ReceivedAmount: amount, Description: "Sandbox UMA payment", Outcome: outcome, Reference: reference(id),
			SenderUmaAddress: req.SenderUmaAddress, ReceiverUmaAddress: cust.UmaAddress,
			NextStepAt: now.Add(s.cfg.IncomingApprovalWindow), CreatedAt: now, UpdatedAt: now,
		}
		if outcome == umaCompliance {
			x.Status, x.FailureReason, x.NextStepAt = "FAILED", "COMPLIANCE_REJECTED", time.Time{}
		}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			return wire.Transaction{}, err
		}
		if err := s.emitTransfer(ctx, tx, x); err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(x), nil
	})
}

// umaReceiver is the customer an incoming UMA payment names, by UMA
// address, id, or both (which must agree).
func (s *Service) umaReceiver(ctx context.Context, tx store.Tx, uma, customerID string) (*store.Customer, error) {
	var cust *store.Customer
	var err error
	if customerID != "" {
		cust, err = tx.GetCustomer(ctx, customerID)
		if errors.Is(err, store.ErrNotFound) || err == nil && !cust.DeletedAt.IsZero() {
			return nil, errCustomerNotFound
		}
		if err != nil {
			return nil, err
		}
		if uma != "" && uma != cust.UmaAddress {
			return nil, invalidField("receiverUmaAddress", "is not the umaAddress of customerId")
		}
		return cust, nil
	}
	cust, err = tx.GetCustomerByUmaAddress(ctx, uma)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Code: CodeUmaNotFound, Message: "no customer of this platform has this UMA address",
			Details: map[string]any{"field": "receiverUmaAddress"}}
	}
	return cust, err
}

// umaDestination is the account an incoming UMA payment in currency goes
// to: the customer's ACTIVE defaultUmaDepositAccount in that currency, else
// its ACTIVE internal account in that currency.
func umaDestination(ctx context.Context, tx store.Tx, customerID, currency string) (string, error) {
	cursor := ""
	for {
		page, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: customerID, Limit: 100, Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, a := range page.Items {
			if a.DefaultUmaDepositAccount && a.Status == "ACTIVE" && a.Currency == currency {
				return a.ID, nil
			}
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	accts, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: customerID, Currency: currency, Limit: 100})
	if err != nil {
		return "", err
	}
	for _, a := range accts.Items {
		if a.Status == "ACTIVE" {
			return a.ID, nil
		}
	}
	return "", invalidField("receivingCurrencyCode", "the receiver has no ACTIVE account in "+currency+" to receive into")
}

// isInternal reports whether an account id is an internal account's.
func isInternal(accountID string) bool { return strings.HasPrefix(accountID, "InternalAccount:") }

// decidable loads an incoming UMA payment that is waiting for the
// platform's approval, or refuses.
func (s *Service) decidable(ctx context.Context, tx store.Tx, id string) (*store.Transaction, error) {
	x, err := loadTransaction(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if x.SenderUmaAddress == "" || x.Status != "PENDING" || !s.now().Before(x.NextStepAt) {
		status := x.Status
		if x.SenderUmaAddress != "" && status == "PENDING" {
			status = "TIMED_OUT"
		}
		return nil, &Error{Code: CodeNotPendingApproval, Message: "the transaction is not an incoming payment waiting for the platform's approval",
			Details: map[string]any{"status": status}}
	}
	return x, nil
}

// ApprovePayment approves an incoming UMA payment waiting for approval
// (POST /transactions/{transactionId}/approve): a $success sender's payment
// completes at once and is credited, a $pending.long one is PROCESSING until
// the settlement worker completes it. receiverCustomerInfo, when given,
// must be an object; there is no counterparty VASP to pass it to, so it
// is not kept.
func (s *Service) ApprovePayment(ctx context.Context, id string, req ApprovePaymentRequest) (wire.Transaction, error) {
	_ = req.ReceiverCustomerInfo
	return s.decide(ctx, id, func(x, next *store.Transaction, now time.Time) {
		if x.Outcome == umaPendingLong {
			next.Status, next.NextStepAt = "PROCESSING", now.Add(s.cfg.LongPaymentDelay)
			return
		}
		next.Status, next.SettledAt = "COMPLETED", now
	})
}

// RejectPayment rejects an incoming UMA payment waiting for approval (POST
// /transactions/{transactionId}/reject): it ends REJECTED (webhook
// INCOMING_PAYMENT.FAILED), nothing credited; reason (at most 255
// characters) is logged.
func (s *Service) RejectPayment(ctx context.Context, id string, req RejectPaymentRequest) (wire.Transaction, error) {
	if len(req.Reason) > 255 {
		return wire.Transaction{}, invalidField("reason", "must be at most 255 characters")
	}
	out, err := s.decide(ctx, id, func(x, next *store.Transaction, now time.Time) {
		next.Status = "REJECTED"
	})
	if err == nil {
		s.log.InfoContext(ctx, "incoming payment rejected", "transaction", id, "reason", req.Reason)
	}
	return out, err
}

// decide applies a decision to a payment waiting for approval, as a
// compare-and-set on PENDING, crediting an internal destination when the
// payment completes, with its events.
func (s *Service) decide(ctx context.Context, id string, apply func(x, next *store.Transaction, now time.Time)) (wire.Transaction, error) {
	// The credit moves the destination's balance: take its turn.
	x0, err := read(ctx, s, func(tx store.Tx) (*store.Transaction, error) { return s.decidable(ctx, tx, id) })
	if err != nil {
		return wire.Transaction{}, err
	}
	return commit(ctx, s, x0.DestinationAccountID, nil, func(tx store.Tx) (wire.Transaction, error) {
		x, err := s.decidable(ctx, tx, id)
		if err != nil {
			return wire.Transaction{}, err
		}
		now := s.now()
		next := *x
		next.UpdatedAt, next.NextStepAt = now, time.Time{}
		apply(x, &next, now)
		won, err := tx.AdvanceTransaction(ctx, &next, "PENDING")
		if err != nil {
			return wire.Transaction{}, err
		}
		if !won {
			return wire.Transaction{}, &Error{Code: CodeNotPendingApproval, Message: "another decision about this transaction came first"}
		}
		credited := next.Status == "COMPLETED" && isInternal(x.DestinationAccountID)
		if credited {
			if err := s.creditIncoming(ctx, tx, x, now); err != nil {
				return wire.Transaction{}, err
			}
		}
		if err := s.emitTransfer(ctx, tx, &next); err != nil {
			return wire.Transaction{}, err
		}
		if credited {
			if err := s.emitBalance(ctx, tx, x.DestinationAccountID); err != nil {
				return wire.Transaction{}, err
			}
		}
		return s.transactionJSON(&next), nil
	})
}

// incomingUmaStep is the settlement worker's due step of an incoming UMA
// payment:
//
//	PENDING    → FAILED PAYMENT_APPROVAL_TIMED_OUT  not decided within Config.IncomingApprovalWindow
//	PROCESSING → COMPLETED                        ($pending.long, approved) an internal destination is credited
func (s *Service) incomingUmaStep(ctx context.Context, tx store.Tx, x, next *store.Transaction, now time.Time) func() error {
	switch x.Status {
	case "PENDING":
		next.Status, next.FailureReason = "FAILED", "PAYMENT_APPROVAL_TIMED_OUT"
	case "PROCESSING":
		next.Status, next.SettledAt = "COMPLETED", now
		if isInternal(x.DestinationAccountID) {
			return func() error { return s.creditIncoming(ctx, tx, x, now) }
		}
	}
	return nil
}

// ReceiverUmaLookup is the answer of LookupUma (the reference's
// ReceiverUmaLookupResponse).
type ReceiverUmaLookup struct {
	ReceiverUmaAddress      string                             `json:"receiverUmaAddress"`
	SupportedCurrencies     []wire.CurrencyPreference          `json:"supportedCurrencies"`
	RequiredPayerDataFields []wire.CounterpartyFieldDefinition `json:"requiredPayerDataFields,omitempty"`
	LookupID                string                             `json:"lookupId"`
}

// UmaLookupRequest is the request of LookupUma.
type UmaLookupRequest struct {
	ReceiverUmaAddress string `path:"receiverUmaAddress"` // the path's
	CustomerID         string `query:"customerId"`        // the sender; required
	SenderUmaAddress   string `query:"senderUmaAddress"`  // optional; must be the customer's umaAddress
}

// LookupUma answers GET /receiver/uma/{receiverUmaAddress}: what one of the
// platform's own customers can receive over UMA (the currencies of the
// accounts an incoming UMA payment can go to: its ACTIVE internal accounts
// and its defaultUmaDepositAccount), priced from the sender's currency. The
// sender is a customer (customerId, as for the external-account lookup). An
// address of no customer here is 404 UMA_NOT_FOUND: this service is on no
// UMA network, so it cannot look up other VASPs' receivers.
func (s *Service) LookupUma(ctx context.Context, req UmaLookupRequest) (ReceiverUmaLookup, error) {
	var fe fieldErrors
	switch {
	case req.CustomerID == "":
		fe.add("customerId", "required: this service's senders are its customers, named by customerId")
	case !ids.Valid("Customer", req.CustomerID):
		fe.add("customerId", "must be a Customer:<uuid> id")
	}
	if req.SenderUmaAddress != "" && !validUMA(req.SenderUmaAddress) {
		fe.addConstraint("senderUmaAddress", "must be an UMA address such as $alice@example.com", wire.FieldConstraint{Pattern: umaPattern})
	}
	if !validUMA(req.ReceiverUmaAddress) {
		fe.addConstraint("receiverUmaAddress", "must be an UMA address such as $alice@example.com", wire.FieldConstraint{Pattern: umaPattern})
	}
	if e := fe.err(); e != nil {
		return ReceiverUmaLookup{}, e
	}
	type found struct {
		sending    string
		receiver   string
		currencies []string
	}
	got, err := read(ctx, s, func(tx store.Tx) (found, error) {
		cust, err := tx.GetCustomer(ctx, req.CustomerID)
		if errors.Is(err, store.ErrNotFound) || err == nil && !cust.DeletedAt.IsZero() {
			return found{}, errCustomerNotFound
		} else if err != nil {
			return found{}, err
		}
		if req.SenderUmaAddress != "" && req.SenderUmaAddress != cust.UmaAddress {
			return found{}, invalidField("senderUmaAddress", "is not the umaAddress of customerId")
		}
		src, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: cust.ID, Limit: 1})
		if err != nil {
			return found{}, err
		}
		if len(src.Items) == 0 {
			return found{}, invalidField("customerId", "the customer has no internal account to pay from")
		}
		recv, err := tx.GetCustomerByUmaAddress(ctx, req.ReceiverUmaAddress)
		if errors.Is(err, store.ErrNotFound) {
			return found{}, &Error{Code: CodeUmaNotFound, Message: "no customer of this platform has this UMA address; this service is on no UMA network",
				Details: map[string]any{"field": "receiverUmaAddress"}}
		} else if err != nil {
			return found{}, err
		}
		var out []string
		add := func(c string) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		ext, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: recv.ID, Limit: 100})
		if err != nil {
			return found{}, err
		}
		for _, a := range ext.Items {
			if a.DefaultUmaDepositAccount && a.Status == "ACTIVE" {
				add(a.Currency)
			}
		}
		in, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: recv.ID, Limit: 100})
		if err != nil {
			return found{}, err
		}
		for _, a := range in.Items {
			if a.Status == "ACTIVE" {
				add(a.Currency)
			}
		}
		return found{sending: src.Items[0].Currency, receiver: recv.UmaAddress, currencies: out}, nil
	})
	if err != nil {
		return ReceiverUmaLookup{}, err
	}
	out := ReceiverUmaLookup{ReceiverUmaAddress: got.receiver, SupportedCurrencies: []wire.CurrencyPreference{}}
	for _, c := range got.currencies {
		pref, err := s.currencyPreference(got.sending, &store.ExternalAccount{Currency: c})
		if err != nil {
			continue // no corridor from the sender's currency: not offered
		}
		out.SupportedCurrencies = append(out.SupportedCurrencies, pref)
	}
	if out.LookupID, err = s.lookupID(req.CustomerID, "uma:"+got.receiver); err != nil {
		return ReceiverUmaLookup{}, err
	}
	return out, nil
}

// creditIncoming credits an incoming UMA payment to its internal
// destination: the amount received arrived through the payment's rail
// (the network's clearing without one), in the wallet's currency; what the
// sender paid in theirs was converted before it reached us.
func (s *Service) creditIncoming(ctx context.Context, tx store.Tx, x *store.Transaction, now time.Time) error {
	lt := ledger.New(newLedgerID(), ledger.KindIncoming, now, describe("Payment received", x)).For(x.ID, x.QuoteID).
		Move(ledger.Clearing(x.PaymentRail, x.ReceivingCurrency), x.ReceivingCurrency, x.ReceivedAmount,
			ledger.WalletAccount(x.DestinationAccountID, ledger.Available), x.ReceivingCurrency, x.ReceivedAmount)
	return post(ctx, tx, lt)
}
