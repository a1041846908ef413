package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// The sandbox's event trigger (POST /sandbox/events/trigger): a developer
// testing a webhook receiver asks for an event of a type, and the service
// makes one happen through its ordinary operations, the same code paths
// a platform's calls take, so the event that arrives is exactly what
// production sends for that change (its data, its sequence, its
// signatures). No event row is fabricated: for OUTGOING_PAYMENT.COMPLETED
// a payment is really quoted, executed and then settled by the settlement
// worker.
//
// Behind it is one dedicated sandbox customer, found by its
// platformCustomerId (triggerCustomerID) and created on first use, with a
// funded embedded wallet, ACTIVE external accounts whose account numbers
// choose the sandbox outcomes (outcomeOf), and an agent whose every
// execute needs the platform's approval. Everything it creates is an
// ordinary resource of the platform, listed like any other.

// triggerCustomerID is the platformCustomerId of the trigger's customer.
const triggerCustomerID = "sandbox-events-trigger"

// Amounts the trigger moves, in the smallest unit of the wallet currency.
const (
	triggerPayment = 1_000     // one payment (10.00)
	triggerFunding = 1_000_000 // the wallet is topped up by this
	triggerLow     = 10 * triggerPayment
)

// The destinations of the trigger's payments, by the last digits of
// their account numbers (see outcomeOf): an ordinary one, one whose
// payout fails (004), one whose payment comes back (005).
const (
	destOrdinary = "12345"
	destFails    = "12004"
	destReturns  = "12005"
)

// TriggerEventRequest is the body of POST /sandbox/events/trigger.
type TriggerEventRequest struct {
	Type string `json:"type"`
}

// TriggeredEvent is the answer of a trigger: the type asked for, the
// resource the event is about (its data.id) and when it arrives.
type TriggeredEvent struct {
	Type       string `json:"type"`
	ResourceID string `json:"resourceId"`
	Message    string `json:"message"`
}

// TriggerSandboxEvent makes the service emit an event of the type (POST
// /sandbox/events/trigger, sandbox mode only) through its own operations
// and answers the resource it is about and when it will be sent: at once
// for a change the request itself makes, after settlement for a payment's
// outcome, at the quote's expiry for OUTGOING_PAYMENT.EXPIRED. The
// operations make their other events too (the quote that precedes a
// PROCESSING payment sends OUTGOING_PAYMENT.PENDING, a funding sends both
// INCOMING_PAYMENT.COMPLETED and INTERNAL_ACCOUNT.BALANCE_UPDATED): an
// endpoint that wants every type receives them all.
func (s *Service) TriggerSandboxEvent(ctx context.Context, req TriggerEventRequest) (TriggeredEvent, error) {
	if s.mode != ModeSandbox {
		return TriggeredEvent{}, ErrSandboxOnly
	}
	if err := checkTriggerType(req.Type); err != nil {
		return TriggeredEvent{}, err
	}
	out := TriggeredEvent{Type: req.Type, Message: "sent now"}
	var err error
	switch req.Type {
	case eventKYCApproved, eventKYCPending, eventKYCRejected, eventKYBApproved, eventKYBPending, eventKYBRejected:
		out.ResourceID, err = s.triggerVerification(ctx, req.Type)
	case webhooksig.InternalAccountStatusUpdated:
		out.ResourceID, err = s.triggerNewWallet(ctx)
		out.Message = "sent now: a new sandbox customer's embedded wallet was created ACTIVE"
	case webhooksig.ExternalAccountStatusUpdated:
		out.ResourceID, err = s.triggerExternalAccount(ctx)
		out.Message = "sent now (the account is PENDING); the verifier makes it ACTIVE within about a second and sends another"
	case webhooksig.IncomingPaymentCompleted, webhooksig.InternalAccountBalanceUpdated:
		out.ResourceID, err = s.triggerFunding(ctx, req.Type)
	case "INCOMING_PAYMENT.PENDING", "INCOMING_PAYMENT.FAILED":
		out.ResourceID, out.Message, err = s.triggerIncoming(ctx, req.Type)
	case agentActionPendingApproval:
		out.ResourceID, err = s.triggerAgentAction(ctx)
		out.Message = "sent now: approve or reject the action with POST /agents/{agentId}/actions/{actionId}/approve or /reject"
	default: // OUTGOING_PAYMENT.*
		out.ResourceID, out.Message, err = s.triggerPayment(ctx, req.Type)
	}
	if err != nil {
		return TriggeredEvent{}, err
	}
	return out, nil
}

// checkTriggerType refuses a type that is missing or not one of
// EventTypes, naming the field type.
func checkTriggerType(typ string) error {
	var fe fieldErrors
	if typ == "" {
		fe.addConstraint("type", "required: the event type to trigger", wire.FieldConstraint{Enum: EventTypes})
		return fe.err()
	}
	var inner fieldErrors
	checkEventTypes(&inner, "type", []string{typ}, false)
	for _, e := range inner {
		// checkEventTypes names list items (type[0]); the body has one.
		e.Field = "type"
		fe = append(fe, e)
	}
	if e := fe.err(); e != nil {
		return e
	}
	return nil
}

// ---- the trigger's customer

// triggerKit is the trigger's customer and its wallet.
type triggerKit struct {
	customer *store.Customer
	wallet   *store.InternalAccount
}

// kit finds the trigger's customer by its platformCustomerId, creating
// it (with its embedded wallet, funded) on first use, and tops the wallet
// up when a payment would leave it short. Two first uses at once: one
// creates, the other's create conflicts and it reads the winner's.
func (s *Service) kit(ctx context.Context) (*triggerKit, error) {
	k, err := s.findKit(ctx)
	if err != nil {
		return nil, err
	}
	if k == nil {
		_, err := s.CreateCustomer(ctx, wire.CustomerCreateRequest{PlatformCustomerID: triggerCustomerID,
			CustomerType: "INDIVIDUAL", FullName: "Sandbox Event Trigger", Email: "sandbox-events-trigger@example.com"})
		var pe *Error
		if err != nil && !(errors.As(err, &pe) && pe.Code == CodeConflict) {
			return nil, internalStep("payments: create the trigger's customer", err)
		}
		if k, err = s.findKit(ctx); err != nil {
			return nil, err
		}
		if k == nil {
			return nil, errors.New("payments: the trigger's customer has no embedded wallet")
		}
	}
	if k.wallet.Available < triggerLow {
		if _, err := s.fundSandbox(ctx, k.wallet.ID, FundRequest{Amount: new(int64(triggerFunding))}, nil); err != nil {
			return nil, internalStep("payments: fund the trigger's wallet", err)
		}
	}
	return k, nil
}

// findKit reads the trigger's customer and its wallet; nil when there is
// no such customer yet.
func (s *Service) findKit(ctx context.Context) (*triggerKit, error) {
	return read(ctx, s, func(tx store.Tx) (*triggerKit, error) {
		page, err := tx.ListCustomers(ctx, store.CustomerFilter{PlatformCustomerID: triggerCustomerID, Limit: 1})
		if err != nil || len(page.Items) == 0 {
			return nil, err
		}
		c := page.Items[0]
		accts, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: c.ID, Type: "EMBEDDED_WALLET", Limit: 1})
		if err != nil || len(accts.Items) == 0 {
			return nil, err
		}
		return &triggerKit{customer: &c, wallet: &accts.Items[0]}, nil
	})
}

// destination is the kit's ACTIVE external account whose account number
// ends in suffix, created and verified on first use.
func (s *Service) destination(ctx context.Context, k *triggerKit, suffix string) (string, error) {
	ref := "sandbox-trigger-" + suffix
	find := func() (string, error) {
		return read(ctx, s, func(tx store.Tx) (string, error) {
			page, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: k.customer.ID, Limit: 100})
			if err != nil {
				return "", err
			}
			for _, a := range page.Items {
				if a.PlatformAccountID == ref && a.Status == "ACTIVE" {
					return a.ID, nil
				}
			}
			return "", nil
		})
	}
	if id, err := find(); err != nil || id != "" {
		return id, err
	}
	a, err := s.CreateExternalAccount(ctx, ExternalAccountRequest{Body: triggerAccountBody(k.customer.ID, "0000000"+suffix, ref)})
	var pe *Error
	switch {
	case errors.As(err, &pe) && pe.Code == CodeConflict:
		// Created meanwhile (or left PENDING by a call that failed
		// after its creation): verify whatever is there.
		return s.verifyKitAccount(ctx, k, ref, find)
	case err != nil:
		return "", internalStep("payments: create the trigger's destination "+suffix, err)
	}
	if err := s.verifyOne(ctx, a.ID); err != nil {
		return "", err
	}
	return find()
}

// verifyKitAccount verifies the kit's PENDING account with the reference
// and answers it once ACTIVE.
func (s *Service) verifyKitAccount(ctx context.Context, k *triggerKit, ref string, find func() (string, error)) (string, error) {
	pending, err := read(ctx, s, func(tx store.Tx) (string, error) {
		page, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: k.customer.ID, Limit: 100})
		if err != nil {
			return "", err
		}
		for _, a := range page.Items {
			if a.PlatformAccountID == ref && a.Status == "PENDING" {
				return a.ID, nil
			}
		}
		return "", nil
	})
	if err != nil {
		return "", err
	}
	if pending != "" {
		if err := s.verifyOne(ctx, pending); err != nil {
			return "", err
		}
	}
	id, err := find()
	if err == nil && id == "" {
		err = errors.New("payments: the trigger's destination " + ref + " is not ACTIVE")
	}
	return id, err
}

// triggerAccountBody is the create body of a USD bank account of the
// customer with the account number.
func triggerAccountBody(customerID, number, ref string) map[string]any {
	b := map[string]any{
		"currency": "USD",
		"accountInfo": map[string]any{
			"accountType":     "USD_ACCOUNT",
			"accountNumber":   number,
			"routingNumber":   "021000021",
			"bankAccountType": "CHECKING",
			"bankName":        "Chase Bank",
			"beneficiary": map[string]any{
				"beneficiaryType": "INDIVIDUAL",
				"fullName":        "Sandbox Event Trigger",
				"address":         map[string]any{"line1": "1 Main Street", "city": "Springfield", "postalCode": "62701", "country": "US"},
			},
		},
	}
	if customerID != "" {
		b["customerId"] = customerID
	}
	if ref != "" {
		b["platformAccountId"] = ref
	}
	return b
}

// ---- the triggers

// triggerVerification creates a sandbox customer whose name (KYC) or
// registration number (KYB) ends in the digits that give the status
// (sandboxKYC): its creation sends the CUSTOMER.* event of the status.
func (s *Service) triggerVerification(ctx context.Context, typ string) (string, error) {
	suffix := map[string]string{eventKYCApproved: "", eventKYCPending: " 001", eventKYCRejected: " 002",
		eventKYBApproved: "", eventKYBPending: "-001", eventKYBRejected: "-002"}[typ]
	req := wire.CustomerCreateRequest{CustomerType: "INDIVIDUAL", FullName: "Sandbox Trigger" + suffix}
	if strings.HasPrefix(typ, "CUSTOMER.KYB_") {
		req = wire.CustomerCreateRequest{CustomerType: "BUSINESS", BusinessInfo: &wire.BusinessInfo{
			LegalName: "Sandbox Trigger Inc.", Country: "US", TaxID: "12-3456789", IncorporatedOn: "2020-01-01",
			RegistrationNumber: "SBX-" + randomDigits(6) + suffix}}
	}
	c, err := s.CreateCustomer(ctx, req)
	return c.ID, err
}

// triggerNewWallet creates a sandbox customer with an e-mail: its
// embedded wallet is created ACTIVE, with INTERNAL_ACCOUNT.STATUS_UPDATED.
func (s *Service) triggerNewWallet(ctx context.Context) (string, error) {
	c, err := s.CreateCustomer(ctx, wire.CustomerCreateRequest{CustomerType: "INDIVIDUAL", FullName: "Sandbox Trigger",
		Email: "sandbox-trigger-" + randomDigits(10) + "@example.com"})
	if err != nil {
		return "", err
	}
	return read(ctx, s, func(tx store.Tx) (string, error) {
		accts, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: c.ID, Type: "EMBEDDED_WALLET", Limit: 1})
		if err != nil {
			return "", err
		}
		if len(accts.Items) == 0 {
			return "", errors.New("payments: the new customer has no embedded wallet")
		}
		return accts.Items[0].ID, nil
	})
}

// triggerExternalAccount creates a bank account of the trigger's customer
// (a new account number each time: the same one twice is a duplicate).
func (s *Service) triggerExternalAccount(ctx context.Context) (string, error) {
	k, err := s.kit(ctx)
	if err != nil {
		return "", err
	}
	// Ending in 100: no sandbox pattern of the verifier or the payouts.
	a, err := s.CreateExternalAccount(ctx, ExternalAccountRequest{Body: triggerAccountBody(k.customer.ID, randomDigits(9)+"100", "")})
	return a.ID, err
}

// triggerFunding funds the trigger's wallet (FundSandbox): a COMPLETED
// INCOMING transaction and the wallet's new balance. The resource is the
// transaction for INCOMING_PAYMENT.COMPLETED, the wallet for
// INTERNAL_ACCOUNT.BALANCE_UPDATED.
func (s *Service) triggerFunding(ctx context.Context, typ string) (string, error) {
	k, err := s.kit(ctx)
	if err != nil {
		return "", err
	}
	var txID string
	// The funding's transaction, read in the funding's own store
	// transaction: the newest INCOMING one of the wallet.
	find := &then{run: func(ctx context.Context, tx store.Tx, _ any) error {
		page, err := tx.ListTransactions(ctx, store.TransactionFilter{AccountID: k.wallet.ID, Type: "INCOMING", Descending: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(page.Items) == 1 {
			txID = page.Items[0].ID
		}
		return nil
	}}
	if _, err := s.fundSandbox(ctx, k.wallet.ID, FundRequest{Amount: new(int64(triggerPayment))}, find); err != nil {
		return "", err
	}
	if typ == webhooksig.InternalAccountBalanceUpdated {
		return k.wallet.ID, nil
	}
	return txID, nil
}

// triggerIncoming simulates an incoming UMA payment to the trigger's
// customer from the sandbox sender that gives the outcome: $success waits
// for the platform's approval (PENDING), $fail.compliance fails at once.
func (s *Service) triggerIncoming(ctx context.Context, typ string) (string, string, error) {
	k, err := s.kit(ctx)
	if err != nil {
		return "", "", err
	}
	ccy := s.cfg.WalletCurrency
	sender, msg := "$fail.compliance."+strings.ToLower(ccy)+"@sandbox.uma.money", "sent now: the payment failed with COMPLIANCE_REJECTED"
	if typ == "INCOMING_PAYMENT.PENDING" {
		sender = "$success." + strings.ToLower(ccy) + "@sandbox.uma.money"
		msg = "sent now: the payment waits for POST /transactions/{transactionId}/approve or /reject; undecided, it fails (INCOMING_PAYMENT.FAILED) after " +
			durationWords(s.cfg.IncomingApprovalWindow)
	}
	x, err := s.sandboxUmaReceive(ctx, SandboxUmaReceiveRequest{SenderUmaAddress: sender, CustomerID: k.customer.ID,
		ReceivingCurrencyCode: ccy, ReceivingCurrencyAmount: new(int64(triggerPayment))}, nil)
	return x.ID, msg, err
}

// triggerPayment quotes a payment from the trigger's wallet, and executes
// it for every type but PENDING and EXPIRED, to the destination whose
// outcome gives the type. The resource is the payment's transaction.
func (s *Service) triggerPayment(ctx context.Context, typ string) (string, string, error) {
	k, err := s.kit(ctx)
	if err != nil {
		return "", "", err
	}
	suffix := destOrdinary
	switch typ {
	case webhooksig.OutgoingPaymentFailed:
		suffix = destFails
	case webhooksig.OutgoingPaymentRefundCompleted:
		suffix = destReturns
	}
	dest, err := s.destination(ctx, k, suffix)
	if err != nil {
		return "", "", err
	}
	q, err := s.createQuote(ctx, s.triggerQuote(k, dest), nil)
	if err != nil {
		return "", "", err
	}
	expires, _ := time.Parse(time.RFC3339Nano, q.ExpiresAt)
	switch typ {
	case webhooksig.OutgoingPaymentPending:
		return q.TransactionID, "sent now: quote " + q.ID + " was created; unexecuted, it expires at " + q.ExpiresAt +
			" (OUTGOING_PAYMENT.EXPIRED)", nil
	case webhooksig.OutgoingPaymentExpired:
		return q.TransactionID, "quote " + q.ID + " is left to expire: sent at its expiresAt, " + q.ExpiresAt + " (in " +
			durationWords(expires.Sub(s.now())) + "), when the settlement worker records the expiry", nil
	}
	if _, err := s.executeQuote(ctx, q.ID, wire.SandboxSignature, false, nil); err != nil {
		return "", "", err
	}
	settle := s.settleAfter(q.Destination.PaymentRail, strings.TrimPrefix(suffix, "12"))
	switch typ {
	case webhooksig.OutgoingPaymentProcessing:
		return q.TransactionID, "sent now: the payment was executed; it settles (OUTGOING_PAYMENT.COMPLETED) within " +
			durationWords(settle), nil
	case webhooksig.OutgoingPaymentRefundCompleted:
		return q.TransactionID, "after settlement: the payment completes within " + durationWords(settle) +
			" and comes back (REFUNDED) " + durationWords(settle) + " later; the settlement worker sends both", nil
	}
	return q.TransactionID, "after settlement, within " + durationWords(settle) + ": the settlement worker sends it", nil
}

// triggerQuote is the request of a trigger's payment to dest.
func (s *Service) triggerQuote(k *triggerKit, dest string) QuoteRequest {
	return QuoteRequest{
		Source:               &wire.QuoteSource{SourceType: "ACCOUNT", AccountID: k.wallet.ID},
		Destination:          &wire.QuoteDestination{DestinationType: "ACCOUNT", AccountID: dest},
		LockedCurrencySide:   "SENDING",
		LockedCurrencyAmount: new(int64(triggerPayment)),
		Description:          "Sandbox event trigger",
	}
}

// triggerAgentName names the trigger's agent among the customer's agents.
const triggerAgentName = "Sandbox event trigger"

// triggerAgentAction has the trigger's agent (every execute needs the
// platform's approval) quote a payment and execute it: the execute waits
// as an AgentAction in PENDING_APPROVAL.
func (s *Service) triggerAgentAction(ctx context.Context) (string, error) {
	k, err := s.kit(ctx)
	if err != nil {
		return "", err
	}
	dest, err := s.destination(ctx, k, destOrdinary)
	if err != nil {
		return "", err
	}
	agent, err := s.triggerAgent(ctx, k)
	if err != nil {
		return "", err
	}
	q, err := s.agentCreateQuote(ctx, agent, s.triggerQuote(k, dest), nil)
	if err != nil {
		return "", err
	}
	a, err := s.agentExecuteQuote(ctx, agent, q.ID, wire.SandboxSignature, nil)
	if err != nil {
		return "", err
	}
	if a.Status != "PENDING_APPROVAL" {
		return "", errors.New("payments: the trigger agent's execute is " + a.Status + ", not PENDING_APPROVAL")
	}
	return a.ID, nil
}

// triggerAgent is the trigger's agent, created on first use.
func (s *Service) triggerAgent(ctx context.Context, k *triggerKit) (*store.Agent, error) {
	find := func() (*store.Agent, error) {
		return read(ctx, s, func(tx store.Tx) (*store.Agent, error) {
			page, err := tx.ListAgents(ctx, store.AgentFilter{CustomerID: k.customer.ID, Limit: 100})
			if err != nil {
				return nil, err
			}
			for i := range page.Items {
				if page.Items[i].Name == triggerAgentName {
					return &page.Items[i], nil
				}
			}
			return nil, nil
		})
	}
	if a, err := find(); err != nil || a != nil {
		return a, err
	}
	policy, err := json.Marshal(map[string]any{
		"permissions":          []string{"CREATE_QUOTES", "EXECUTE_QUOTES"},
		"defaultExecutionMode": "APPROVAL_REQUIRED",
		"spendingLimits":       map[string]any{"currency": s.cfg.WalletCurrency, "perTransactionLimit": 100 * triggerPayment},
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.CreateAgent(ctx, AgentRequest{CustomerID: k.customer.ID, Name: triggerAgentName, Policy: policy}); err != nil {
		return nil, internalStep("payments: create the trigger's agent", err)
	}
	a, err := find()
	if err == nil && a == nil {
		err = errors.New("payments: the trigger's agent was not found after its creation")
	}
	return a, err
}

// randomDigits is n random decimal digits.
func randomDigits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rand.N(10))
	}
	return string(b)
}

// durationWords is d rounded up to whole seconds, as "N s".
func durationWords(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return fmt.Sprintf("%d s", secs)
}
