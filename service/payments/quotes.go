package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/rates"
	"paywallet/service/store"
	"paywallet/shared/accountrules"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// Quotes and their execution (grid-api-facts §3.6).
//
// POST /quotes prices a payment from an internal account to an ACTIVE
// external account of the same customer with the rates source, and stores
// the quote together with its transaction (status PENDING) in one store
// transaction. The quote itself never changes afterwards: its status is
// read from the transaction (see quoteStatus). For an embedded-wallet
// source the quote carries a payloadToSign; POST /quotes/{id}/execute needs
// a stamp over it by an active session of that wallet, takes the money from
// the available balance into held, and moves the transaction to PROCESSING,
// all in one store transaction guarded by a compare-and-set on the status.

// maxLockedAmount is the reference API's maximum of lockedCurrencyAmount.
const maxLockedAmount = 9_000_000_000_000_000

// purposes are the reference API's purposeOfPayment values.
var purposes = []string{"GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL", "REAL_ESTATE_PURCHASE",
	"TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL", "FAMILY_SUPPORT", "SALARY_PAYMENT", "OTHER"}

// paymentRailNames is the reference API's PaymentRail enum.
var paymentRailNames = []string{"ACH", "ACH_COLOMBIA", "BANK_TRANSFER", "BRE_B", "CIPS", "FAST", "FASTER_PAYMENTS",
	"FEDNOW", "INSTAPAY", "MOBILE_MONEY", "NEFT", "PAYNOW", "PESONET", "PIX", "RTGS", "RTP", "SEPA", "SEPA_INSTANT",
	"SPEI", "SWIFT", "UNIONPAY", "UPI", "WIRE"}

// QuoteRequest is the request of CreateQuote (the body of POST /quotes):
// the wire shape plus the optional members the service accepts and checks.
type QuoteRequest struct {
	Source                *wire.QuoteSource      `json:"source"`
	Destination           *wire.QuoteDestination `json:"destination"`
	LockedCurrencySide    string                 `json:"lockedCurrencySide"`
	LockedCurrencyAmount  *int64                 `json:"lockedCurrencyAmount"`
	Description           string                 `json:"description"`
	ImmediatelyExecute    bool                   `json:"immediatelyExecute"`
	PurposeOfPayment      string                 `json:"purposeOfPayment"`
	RemittanceInformation string                 `json:"remittanceInformation"`
	// LookupID is the lookupId of GET /receiver/external-account/{accountId}
	// for the source's customer and the destination (see receiver.go).
	LookupID string `json:"lookupId"`
}

// check names every bad member.
func (q *QuoteRequest) check() fieldErrors {
	var fe fieldErrors
	switch {
	case q.Source == nil:
		fe.add("source", "required")
	default:
		switch q.Source.SourceType {
		case "":
			fe.add("source.sourceType", "required")
		case "ACCOUNT":
		case "REALTIME_FUNDING":
			q.checkRealtime(&fe)
		default:
			fe.addConstraint("source.sourceType", "must be ACCOUNT or REALTIME_FUNDING", wire.FieldConstraint{Enum: []string{"ACCOUNT", "REALTIME_FUNDING"}})
		}
		if q.Source.SourceType == "ACCOUNT" || q.Source.SourceType == "" {
			if !ids.Valid("InternalAccount", q.Source.AccountID) {
				fe.add("source.accountId", "must be an InternalAccount:<uuid> id")
			}
			if q.Source.Currency != "" {
				fe.add("source.currency", "is not taken with an ACCOUNT source; the account's currency is used")
			}
		}
		if q.Source.CustomerID != "" && !ids.Valid("Customer", q.Source.CustomerID) {
			fe.add("source.customerId", "must be a Customer:<uuid> id")
		}
	}
	switch {
	case q.Destination == nil:
		fe.add("destination", "required")
	default:
		switch q.Destination.DestinationType {
		case "":
			fe.add("destination.destinationType", "required")
		case "ACCOUNT":
			if q.Destination.UmaAddress != "" {
				fe.add("destination.umaAddress", "is taken only with an UMA_ADDRESS destination, which this service does not offer")
			}
		case "UMA_ADDRESS":
			fe.add("destination.destinationType", "UMA_ADDRESS destinations are not offered by this service; pay an external account (ACCOUNT)")
		default:
			fe.addConstraint("destination.destinationType", "must be ACCOUNT", wire.FieldConstraint{Enum: []string{"ACCOUNT"}})
		}
		if q.Destination.DestinationType != "UMA_ADDRESS" && !ids.Valid("ExternalAccount", q.Destination.AccountID) {
			fe.add("destination.accountId", "must be an ExternalAccount:<uuid> id")
		}
		if r := q.Destination.PaymentRail; r != "" && !slices.Contains(paymentRailNames, r) {
			fe.addConstraint("destination.paymentRail", "is not a payment rail", wire.FieldConstraint{Enum: paymentRailNames})
		}
	}
	switch q.LockedCurrencySide {
	case "":
		fe.add("lockedCurrencySide", "required")
	case string(rates.SideSending), string(rates.SideReceiving):
	default:
		fe.addConstraint("lockedCurrencySide", "must be SENDING or RECEIVING", wire.FieldConstraint{Enum: []string{"SENDING", "RECEIVING"}})
	}
	switch {
	case q.LockedCurrencyAmount == nil:
		fe.add("lockedCurrencyAmount", "required")
	case *q.LockedCurrencyAmount <= 0 || *q.LockedCurrencyAmount > maxLockedAmount:
		fe.add("lockedCurrencyAmount", "must be an integer from 1 to 9000000000000000 (smallest unit of the locked side's currency)")
	}
	if len([]rune(q.Description)) > 255 || !plainText(q.Description) {
		fe.add("description", "must be at most 255 characters of text without control characters")
	}
	if q.PurposeOfPayment != "" && !slices.Contains(purposes, q.PurposeOfPayment) {
		fe.addConstraint("purposeOfPayment", "is not a purpose of payment", wire.FieldConstraint{Enum: purposes})
	}
	if len([]rune(q.RemittanceInformation)) > 80 || !plainText(q.RemittanceInformation) {
		fe.add("remittanceInformation", "must be at most 80 characters of text without control characters")
	}
	if q.LookupID != "" && !ids.Valid("Lookup", q.LookupID) {
		fe.add("lookupId", "must be a Lookup:<uuid> id as GET /receiver/external-account/{accountId} answers it")
	}
	return fe
}

// plainText refuses control characters (a memo is one line of text).
func plainText(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// CreateQuote prices a payment (POST /quotes) and stores the quote with
// its PENDING transaction, under o's Idempotency-Key.
func (s *Service) CreateQuote(ctx context.Context, o Once, req QuoteRequest) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.Quote, error) { return s.createQuote(ctx, req, fin) })
}

// createQuote is CreateQuote with fin run in its commit.
func (s *Service) createQuote(ctx context.Context, req QuoteRequest, fin *then) (wire.Quote, error) {
	if e := req.check().err(); e != nil {
		return wire.Quote{}, e
	}
	return commit(ctx, s, "", fin, func(tx store.Tx) (wire.Quote, error) {
		q, x, err := s.priceQuote(ctx, tx, &req)
		if err != nil {
			return wire.Quote{}, err
		}
		if q.FundingReference == "" {
			// A wallet's personal limits (limits.go); a just-in-time
			// funded quote takes nothing from an internal account.
			if err := s.checkLimits(ctx, tx, q.SourceAccountID, q.DestinationAccountID, q.TotalSendingAmount); err != nil {
				return wire.Quote{}, err
			}
		}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			return wire.Quote{}, err
		}
		// Before the last write, which then carries the event's row.
		if err := s.emitTransaction(ctx, tx, x); err != nil {
			return wire.Quote{}, err
		}
		if err := tx.CreateQuote(ctx, q); err != nil {
			return wire.Quote{}, err
		}
		return s.quoteJSON(q, x), nil
	})
}

// priceQuote checks the accounts of a valid request and builds the quote
// and its PENDING transaction.
func (s *Service) priceQuote(ctx context.Context, tx store.Tx, req *QuoteRequest) (*store.Quote, *store.Transaction, error) {
	var fe fieldErrors
	realtime := req.Source.SourceType == "REALTIME_FUNDING"
	var src *store.InternalAccount
	var err error
	if realtime {
		src, err = s.realtimePayer(ctx, tx, req, &fe)
	} else {
		src, err = tx.GetInternalAccount(ctx, req.Source.AccountID)
	}
	switch {
	case realtime:
		if err != nil {
			return nil, nil, err
		}
	case errors.Is(err, store.ErrNotFound):
		fe.add("source.accountId", "no internal account with this id")
	case err != nil:
		return nil, nil, err
	case src.Status != "ACTIVE":
		fe.add("source.accountId", "the account is "+src.Status+"; only ACTIVE accounts can pay")
	case src.CustomerID == "":
		fe.add("source.accountId", "is a platform account; quotes pay from a customer's account")
	case req.Source.CustomerID != "" && req.Source.CustomerID != src.CustomerID:
		fe.add("source.customerId", "is not the customer of source.accountId")
	}
	if !realtime && src != nil && src.Type == "EMBEDDED_WALLET" && req.ImmediatelyExecute {
		fe.add("immediatelyExecute", "is not supported when the source is an EMBEDDED_WALLET account: the wallet must sign the quote")
	}
	dst, err := quoteDestination(ctx, tx, src, req.Destination.AccountID, &fe)
	if err != nil {
		return nil, nil, err
	}
	var info map[string]any
	rail := req.Destination.PaymentRail
	if dst != nil {
		_ = json.Unmarshal(dst.AccountInfo, &info)
		offered := s.railsFor(dst, info)
		switch {
		case rail == "" && len(offered) > 0:
			rail = offered[0]
		case rail != "" && !slices.Contains(offered, rail):
			msg := "this account is not paid on " + rail
			if len(offered) > 0 {
				msg += "; it is paid on " + strings.Join(offered, ", ")
			}
			fe.addConstraint("destination.paymentRail", msg, wire.FieldConstraint{Enum: offered})
		}
	}
	if e := fe.err(); e != nil {
		return nil, nil, e
	}
	if req.LookupID != "" {
		if err := s.checkLookupID(req.LookupID, src.CustomerID, dst.ID); err != nil {
			return nil, nil, err
		}
	}
	sending := src.Currency
	if realtime {
		sending = req.Source.Currency
	}
	priced, err := s.rates.Quote(rates.Request{Sending: sending, Receiving: dst.Currency, Rail: rail,
		Side: rates.Side(req.LockedCurrencySide), Amount: *req.LockedCurrencyAmount})
	if err != nil {
		return nil, nil, amountProblem(err, req.LockedCurrencySide)
	}
	cust, err := tx.GetCustomer(ctx, src.CustomerID)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	ttl := s.cfg.QuoteTTL
	if ttl <= 0 {
		ttl = priced.Rail.QuoteTTL
	}
	details, err := json.Marshal(rateDetailsJSON(priced.Details, true))
	if err != nil {
		return nil, nil, err
	}
	q := &store.Quote{
		ID: ids.New("Quote"), TransactionID: ids.New("Transaction"), CustomerID: src.CustomerID,
		SourceAccountID: src.ID, DestinationAccountID: dst.ID, PaymentRail: priced.Rail.Name,
		LockedSide: req.LockedCurrencySide, LockedAmount: *req.LockedCurrencyAmount,
		SendingCurrency: priced.Sending.Code, ReceivingCurrency: priced.Receiving.Code,
		TotalSendingAmount: priced.TotalSending, TotalReceivingAmount: priced.TotalReceiving,
		FeesIncluded: priced.FeesIncluded, ExchangeRate: priced.ExchangeRate, RateDetails: details,
		Description: req.Description, CreatedAt: now, ExpiresAt: now.Add(ttl),
	}
	switch {
	case realtime:
		if q.FundingReference, err = newFundingReference(ctx, tx); err != nil {
			return nil, nil, err
		}
	case src.Type == "EMBEDDED_WALLET":
		if q.Payload, err = s.quotePayload(q); err != nil {
			return nil, nil, err
		}
	}
	txDetails, err := json.Marshal(rateDetailsJSON(priced.Details, false))
	if err != nil {
		return nil, nil, err
	}
	x := &store.Transaction{
		ID: q.TransactionID, QuoteID: q.ID, Type: "OUTGOING", Status: "PENDING",
		CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
		SourceAccountID: src.ID, DestinationAccountID: dst.ID,
		SendingCurrency: q.SendingCurrency, ReceivingCurrency: q.ReceivingCurrency,
		SentAmount: q.TotalSendingAmount, ReceivedAmount: q.TotalReceivingAmount, Fees: priced.ReceivingFees,
		ExchangeRate: q.ExchangeRate, RateDetails: txDetails, PaymentRail: q.PaymentRail,
		Description: req.Description, Outcome: s.outcomeOf(info), Reference: reference(q.TransactionID),
		Counterparty: s.counterpartyInfo(info),
		// The worker expires the quote's transaction once expiresAt passes.
		NextStepAt: q.ExpiresAt, CreatedAt: now, UpdatedAt: now,
	}
	if realtime {
		// Nothing is taken from an internal account: the money arrives
		// from outside (fundQuote).
		x.SourceAccountID = ""
	}
	return q, x, nil
}

// noDestinationMessage is the one answer for a destination.accountId that
// names no external account of the source's customer, whether the id does
// not exist or is another owner's account: a caller must not learn that an
// id exists under another customer.
const noDestinationMessage = "no external account of the source's customer has this id"

// quoteDestination reads the destination of a payment from src and adds
// its problems to fe; it is nil unless the account is the source owner's. Only
// the owner's accounts are described (status, rails): when the source is
// unknown nothing is said about the destination at all, since an answer
// that differed for existing accounts would tell that they exist.
func quoteDestination(ctx context.Context, tx store.Tx, src *store.InternalAccount, id string, fe *fieldErrors) (*store.ExternalAccount, error) {
	if src == nil {
		return nil, nil
	}
	dst, err := tx.GetExternalAccount(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.add("destination.accountId", noDestinationMessage)
		return nil, nil
	case err != nil:
		return nil, err
	case dst.CustomerID != src.CustomerID:
		fe.add("destination.accountId", noDestinationMessage)
		return nil, nil
	case dst.Status != "ACTIVE":
		fe.add("destination.accountId", "the account is "+dst.Status+"; only ACTIVE accounts can receive payments")
	}
	return dst, nil
}

// railsFor is the destination's rails that the rates source prices, in the
// account's order of preference.
func (s *Service) railsFor(dst *store.ExternalAccount, info map[string]any) []string {
	priced, _ := s.rates.Rails(dst.Currency)
	var out []string
	for _, name := range paymentRails(dst.AccountType, info) {
		for _, p := range priced {
			if p.Name == name {
				out = append(out, name)
			}
		}
	}
	return out
}

// amountProblem turns a pricing error into the 400 the client sees.
func amountProblem(err error, side string) error {
	var ae *rates.AmountError
	switch {
	case errors.As(err, &ae):
		return &Error{Code: "AMOUNT_OUT_OF_RANGE",
			Message: "lockedCurrencyAmount: " + ae.Error(),
			Details: map[string]any{"field": "lockedCurrencyAmount", "lockedCurrencySide": side,
				"minSendingAmount": ae.Min, "maxSendingAmount": ae.Max}}
	case errors.Is(err, rates.ErrUnknownCurrency):
		return errorf("INVALID_CURRENCY", "no exchange rate is offered for this corridor: "+err.Error())
	case errors.Is(err, rates.ErrUnsupportedRail):
		return invalidField("destination.paymentRail", err.Error())
	}
	return err
}

// quotePayload is the payloadToSign of an embedded-wallet quote: an
// activity naming the quote, its transaction, both accounts, both amounts
// and the expiry, so a stamp over it authorizes exactly this payment and a
// wallet can show the person what it signs.
func (s *Service) quotePayload(q *store.Quote) (string, error) {
	return s.activity(q.SourceAccountID, "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", map[string]any{
		"signWith": q.SourceAccountID,
		"type":     "TRANSACTION_TYPE_PAYMENT",
		"unsignedTransaction": map[string]any{
			"quoteId":              q.ID,
			"transactionId":        q.TransactionID,
			"destinationAccountId": q.DestinationAccountID,
			"sendingCurrency":      q.SendingCurrency,
			"totalSendingAmount":   q.TotalSendingAmount,
			"receivingCurrency":    q.ReceivingCurrency,
			"totalReceivingAmount": q.TotalReceivingAmount,
			"expiresAt":            timestamp(q.ExpiresAt),
		},
	})
}

// reference is the reconciliation reference of a transaction: short enough
// for a bank statement line, derived from the id so it is unique.
func reference(transactionID string) string {
	_, u, _ := strings.Cut(transactionID, ":")
	u = strings.ToUpper(strings.ReplaceAll(u, "-", ""))
	if len(u) > 16 {
		u = u[len(u)-16:]
	}
	return "PW" + u
}

// outcomeOf is the simulated payout network's answer for a destination. In
// sandbox mode the last three digits of its primary identifier choose one of
// the reference's quote patterns (grid-api-facts §5): 002 execution fails,
// 003 a long payment, 004 delivery fails, 005 returned after completing, 006
// cancelled by the recipient, 007 payout and refund both fail. In production
// every payment settles.
func (s *Service) outcomeOf(info map[string]any) string {
	return s.sandboxDigits(info, "002", "003", "004", "005", "006", "007")
}

// sandboxDigits is, in sandbox mode, the last three digits of the primary
// identifier of the account whose accountInfo is info when they are one of
// outcomes (the reference's sandbox patterns), else "" (the ordinary
// outcome, and always in production).
func (s *Service) sandboxDigits(info map[string]any, outcomes ...string) string {
	if s.mode != ModeSandbox {
		return ""
	}
	id := accountrules.PrimaryIdentifier(info)
	if len(id) < 3 || !slices.Contains(outcomes, id[len(id)-3:]) {
		return ""
	}
	return id[len(id)-3:]
}

// counterpartyInfo is the counterpartyInformation the platform asked for
// (Config.CounterpartyInformation), read from the destination's
// beneficiary; nil when none is configured or known.
func (s *Service) counterpartyInfo(info map[string]any) []byte {
	if len(s.cfg.CounterpartyInformation) == 0 {
		return nil
	}
	b, _ := info["beneficiary"].(map[string]any)
	out := map[string]string{}
	for _, k := range s.cfg.CounterpartyInformation {
		var v string
		switch k {
		case "FULL_NAME":
			v = beneficiaryName(info)
		case "BIRTH_DATE":
			v, _ = b["birthDate"].(string)
		case "NATIONALITY":
			v, _ = b["nationality"].(string)
		case "COUNTRY_OF_RESIDENCE":
			if a, ok := b["address"].(map[string]any); ok {
				v, _ = a["country"].(string)
			}
		case "EMAIL":
			v, _ = b["email"].(string)
		case "PHONE_NUMBER":
			v, _ = b["phoneNumber"].(string)
		}
		if v != "" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	j, _ := json.Marshal(out)
	return j
}

// CounterpartyFields are the keys Config.CounterpartyInformation may name.
var CounterpartyFields = []string{"FULL_NAME", "BIRTH_DATE", "NATIONALITY", "COUNTRY_OF_RESIDENCE", "EMAIL", "PHONE_NUMBER"}

func rateDetailsJSON(d rates.RateDetails, withCounterparty bool) wire.RateDetails {
	out := wire.RateDetails{
		ServiceAPIMultiplier:        d.ServiceMultiplier,
		ServiceAPIFixedFee:          d.ServiceFixedFee,
		ServiceAPIVariableFeeRate:   d.ServiceVariableFeeRate,
		ServiceAPIVariableFeeAmount: d.ServiceVariableFeeAmount,
	}
	if withCounterparty {
		out.CounterpartyMultiplier = new(d.CounterpartyMultiplier)
		out.CounterpartyFixedFee = new(d.CounterpartyFixedFee)
	}
	return out
}

// quoteStatus is the quote's status, read from its transaction: a PENDING
// transaction whose quote has passed expiresAt is EXPIRED even before the
// worker records it.
func quoteStatus(q *store.Quote, x *store.Transaction, now time.Time) string {
	switch x.Status {
	case "PENDING", "PENDING_AUTHORIZATION":
		if !now.Before(q.ExpiresAt) {
			return "EXPIRED"
		}
		return x.Status
	case "PROCESSING", "COMPLETED", "EXPIRED":
		return x.Status
	}
	return "FAILED" // FAILED, REJECTED, REFUNDED
}

func (s *Service) currencyJSON(code string) wire.Currency {
	c, ok := s.rates.Currency(code)
	if !ok {
		return wire.Currency{Code: code}
	}
	return wire.Currency{Code: c.Code, Name: c.Name, Symbol: c.Symbol, Decimals: c.Decimals}
}

func (s *Service) quoteJSON(q *store.Quote, x *store.Transaction) wire.Quote {
	out := wire.Quote{
		ID: q.ID, Status: quoteStatus(q, x, s.now()), CreatedAt: timestamp(q.CreatedAt), ExpiresAt: timestamp(q.ExpiresAt),
		Source:               wire.QuoteSource{SourceType: "ACCOUNT", AccountID: q.SourceAccountID, CustomerID: q.CustomerID},
		Destination:          wire.QuoteDestination{DestinationType: "ACCOUNT", AccountID: q.DestinationAccountID, PaymentRail: q.PaymentRail},
		SendingCurrency:      s.currencyJSON(q.SendingCurrency),
		ReceivingCurrency:    s.currencyJSON(q.ReceivingCurrency),
		TotalSendingAmount:   q.TotalSendingAmount,
		TotalReceivingAmount: q.TotalReceivingAmount,
		ExchangeRate:         q.ExchangeRate,
		FeesIncluded:         q.FeesIncluded,
		TransactionID:        q.TransactionID,
		Description:          q.Description,
	}
	if q.FundingReference != "" {
		out.Source = wire.QuoteSource{SourceType: "REALTIME_FUNDING", CustomerID: q.CustomerID, Currency: q.SendingCurrency}
		out.PaymentInstructions = s.realtimeInstructions(q)
	}
	if q.Payload != "" {
		out.PaymentInstructions = []wire.PaymentInstructions{{
			InstructionsNotes: "Stamp payloadToSign with an active session key of the wallet and send the stamp as " +
				wire.HeaderWalletSignature + " to POST /quotes/" + q.ID + "/execute before expiresAt.",
			AccountOrWalletInfo: map[string]any{"accountType": "EMBEDDED_WALLET", "payloadToSign": q.Payload},
		}}
	}
	out.RateDetails = rateDetails(q.RateDetails)
	if len(x.Counterparty) > 0 {
		_ = json.Unmarshal(x.Counterparty, &out.CounterpartyInformation)
	}
	return out
}

// GetQuote is the quote with this id (GET /quotes/{quoteId}), its status
// read from its transaction.
func (s *Service) GetQuote(ctx context.Context, id string) (wire.Quote, error) {
	return read(ctx, s, func(tx store.Tx) (wire.Quote, error) {
		q, x, err := loadQuote(ctx, tx, id)
		if err != nil {
			return wire.Quote{}, err
		}
		out := s.quoteJSON(q, x)
		if out.Status == "PENDING_AUTHORIZATION" {
			u, err := tx.StepUpOf(ctx, q.ID)
			if err != nil {
				return wire.Quote{}, err
			}
			if out.ScaChallenge, err = s.challengeOf(ctx, tx, u); err != nil {
				return wire.Quote{}, err
			}
		}
		return out, nil
	})
}

var errQuoteNotFound = errorf("QUOTE_NOT_FOUND", "no quote with this id")

func loadQuote(ctx context.Context, tx store.Tx, id string) (*store.Quote, *store.Transaction, error) {
	if !ids.Valid("Quote", id) {
		return nil, nil, errQuoteNotFound
	}
	q, err := tx.GetQuote(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errQuoteNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	x, err := tx.GetTransaction(ctx, q.TransactionID)
	if err != nil {
		return nil, nil, err
	}
	return q, x, nil
}

// ExecuteQuote executes a PENDING quote (POST /quotes/{quoteId}/execute):
// the total is held on the source wallet and the transaction becomes
// PROCESSING, for the settlement worker to finish. signature is the
// Service-Wallet-Signature of the request: a stamp over the quote's
// payloadToSign by an active session of the paying wallet, required when
// the quote has one. It runs under o's Idempotency-Key.
func (s *Service) ExecuteQuote(ctx context.Context, o Once, id string, signature Stamp) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.Quote, error) { return s.executeQuote(ctx, id, string(signature), true, fin) })
}

// Stamp is the Service-Wallet-Signature of an execute: a stamp over the
// quote's payloadToSign, not a signed retry's (it comes without
// Request-Id).
type Stamp string

// executeQuote is ExecuteQuote with fin run in its commit. byPerson says
// the person's own session asks (POST /quotes/{quoteId}/execute), whose
// payment the step-up policy may hold; an agent's payment follows the
// agent's policy instead (its limits, and the platform's approval as its
// second yes), and the sandbox's made-up payments are not held.
func (s *Service) executeQuote(ctx context.Context, id, signature string, byPerson bool, fin *then) (wire.Quote, error) {
	// Executes from one wallet take turns (the hold updates its balance
	// row); the wallet is read first to know which turn to wait for.
	var issued *issuedStepUp
	out, err := commit(ctx, s, s.sourceOf(ctx, id), fin, func(tx store.Tx) (wire.Quote, error) {
		issued = nil
		q, x, err := loadQuote(ctx, tx, id)
		if err != nil {
			return wire.Quote{}, err
		}
		if q.FundingReference != "" {
			return wire.Quote{}, invalidField("quoteId", "is funded just in time (source REALTIME_FUNDING): it executes when the payment described by its paymentInstructions arrives, not with /execute")
		}
		now := s.now()
		if st := quoteStatus(q, x, now); st != "PENDING" {
			msg := "the quote is " + st + " and cannot be executed"
			switch st {
			case "EXPIRED":
				msg = "the quote expired at " + timestamp(q.ExpiresAt) + "; ask for a new quote"
			case "PENDING_AUTHORIZATION":
				msg = "the quote waits for the person's confirmation: POST /quotes/" + q.ID + "/authorize with the proof of its scaChallenge"
			}
			return wire.Quote{}, &Error{Code: "INVALID_STATE_TRANSITION", Message: msg,
				Details: map[string]any{"quoteStatus": st}}
		}
		wallet, dst, err := executableAccounts(ctx, tx, q, "quoteId", false)
		if err != nil {
			return wire.Quote{}, err
		}
		if q.Payload != "" {
			if err := s.checkQuoteStamp(ctx, tx, q, signature); err != nil {
				return wire.Quote{}, err
			}
		}
		if err := s.checkLock(ctx, tx, wallet.ID); err != nil {
			return wire.Quote{}, err
		}
		// The person's own limits, before anything is held or asked
		// for (limits.go); a held payment is checked again when it is
		// confirmed.
		if err := s.checkLimits(ctx, tx, q.SourceAccountID, q.DestinationAccountID, q.TotalSendingAmount); err != nil {
			return wire.Quote{}, err
		}
		if q.Payload != "" && byPerson {
			// A payment the policy holds waits for the person's
			// confirmation (stepup.go): nothing is held yet.
			need, err := s.paymentNeed(ctx, tx, ActionPayment, wallet, dst, q.TotalSendingAmount, q.SendingCurrency)
			if err != nil {
				return wire.Quote{}, err
			}
			if need != nil {
				if issued, err = s.newStepUp(ctx, tx, need, q.ID, q.Payload, q.ExpiresAt, true); err != nil {
					return wire.Quote{}, err
				}
				next := *x
				next.Status, next.UpdatedAt = "PENDING_AUTHORIZATION", now
				won, err := tx.AdvanceTransaction(ctx, &next, "PENDING")
				if err != nil {
					return wire.Quote{}, err
				}
				if !won {
					return wire.Quote{}, errorf("INVALID_STATE_TRANSITION", "the quote was executed by another request")
				}
				out := s.quoteJSON(q, &next)
				out.ScaChallenge = issued.challenge
				return out, nil
			}
		}
		return s.runPayment(ctx, tx, q, x, wallet, now)
	})
	if err == nil {
		s.mailStepUpCode(ctx, issued)
	}
	return out, err
}

// runPayment executes the quote q of the PENDING or PENDING_AUTHORIZATION
// transaction x from wallet (as read in tx): the hold, PROCESSING, the
// events.
func (s *Service) runPayment(ctx context.Context, tx store.Tx, q *store.Quote, x *store.Transaction, wallet *store.InternalAccount, now time.Time) (wire.Quote, error) {
	after, err := s.holdPayment(ctx, tx, x, wallet, q.TotalSendingAmount, now)
	if err != nil {
		return wire.Quote{}, err
	}
	if after == nil {
		src, err := tx.GetInternalAccount(ctx, q.SourceAccountID)
		if err != nil {
			return wire.Quote{}, err
		}
		return wire.Quote{}, &Error{Code: "INSUFFICIENT_BALANCE",
			Message: fmt.Sprintf("the available balance (%d) does not cover totalSendingAmount (%d)", src.Available, q.TotalSendingAmount),
			Details: map[string]any{"available": src.Available, "required": q.TotalSendingAmount}}
	}
	next := *x
	next.Status, next.UpdatedAt = "PROCESSING", now
	next.NextStepAt = now.Add(s.settleAfter(q.PaymentRail, x.Outcome))
	// The events before the last write, which then carries their
	// row (rolled back with it if the write loses).
	if err := s.emitExecuted(ctx, tx, &next, after); err != nil {
		return wire.Quote{}, err
	}
	won, err := tx.AdvanceTransaction(ctx, &next, x.Status)
	if err != nil {
		return wire.Quote{}, err
	}
	if !won {
		return wire.Quote{}, errorf("INVALID_STATE_TRANSITION", "the quote was executed by another request")
	}
	return s.quoteJSON(q, &next), nil
}

// executableAccounts refuses the execute of a quote whose accounts changed
// since it was priced: the paying wallet is no longer ACTIVE (its customer
// was deleted) or the destination was deactivated (DELETE of the external
// account, or of its customer). The quote stays PENDING and expires by
// itself; a new quote to an ACTIVE account is the way on. field names the
// request member that named the quote. funding is set for a payment that
// arrived for a just-in-time quote (fundQuote): it is not applied, and the
// money goes back to its sender.
//
// A deactivation that commits after the execute leaves the payment in
// flight alone: it settles to the account as it was when executed.
//
// It returns the paying wallet and the destination as read.
func executableAccounts(ctx context.Context, tx store.Tx, q *store.Quote, field string, funding bool) (*store.InternalAccount, *store.ExternalAccount, error) {
	refuse := func(why, what string) (*store.InternalAccount, *store.ExternalAccount, error) {
		msg := "the quote " + why + " now"
		if funding {
			msg += ": the payment is not applied to it and goes back to its sender"
		} else {
			msg += "; only ACTIVE accounts " + what + ": ask for a new quote"
		}
		return nil, nil, &Error{Code: CodeInvalidInput, Message: msg,
			Details: map[string]any{"errors": []wire.FieldError{{Field: field, Message: "the quote " + why + " now"}}}}
	}
	src, err := tx.GetInternalAccount(ctx, q.SourceAccountID)
	if err != nil {
		return nil, nil, err
	}
	if src.Status != "ACTIVE" && !funding {
		return refuse("pays from "+src.ID+", which is "+src.Status, "can pay")
	}
	dst, err := tx.GetExternalAccount(ctx, q.DestinationAccountID)
	if err != nil {
		return nil, nil, err
	}
	if dst.Status != "ACTIVE" {
		return refuse("pays to "+dst.ID+", which is "+dst.Status, "can receive payments")
	}
	return src, dst, nil
}

// checkQuoteStamp checks Service-Wallet-Signature on an execute: a stamp
// over the quote's payloadToSign by the key of an active session of the
// source wallet (or the sandbox literal in sandbox mode).
func (s *Service) checkQuoteStamp(ctx context.Context, tx store.Tx, q *store.Quote, header string) error {
	switch {
	case header == "":
		return errorf(CodeSignatureMissing, "executing a quote from an embedded wallet needs "+wire.HeaderWalletSignature+": a stamp over the quote's payloadToSign")
	case header == wire.SandboxSignature && s.mode == ModeSandbox:
		return nil
	case header == wire.SandboxSignature:
		return errorf(CodeSignatureInvalid, "the sandbox signature is not accepted in production mode")
	}
	stamp, err := walletcrypto.ParseStamp(header)
	if err != nil {
		return errorf(CodeSignatureMalformed, wire.HeaderWalletSignature+" is not a valid stamp: "+stampProblem(err))
	}
	if err := stamp.Verify([]byte(q.Payload)); err != nil {
		return errorf(CodeSignatureInvalid, "the stamp does not verify over this quote's payloadToSign")
	}
	ok, err := s.activeKeyOf(ctx, tx, q.SourceAccountID)(stamp.PublicKey)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(CodeSignatureInvalid, "the stamp's key is not the key of an active session of the paying wallet")
	}
	return nil
}

// sourceOf is the wallet quote id pays from, or "" when it cannot be read
// (the execute that follows then reports why).
func (s *Service) sourceOf(ctx context.Context, id string) string {
	var source string
	_ = s.store.Tx(ctx, func(tx store.Tx) error {
		q, err := tx.GetQuote(ctx, id)
		if err == nil {
			source = q.SourceAccountID
		}
		return err
	})
	return source
}
