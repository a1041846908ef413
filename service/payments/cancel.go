package payments

import (
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"paywallet/service/store"
	"paywallet/shared/wire"
)

// Cancelling a bank transfer before it settles (POST
// /transactions/{transactionId}/cancel; the reference's cancelTransaction).
//
// What can be cancelled: a transfer (a transaction without a quote, made by
// POST /transfer-in or /transfer-out, or by an agent's) on a bank rail,
// while it is PENDING or PROCESSING: the (simulated) bank has not settled
// it. It ends FAILED without a failureReason (the reference has no
// cancelled status or reason; no other failure leaves failureReason
// empty): an outgoing transfer's held money returns to the available
// balance, an incoming one was never credited. The transaction's FAILED
// event (and, for an outgoing transfer, the balance event) is recorded in
// the same store transaction.
//
// What cannot: the payment of a quote (the reference: once executed, a
// quote cannot be cancelled; an unexecuted one expires by itself), a
// transfer on a rail that is not a bank's, or a deposit: 400 INVALID_INPUT
// naming transactionId. A transfer that has settled or failed: 409
// TRANSACTION_NOT_CANCELLABLE.
//
// The settlement worker and a cancel never both apply: the cancel clears
// NextStepAt (the worker claims only due rows) and both write the status
// by compare-and-set from the status they read, in transactions that take
// the same account's turn; whichever commits first wins, and the other
// finds the status changed (the worker skips the row; the cancel answers
// 409).

// CodeNotCancellable refuses a cancel of a transaction that has settled or
// is otherwise past the point where it can be cancelled.
const CodeNotCancellable = "TRANSACTION_NOT_CANCELLABLE"

// CancelRequest is the body of POST /transactions/{transactionId}/cancel
// (the reference's CancelTransactionRequest). Reason is for the platform's
// own records: the service logs it with the cancel.
type CancelRequest struct {
	Reason string `json:"reason"`
}

// cancellableKind refuses a transaction that is never cancellable,
// whatever its status.
func cancellableKind(x *store.Transaction) error {
	switch {
	case x.QuoteID != "":
		return invalidField("transactionId", "is the payment of a quote, which cannot be cancelled once executed (an unexecuted quote expires by itself); only transfers (transfer-in, transfer-out) can be cancelled")
	case x.SourceAccountID == "":
		return invalidField("transactionId", "is a deposit or a funding, recorded when the money arrived; only transfers (transfer-in, transfer-out) can be cancelled")
	case !bankRail(x.PaymentRail):
		return invalidField("transactionId", "is a transfer on "+x.PaymentRail+", which is not a bank rail; only bank transfers can be cancelled")
	}
	return nil
}

// bankRail tells whether a transfer on rail is a bank's (the reference
// cancels "bank-rail transfers"): every PaymentRail but mobile-money
// wallets and the UnionPay card network, which no bank's cancellation
// facility reaches.
func bankRail(rail string) bool {
	return slices.Contains(paymentRailNames, rail) && rail != "MOBILE_MONEY" && rail != "UNIONPAY"
}

// notCancellable is the 409 of a transfer past the point of cancelling.
func notCancellable(x *store.Transaction) error {
	return &Error{Code: CodeNotCancellable,
		Message: "the transfer is " + x.Status + ": only a PENDING or PROCESSING transfer, not yet settled, can be cancelled",
		Details: map[string]any{"status": x.Status}}
}

// CancelTransaction cancels a bank transfer that has not settled (see
// above) and answers the transaction, FAILED.
func (s *Service) CancelTransaction(ctx context.Context, id string, req CancelRequest) (wire.Transaction, error) {
	if utf8.RuneCountInString(req.Reason) > 255 || !plainText(req.Reason) {
		return wire.Transaction{}, invalidField("reason", "must be at most 255 characters of text without control characters")
	}
	// Read it first: the kind is refused at once, and the cancel takes the
	// turn of the account whose money it moves, as a settlement step does.
	first, err := read(ctx, s, func(tx store.Tx) (*store.Transaction, error) { return loadTransaction(ctx, tx, id) })
	if err != nil {
		return wire.Transaction{}, err
	}
	if err := cancellableKind(first); err != nil {
		return wire.Transaction{}, err
	}
	known := s.booksOf(ctx, id)
	out, err := commit(ctx, s, transferTurn(first), nil, func(tx store.Tx) (wire.Transaction, error) {
		x, err := loadTransaction(ctx, tx, id)
		if err != nil {
			return wire.Transaction{}, err
		}
		if x.Status != "PENDING" && x.Status != "PROCESSING" {
			return wire.Transaction{}, notCancellable(x)
		}
		now := s.now()
		next := *x
		next.Status, next.FailureReason, next.NextStepAt, next.UpdatedAt = "FAILED", "", time.Time{}, now
		won, err := tx.AdvanceTransaction(ctx, &next, x.Status)
		if err != nil {
			return wire.Transaction{}, err
		}
		if !won {
			// The settlement worker moved it meanwhile.
			cur, err := loadTransaction(ctx, tx, id)
			if err != nil {
				return wire.Transaction{}, err
			}
			return wire.Transaction{}, notCancellable(cur)
		}
		if x.Type == "OUTGOING" {
			if err := s.voidPayment(ctx, tx, x, x.SourceAccountID, "Transfer cancelled, money back", known, now); err != nil {
				return wire.Transaction{}, err
			}
		}
		if err := s.emitTransfer(ctx, tx, &next); err != nil {
			return wire.Transaction{}, err
		}
		if x.Type == "OUTGOING" {
			if err := s.emitBalance(ctx, tx, x.SourceAccountID); err != nil {
				return wire.Transaction{}, err
			}
		}
		return s.transactionJSON(&next), nil
	})
	if err != nil {
		return wire.Transaction{}, err
	}
	s.log.InfoContext(ctx, "transfer cancelled", "transaction", out.ID, "reason", req.Reason)
	return out, nil
}
