package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/shared/accountrules"
	"paywallet/shared/wire"
)

// Money in as well as out (grid-api-facts §3.4, §5 "Transfer-in/out").
//
// There are three ways money comes into an internal account and one
// same-currency way out:
//
//   - Deposit by reference. Every internal account has a deposit reference
//     (store.NewDepositReference), shown in its fundingPaymentInstructions
//     together with the receiving bank account of the platform's operator
//     (Config.DepositAccounts). A bank transfer that quotes the reference is
//     credited when the operator records it (RecordDeposit; the command
//     `paymentsd deposit`): a COMPLETED INCOMING transaction, at once.
//   - Transfer-in (POST /transfer-in): a pull from an ACTIVE external
//     account of the same customer and currency. An INCOMING transaction,
//     PENDING → PROCESSING → COMPLETED (the account is credited then) or
//     FAILED, moved along by the settlement worker.
//   - Sandbox funding (FundSandbox), sandbox mode only.
//
// Transfer-out (POST /transfer-out) pays an ACTIVE external account of the
// same customer and currency without a quote: the amount is held at once
// and the OUTGOING transaction goes PENDING → PROCESSING → COMPLETED (the
// held money leaves) or FAILED (it returns to the available balance). From
// an EMBEDDED_WALLET it is a signed operation: money leaves a wallet only
// with its owner's signature.
//
// This service has no bank connection. A transfer "settles" when the
// settlement worker completes it after the rail's settlement time: in
// production that records what the operator's bank must actually do (pull
// the money for a transfer-in, pay it out for a transfer-out), and a
// deposit is credited only when the operator says it arrived. In sandbox
// mode the last three digits of the external account's primary identifier
// choose the outcome (transferOutcomeOf).

// Transfer outcomes of the (simulated) bank, stored in Transaction.Outcome
// of a transfer (a transaction without a quote). They reuse the sandbox
// digits of the reference's transfer patterns.
const (
	transferInsufficientFunds = "002" // the pull or payout bounces: insufficient funds
	transferAccountClosed     = "003" // the external account is closed or invalid
	transferRejected          = "004" // the bank or compliance rejects it
	transferLongThenFail      = "005" // stays PROCESSING for transferLongDelay, then fails
)

// transferLongDelay is how long a sandbox 005 transfer stays PROCESSING.
const transferLongDelay = 30 * time.Second

// transferOutcomeOf is the simulated bank's answer for a transfer with the
// external account whose accountInfo is info: in sandbox mode the last three
// digits of its primary identifier (002, 003, 004, 005), otherwise success.
func (s *Service) transferOutcomeOf(info map[string]any) string {
	return s.sandboxDigits(info, transferInsufficientFunds, transferAccountClosed, transferRejected, transferLongThenFail)
}

// transferFailure is the status and failureReason a failed transfer
// outcome ends in: FAILED with a reason of the reference's enums
// (IncomingTransactionFailureReason, OutgoingTransactionFailureReason).
func transferFailure(typ, outcome string) string {
	if typ == "INCOMING" {
		if outcome == transferRejected {
			return "COMPLIANCE_REJECTED"
		}
		return "COLLECTION_FAILED"
	}
	switch outcome {
	case transferAccountClosed:
		return "ACCOUNT_INVALID"
	case transferRejected:
		return "COMPLIANCE_REJECTED"
	}
	return "QUOTE_EXECUTION_FAILED" // the payout could not be made; the held money returns
}

// ---- configuration: the operator's receiving bank accounts

// sandboxDepositAccounts are the receiving bank details fundingPayment-
// Instructions show in sandbox mode for a currency the configuration does
// not cover: clearly not a real bank.
var sandboxDepositAccounts = map[string]map[string]any{
	"USD": {
		"accountType":   "USD_ACCOUNT",
		"accountNumber": "000000000000",
		"routingNumber": "000000000",
		"bankName":      "Sandbox Bank (test only: send no real money)",
		"paymentRails":  []any{"ACH", "WIRE", "RTP", "FEDNOW"},
	},
}

// checkDepositAccounts checks Config.DepositAccounts: each entry is keyed
// by a currency the rates source knows and is the accountOrWalletInfo of a
// bank account in that currency (a known accountType whose currency it is,
// its account identifier, text or lists of text only, no reference: the
// service adds each account's own). paymentRails is filled in from the
// account type when absent.
func (s *Service) checkDepositAccounts() error {
	for cur, info := range s.cfg.DepositAccounts {
		where := "service: Config.DepositAccounts[" + cur + "]"
		if _, ok := s.rates.Currency(cur); !ok {
			return errors.New(where + ": the rates source has no such currency")
		}
		t, _ := info["accountType"].(string)
		if !slices.Contains(accountrules.AccountTypes(), t) {
			return errors.New(where + ": accountType must be one of " + strings.Join(accountrules.AccountTypes(), ", "))
		}
		if want := accountrules.RequiredCurrency(t); want != "" && want != cur {
			return fmt.Errorf("%s: a %s is in %s, not %s", where, t, want, cur)
		}
		if accountrules.PrimaryIdentifier(info) == "" {
			return errors.New(where + ": the account's identifier (account number, IBAN, …) is missing")
		}
		if _, ok := info["reference"]; ok {
			return errors.New(where + ": reference is not configured: each internal account gets its own")
		}
		for k, v := range info {
			switch v := v.(type) {
			case string:
				if v == "" || !plainText(v) {
					return fmt.Errorf("%s: %s must be non-empty text", where, k)
				}
			case []any:
				for _, e := range v {
					if str, ok := e.(string); !ok || str == "" {
						return fmt.Errorf("%s: %s must be a list of text", where, k)
					}
				}
			default:
				return fmt.Errorf("%s: %s must be text or a list of text", where, k)
			}
		}
	}
	return nil
}

// accountTypeOf is the bank account type of a currency (USD_ACCOUNT for
// USD), or "" when there is none.
func accountTypeOf(currency string) string {
	for _, t := range accountrules.AccountTypes() {
		if accountrules.RequiredCurrency(t) == currency && strings.HasSuffix(t, "_ACCOUNT") {
			return t
		}
	}
	return ""
}

// fundingInstructions is an internal account's fundingPaymentInstructions:
// how money is sent into it. A customer's account gets one instruction: the
// operator's receiving bank account for the account's currency
// (Config.DepositAccounts; in sandbox mode fixed sandbox details when none
// is configured) with the account's deposit reference as reference. Without
// bank details it names only the account type of the currency and the
// reference, and the note says to ask the operator for the account. A
// platform account (no customer) is not funded this way: none.
func (s *Service) fundingInstructions(a *store.InternalAccount) []wire.PaymentInstructions {
	// A closed account takes no deposits (RecordDeposit refuses them), so
	// it tells nobody how to send one.
	if a.CustomerID == "" || a.DepositReference == "" || a.Status != "ACTIVE" {
		return []wire.PaymentInstructions{}
	}
	bank, ok := s.cfg.DepositAccounts[a.Currency]
	if !ok && s.mode == ModeSandbox {
		bank, ok = sandboxDepositAccounts[a.Currency]
	}
	info := map[string]any{}
	var notes string
	if ok {
		maps.Copy(info, bank)
		if _, has := info["paymentRails"]; !has {
			t, _ := info["accountType"].(string)
			info["paymentRails"] = paymentRails(t, info)
		}
		notes = "Send " + a.Currency + " by bank transfer to this account and quote the reference " + a.DepositReference +
			" exactly in the payment's reference or memo field: the reference is what credits this account. " +
			"The money is credited when the deposit has arrived and has been recorded."
	} else {
		if t := accountTypeOf(a.Currency); t != "" {
			info["accountType"] = t
		}
		notes = "Ask the operator of this service for the bank account that receives " + a.Currency +
			" deposits, and quote the reference " + a.DepositReference + " exactly in the payment's reference or memo field: " +
			"the reference is what credits this account."
	}
	if s.mode == ModeSandbox {
		notes += " Sandbox: no real money moves; fund this account with POST /sandbox/internal-accounts/" + a.ID + "/fund."
	}
	info["reference"] = a.DepositReference
	return []wire.PaymentInstructions{{InstructionsNotes: notes, AccountOrWalletInfo: info}}
}

// ---- requests

// AccountRef names an account in a transfer request (the reference's
// InternalAccountReference and ExternalAccountReference).
type AccountRef struct {
	AccountID string `json:"accountId"`
}

// TransferDestination is the destination of a transfer-out (the reference's
// ExternalAccountDestinationReference).
type TransferDestination struct {
	AccountID   string `json:"accountId"`
	PaymentRail string `json:"paymentRail"`
}

// TransferInRequest is the body of POST /transfer-in.
type TransferInRequest struct {
	Source      *AccountRef `json:"source"`
	Destination *AccountRef `json:"destination"`
	Amount      *int64      `json:"amount"`
}

// TransferOutRequest is the body of POST /transfer-out.
type TransferOutRequest struct {
	Source                *AccountRef          `json:"source"`
	Destination           *TransferDestination `json:"destination"`
	Amount                *int64               `json:"amount"`
	RemittanceInformation string               `json:"remittanceInformation"`
	PurposeOfPayment      string               `json:"purposeOfPayment"`
}

// checkAmount names a missing or out-of-range amount.
func checkAmount(fe *fieldErrors, name string, amount *int64) {
	switch {
	case amount == nil:
		fe.add(name, "required")
	case *amount <= 0 || *amount > maxLockedAmount:
		fe.add(name, "must be an integer from 1 to 9000000000000000 (smallest unit of the account's currency)")
	}
}

func checkRef(fe *fieldErrors, name string, ref *AccountRef, kind string) {
	switch {
	case ref == nil:
		fe.add(name, "required")
	case !ids.Valid(kind, ref.AccountID):
		fe.add(name+".accountId", "must be an "+kind+":<uuid> id")
	}
}

func (r *TransferInRequest) check() fieldErrors {
	var fe fieldErrors
	checkRef(&fe, "source", r.Source, "ExternalAccount")
	checkRef(&fe, "destination", r.Destination, "InternalAccount")
	checkAmount(&fe, "amount", r.Amount)
	return fe
}

func (r *TransferOutRequest) check() fieldErrors {
	var fe fieldErrors
	checkRef(&fe, "source", r.Source, "InternalAccount")
	switch {
	case r.Destination == nil:
		fe.add("destination", "required")
	default:
		if !ids.Valid("ExternalAccount", r.Destination.AccountID) {
			fe.add("destination.accountId", "must be an ExternalAccount:<uuid> id")
		}
		if p := r.Destination.PaymentRail; p != "" && !slices.Contains(paymentRailNames, p) {
			fe.addConstraint("destination.paymentRail", "is not a payment rail", wire.FieldConstraint{Enum: paymentRailNames})
		}
	}
	checkAmount(&fe, "amount", r.Amount)
	if utf8.RuneCountInString(r.RemittanceInformation) > 80 || !plainText(r.RemittanceInformation) {
		fe.add("remittanceInformation", "must be at most 80 characters of text without control characters")
	}
	if r.PurposeOfPayment != "" && !slices.Contains(purposes, r.PurposeOfPayment) {
		fe.addConstraint("purposeOfPayment", "is not a purpose of payment", wire.FieldConstraint{Enum: purposes})
	}
	return fe
}

// transferEnds reads and checks both ends of a transfer: the internal
// account (field internalField) must be an ACTIVE account of a customer,
// the external account (field externalField) an ACTIVE account of the same
// customer in the same currency. Every problem is added to fe; the accounts
// are nil when they cannot be used. As for quotes, an external account of
// another customer is described as missing.
func transferEnds(ctx context.Context, tx store.Tx, internalID, internalField, externalID, externalField string, fe *fieldErrors) (*store.InternalAccount, *store.ExternalAccount, error) {
	in, err := tx.GetInternalAccount(ctx, internalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.add(internalField, "no internal account with this id")
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	case in.CustomerID == "":
		fe.add(internalField, "is a platform account; transfers move a customer's money")
		return nil, nil, nil
	case in.Status != "ACTIVE":
		fe.add(internalField, "the account is "+in.Status+"; only ACTIVE accounts can transfer")
	}
	const missing = "no external account of the internal account's customer has this id"
	ext, err := tx.GetExternalAccount(ctx, externalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.add(externalField, missing)
		return in, nil, nil
	case err != nil:
		return nil, nil, err
	case ext.CustomerID != in.CustomerID:
		fe.add(externalField, missing)
		return in, nil, nil
	case ext.Status != "ACTIVE":
		fe.add(externalField, "the account is "+ext.Status+"; only ACTIVE accounts can transfer")
	case ext.Currency != in.Currency:
		fe.add(externalField, "the account is in "+ext.Currency+" and "+internalField+" in "+in.Currency+
			"; transfers are in one currency (pay across currencies with a quote)")
	}
	return in, ext, nil
}

// newTransfer builds the PENDING transaction of a transfer between in and
// ext; the settlement worker takes it at once (NextStepAt now).
func (s *Service) newTransfer(ctx context.Context, tx store.Tx, typ string, in *store.InternalAccount, ext *store.ExternalAccount, rail string, amount int64, description string) (*store.Transaction, error) {
	cust, err := tx.GetCustomer(ctx, in.CustomerID)
	if err != nil {
		return nil, err
	}
	var info map[string]any
	_ = json.Unmarshal(ext.AccountInfo, &info)
	now := s.now()
	id := ids.New("Transaction")
	x := &store.Transaction{
		ID: id, Type: typ, Status: "PENDING", CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
		SendingCurrency: in.Currency, ReceivingCurrency: in.Currency, SentAmount: amount, ReceivedAmount: amount,
		ExchangeRate: 1, PaymentRail: rail, Description: description, Outcome: s.transferOutcomeOf(info),
		Reference: reference(id), NextStepAt: now, CreatedAt: now, UpdatedAt: now,
	}
	if typ == "INCOMING" {
		x.SourceAccountID, x.DestinationAccountID = ext.ID, in.ID
	} else {
		x.SourceAccountID, x.DestinationAccountID = in.ID, ext.ID
		x.Counterparty = s.counterpartyInfo(info)
	}
	return x, nil
}

// transferRail is the rail of a transfer with ext: asked (checked against
// the account's rails) or the account's first.
func transferRail(ext *store.ExternalAccount, asked string, fe *fieldErrors) string {
	var info map[string]any
	_ = json.Unmarshal(ext.AccountInfo, &info)
	rails := paymentRails(ext.AccountType, info)
	switch {
	case asked != "" && !slices.Contains(rails, asked):
		fe.addConstraint("destination.paymentRail", "this account is not paid on "+asked+"; it is paid on "+strings.Join(rails, ", "),
			wire.FieldConstraint{Enum: rails})
		return ""
	case asked != "":
		return asked
	case len(rails) > 0:
		return rails[0]
	}
	return ""
}

// ---- transfer-in

// TransferIn starts a pull from an external account into an internal
// account of the same customer (POST /transfer-in). It answers the INCOMING
// transaction, PENDING; the settlement worker moves it on and credits the
// account when it completes. It runs under o's Idempotency-Key.
func (s *Service) TransferIn(ctx context.Context, o Once, req TransferInRequest) (Answer, error) {
	return once(ctx, s, o, func(fin *then) (wire.Transaction, error) { return s.transferIn(ctx, req, fin) })
}

// transferIn is TransferIn with fin run in its commit.
func (s *Service) transferIn(ctx context.Context, req TransferInRequest, fin *then) (wire.Transaction, error) {
	if e := req.check().err(); e != nil {
		return wire.Transaction{}, e
	}
	return commit(ctx, s, "", fin, func(tx store.Tx) (wire.Transaction, error) {
		var fe fieldErrors
		in, ext, err := transferEnds(ctx, tx, req.Destination.AccountID, "destination.accountId", req.Source.AccountID, "source.accountId", &fe)
		if err != nil {
			return wire.Transaction{}, err
		}
		var rail string
		if ext != nil {
			rail = transferRail(ext, "", &fe)
		}
		if e := fe.err(); e != nil {
			return wire.Transaction{}, e
		}
		x, err := s.newTransfer(ctx, tx, "INCOMING", in, ext, rail, *req.Amount, "Transfer in")
		if err != nil {
			return wire.Transaction{}, err
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

// ---- transfer-out

const opTransferOut = "transfers.out"

// TransferOut pays an external account of the source's customer in the
// source's currency, without a quote (POST /transfer-out): the amount is
// held at once and the OUTGOING transaction (PENDING) is settled by the
// worker. From an EMBEDDED_WALLET it is a signed operation: the first call
// answers a challenge whose payloadToSign (ACTIVITY_TYPE_SIGN_TRANSACTION_V2)
// names the source, the destination, the amount and the currency; the
// retry with the same body, signed by an active session of the wallet, makes
// the transfer. From another internal account the first call makes it.
// It runs under o's Idempotency-Key; the first call's challenge is never
// recorded.
func (s *Service) TransferOut(ctx context.Context, o Once, req TransferOutRequest, call SignedCall) (Answer, error) {
	return onceSigned(ctx, s, o, func(fin *then) (Signed[wire.Transaction], error) { return s.transferOut(ctx, req, call, fin) })
}

// transferOut is TransferOut with fin run in its commit.
func (s *Service) transferOut(ctx context.Context, req TransferOutRequest, call SignedCall, fin *then) (Signed[wire.Transaction], error) {
	if e := req.check().err(); e != nil {
		return Signed[wire.Transaction]{}, e
	}
	amount := *req.Amount
	// prepare checks the request against the accounts; it runs on both legs.
	prepare := func(tx store.Tx) (*store.InternalAccount, *store.ExternalAccount, string, error) {
		var fe fieldErrors
		src, dst, err := transferEnds(ctx, tx, req.Source.AccountID, "source.accountId", req.Destination.AccountID, "destination.accountId", &fe)
		if err != nil {
			return nil, nil, "", err
		}
		var rail string
		if dst != nil {
			rail = transferRail(dst, req.Destination.PaymentRail, &fe)
		}
		if e := fe.err(); e != nil {
			return nil, nil, "", e
		}
		return src, dst, rail, nil
	}
	op := operation{name: opTransferOut, targetID: req.Source.AccountID, accountID: req.Source.AccountID, bodyHash: call.BodyHash}
	if !call.IsRetry() {
		// The first call from a wallet only issues the challenge: it runs
		// outside commit, so fin (an Idempotency-Key) records nothing.
		var challenge *wire.SignedRequestChallenge
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			challenge = nil
			src, dst, rail, err := prepare(tx)
			if err != nil || src.Type != "EMBEDDED_WALLET" {
				return err
			}
			if src.Available < amount {
				return insufficient(src, amount)
			}
			if err := s.checkLock(ctx, tx, src.ID); err != nil {
				return err
			}
			if err := s.checkLimits(ctx, tx, src.ID, dst.ID, amount); err != nil {
				return err
			}
			// A transfer the policy holds waits for the person's
			// confirmation (stepup.go).
			sop := op
			if sop.stepUp, err = s.paymentNeed(ctx, tx, ActionTransfer, src, dst, amount, src.Currency); err != nil {
				return err
			}
			challenge, err = s.activityChallenge(ctx, tx, sop, "", "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", map[string]any{
				"signWith": src.ID,
				"type":     "TRANSACTION_TYPE_PAYMENT",
				"unsignedTransaction": map[string]any{
					"kind":                 "TRANSFER_OUT",
					"sourceAccountId":      src.ID,
					"destinationAccountId": dst.ID,
					"currency":             src.Currency,
					"amount":               amount,
					"paymentRail":          rail,
				},
			}, nil)
			return err
		})
		if err != nil {
			return Signed[wire.Transaction]{}, err
		}
		if challenge != nil {
			return challenged[wire.Transaction](challenge), nil
		}
	}
	x, err := commit(ctx, s, req.Source.AccountID, fin, func(tx store.Tx) (wire.Transaction, error) {
		src, dst, rail, err := prepare(tx)
		if err != nil {
			return wire.Transaction{}, err
		}
		if src.Type == "EMBEDDED_WALLET" {
			if !call.IsRetry() {
				// The account cannot have become a wallet since the check
				// above; refuse rather than move a wallet's money unsigned.
				return wire.Transaction{}, errorf(CodeSignatureMissing, "a transfer-out from an embedded wallet needs the wallet's signature")
			}
			if _, err := s.completeRetry(ctx, tx, op, call, s.activeKeyOf(ctx, tx, src.ID)); err != nil {
				return wire.Transaction{}, err
			}
			if err := s.checkLock(ctx, tx, src.ID); err != nil {
				return wire.Transaction{}, err
			}
		}
		if err := s.checkLimits(ctx, tx, src.ID, dst.ID, amount); err != nil {
			return wire.Transaction{}, err
		}
		description := "Transfer out"
		if req.RemittanceInformation != "" {
			description = req.RemittanceInformation
		}
		x, err := s.newTransfer(ctx, tx, "OUTGOING", src, dst, rail, amount, description)
		if err != nil {
			return wire.Transaction{}, err
		}
		after, err := s.holdPayment(ctx, tx, x, src, amount, x.CreatedAt)
		if err != nil {
			return wire.Transaction{}, err
		}
		if after == nil {
			return wire.Transaction{}, insufficient(src, amount)
		}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			return wire.Transaction{}, err
		}
		if err := s.emitTransfer(ctx, tx, x); err != nil {
			return wire.Transaction{}, err
		}
		if err := s.emitWallet(ctx, tx, after); err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(x), nil
	})
	if err != nil {
		return Signed[wire.Transaction]{}, err
	}
	return done(x), nil
}

// insufficient is the refusal of a payment the available balance does not
// cover.
func insufficient(src *store.InternalAccount, amount int64) error {
	return &Error{Code: "INSUFFICIENT_BALANCE",
		Message: fmt.Sprintf("the available balance (%d) does not cover amount (%d)", src.Available, amount),
		Details: map[string]any{"available": src.Available, "required": amount}}
}

// ---- deposits by reference

// DepositRequest is an incoming bank credit to record (RecordDeposit).
type DepositRequest struct {
	// Reference is the deposit reference the payment quoted (see
	// store.ParseDepositReference for what is accepted).
	Reference string `json:"reference"`
	// Amount is what arrived, in the smallest unit of Currency.
	Amount   *int64 `json:"amount"`
	Currency string `json:"currency"`
	// BankReference is the bank's own reference of the credit, required:
	// it is unique per account (compared without case and spaces), so
	// recording one credit twice — an operator running the command again
	// after a timeout — is refused. SenderName is optional.
	SenderName    string `json:"senderName"`
	BankReference string `json:"bankReference"`
}

// RecordDeposit credits the internal account whose deposit reference an
// incoming bank credit quoted, and records the COMPLETED INCOMING
// transaction (with INCOMING_PAYMENT.COMPLETED and the balance event). It
// is how money arrives in production: the operator calls it (`paymentsd
// deposit`) for each credit on the receiving bank account. An unknown
// reference is 404 REFERENCE_NOT_FOUND; a currency other than the
// account's, a bad amount or a repeated bank reference are refused.
//
// A reference of a just-in-time funded quote (source REALTIME_FUNDING,
// realtime.go) instead executes that quote and answers its transaction,
// now PROCESSING: the payment must be exactly the quote's
// totalSendingAmount in its sending currency and arrive while the quote is
// PENDING, else it is refused and the operator returns the money to its
// sender (senderName and bankReference are not recorded for it).
func (s *Service) RecordDeposit(ctx context.Context, req DepositRequest) (wire.Transaction, error) {
	var fe fieldErrors
	ref, refOK := store.ParseDepositReference(req.Reference)
	switch {
	case strings.TrimSpace(req.Reference) == "":
		fe.add("reference", "required")
	case !refOK:
		fe.add("reference", fmt.Sprintf("is not a deposit reference: %d letters and digits whose last one checks the others (mistyped?)", store.DepositReferenceLength))
	}
	checkAmount(&fe, "amount", req.Amount)
	switch {
	case req.Currency == "":
		fe.add("currency", "required")
	case !currencyCode(req.Currency):
		fe.addConstraint("currency", "must be a three-letter currency code", wire.FieldConstraint{Pattern: "^[A-Z]{3,4}$"})
	}
	if utf8.RuneCountInString(req.SenderName) > 255 || !plainText(req.SenderName) {
		fe.add("senderName", "must be at most 255 characters of text without control characters")
	}
	req.BankReference = strings.ToUpper(strings.Join(strings.Fields(req.BankReference), ""))
	switch {
	case req.BankReference == "":
		fe.add("bankReference", "required: the bank's own reference of the credit, so that one credit is recorded once")
	case len(req.BankReference) > 64 || !plainText(req.BankReference):
		fe.add("bankReference", "must be at most 64 characters of text without control characters")
	}
	if e := fe.err(); e != nil {
		return wire.Transaction{}, e
	}
	// A just-in-time funded quote's reference executes the quote (realtime.go).
	if out, found, err := s.recordQuoteDeposit(ctx, ref, req); found {
		return out, err
	}
	// Read the account first to take its turn (the credit updates its row).
	var accountID string
	_ = s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := tx.InternalAccountByDepositReference(ctx, ref)
		if err == nil {
			accountID = a.ID
		}
		return err
	})
	return commit(ctx, s, accountID, nil, func(tx store.Tx) (wire.Transaction, error) {
		a, err := tx.InternalAccountByDepositReference(ctx, ref)
		if errors.Is(err, store.ErrNotFound) {
			return wire.Transaction{}, &Error{Code: "REFERENCE_NOT_FOUND", Message: "no internal account has the deposit reference " + ref,
				Details: map[string]any{"reference": ref}}
		}
		if err != nil {
			return wire.Transaction{}, err
		}
		var fe fieldErrors
		if req.Currency != a.Currency {
			fe.addConstraint("currency", "the account with this reference holds "+a.Currency+", not "+req.Currency+
				"; a deposit in another currency cannot be credited to it", wire.FieldConstraint{Enum: []string{a.Currency}})
		}
		switch {
		case a.CustomerID == "":
			fe.add("reference", "names a platform account; deposits are recorded for customers' accounts")
		case a.Status != "ACTIVE":
			fe.add("reference", "names an account that is "+a.Status+"; only ACTIVE accounts can be credited")
		}
		if e := fe.err(); e != nil {
			return wire.Transaction{}, e
		}
		cust, err := tx.GetCustomer(ctx, a.CustomerID)
		if err != nil {
			return wire.Transaction{}, err
		}
		now := s.now()
		id := ids.New("Transaction")
		description := "Bank deposit"
		if req.SenderName != "" {
			description += " from " + req.SenderName
		}
		x := &store.Transaction{
			ID: id, Type: "INCOMING", Status: "COMPLETED", CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
			DestinationAccountID: a.ID, SendingCurrency: a.Currency, ReceivingCurrency: a.Currency,
			SentAmount: *req.Amount, ReceivedAmount: *req.Amount, ExchangeRate: 1, PaymentRail: "BANK_TRANSFER",
			Description: description, Reference: reference(id), SettledAt: now, CreatedAt: now, UpdatedAt: now,
		}
		if req.BankReference != "" {
			x.Reference = req.BankReference
		}
		if err := tx.CreateTransaction(ctx, x); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return wire.Transaction{}, &Error{Code: CodeConflict,
					Message: "a deposit with bank reference " + req.BankReference + " was already recorded for this account",
					Details: map[string]any{"bankReference": req.BankReference}}
			}
			return wire.Transaction{}, err
		}
		if err := s.credit(ctx, tx, ledger.KindDeposit, "Deposit received", x, ledger.Unmatched(a.Currency), a.ID, now); err != nil {
			return wire.Transaction{}, err
		}
		if err := s.emitTransaction(ctx, tx, x); err != nil {
			return wire.Transaction{}, err
		}
		if err := s.emitBalance(ctx, tx, a.ID); err != nil {
			return wire.Transaction{}, err
		}
		return s.transactionJSON(x), nil
	})
}

// ---- settlement and events

// emitTransfer records a transfer's event for its current status. The
// reference has no INCOMING_PAYMENT.PROCESSING: an incoming transfer that
// starts processing is sent as INCOMING_PAYMENT.PENDING, its data saying
// PROCESSING (the sequence orders the two).
func (s *Service) emitTransfer(ctx context.Context, tx store.Tx, x *store.Transaction) error {
	typ := transactionEventType(x)
	if x.Type == "INCOMING" && x.Status == "PROCESSING" {
		typ = "INCOMING_PAYMENT.PENDING"
	}
	return s.emit(ctx, tx, typ, x.ID, s.transactionJSON(x))
}

// transferTurn is the internal account whose money a transfer's step moves.
func transferTurn(x *store.Transaction) string {
	if x.Type == "INCOMING" {
		return x.DestinationAccountID
	}
	return x.SourceAccountID
}

// transferStep is the due step of a transfer x (a transaction without a
// quote) as next, with the money it moves:
//
//	PENDING    → PROCESSING      the pull or payout is under way; due again after the rail's time (005: 30 s)
//	PROCESSING → COMPLETED       in: the account is credited; out: the held money leaves
//	PROCESSING → FAILED          (002, 003, 004, 005) in: nothing was credited; out: the held money returns
func (s *Service) transferStep(ctx context.Context, tx store.Tx, x *store.Transaction, next *store.Transaction, known []ledger.Transaction, now time.Time) (func() error, error) {
	in := x.Type == "INCOMING"
	switch x.Status {
	case "PENDING":
		next.Status = "PROCESSING"
		if x.Outcome == transferLongThenFail {
			next.NextStepAt = now.Add(transferLongDelay)
		} else {
			next.NextStepAt = now.Add(s.settleAfter(x.PaymentRail, ""))
		}
		return nil, nil
	case "PROCESSING":
		if x.Outcome == "" && in {
			// The account may have closed meanwhile (its customer was
			// deleted): then the pull fails and nothing is credited.
			dst, err := tx.GetInternalAccount(ctx, x.DestinationAccountID)
			if err != nil {
				return nil, err
			}
			if dst.Status != "ACTIVE" {
				next.Status, next.FailureReason = "FAILED", transferFailure(x.Type, transferAccountClosed)
				return nil, nil
			}
		}
		if x.Outcome == "" {
			next.Status, next.SettledAt = "COMPLETED", now
			if in {
				return func() error {
					return s.credit(ctx, tx, ledger.KindIncoming, "Transfer in", x,
						ledger.Clearing(x.PaymentRail, x.SendingCurrency), x.DestinationAccountID, now)
				}, nil
			}
			return func() error { return s.payOut(ctx, tx, x, x.SourceAccountID, known, now) }, nil
		}
		next.Status, next.FailureReason = "FAILED", transferFailure(x.Type, x.Outcome)
		if in {
			return nil, nil
		}
		return func() error {
			return s.voidPayment(ctx, tx, x, x.SourceAccountID, "Transfer failed, money back", known, now)
		}, nil
	}
	return nil, nil // nothing is due in this state; the stray mark is cleared
}
