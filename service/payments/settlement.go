package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// The settlement worker moves transactions along once their NextStepAt has
// passed. There is no bank or card network behind this service: a payment
// "leaves" when the worker completes it after the rail's settlement time
// (rates.Rail.SettleAfter, or Config.SettlementDelay), and the outcome the
// (simulated) network gives was fixed when the quote was made (see
// outcomeOf). The transitions, all compare-and-set on the status so that
// several workers (instances) never apply one twice:
//
//	PENDING    → EXPIRED (failureReason QUOTE_EXPIRED) once the quote's expiresAt passed
//	PENDING_AUTHORIZATION → EXPIRED (failureReason SCA_NOT_COMPLETED) likewise: not confirmed in time
//	PROCESSING → COMPLETED                      held money leaves; settledAt = now
//	PROCESSING → FAILED QUOTE_EXECUTION_FAILED   (sandbox 002) held money returns to available
//	PROCESSING → FAILED OFFRAMP_FAILED           (sandbox 004) held money returns to available
//	PROCESSING → COMPLETED, then REFUNDED        (sandbox 005) the payment comes back and is credited
//	PROCESSING → REJECTED                        (sandbox 006) recipient cancelled; held money returns
//	PROCESSING → FAILED OFFRAMP_FAILED           (sandbox 007) the refund failed too: money stays held
//	PROCESSING stays for Config.LongPaymentDelay (sandbox 003), then COMPLETED
//
// Transfers (transactions without a quote: transfer-in and transfer-out,
// transfers.go) have their own steps, see transferStep: PENDING →
// PROCESSING at once, then COMPLETED (an incoming transfer credits the
// account, an outgoing one's held money leaves) or FAILED (sandbox 002–005).

// settlementTurn is the internal account whose money a step of x moves
// (and whose turn the step takes): the source of a payment, the
// destination of an incoming transfer.
func settlementTurn(x *store.Transaction) string {
	if x.QuoteID == "" {
		return transferTurn(x)
	}
	return x.SourceAccountID
}

// settleAfter is how long a payment on the rail stays PROCESSING.
func (s *Service) settleAfter(rail, outcome string) time.Duration {
	if outcome == "003" {
		return s.cfg.LongPaymentDelay
	}
	if s.cfg.SettlementDelay > 0 {
		return s.cfg.SettlementDelay
	}
	if r, ok := s.rates.Rail(rail); ok {
		return r.SettleAfter
	}
	return 2 * time.Second
}

// SettleDue applies every transition that is due now, each in its own store
// transaction, and reports how many it applied.
func (s *Service) SettleDue(ctx context.Context) (int, error) {
	done := 0
	var failed error
	// The round's figures for the metrics: the due payments it found
	// (each once), how many it applied, when the oldest was due.
	seen := map[string]bool{}
	var oldest time.Time
	start := s.now()
	defer func() {
		if ctx.Err() == nil {
			s.metrics.settlementRound(len(seen), done, oldest, start)
		}
	}()
	for {
		var due []store.Transaction
		err := s.store.Tx(ctx, func(tx store.Tx) error {
			var err error
			due, err = tx.DueTransactions(ctx, s.now(), 100)
			return err
		})
		if err != nil {
			return done, err
		}
		for i := range due {
			seen[due[i].ID] = true
			if at := due[i].NextStepAt; !at.IsZero() && (oldest.IsZero() || at.Before(oldest)) {
				oldest = at
			}
		}
		progressed := 0
		for i := range due {
			applied, err := s.settleOne(ctx, &due[i])
			if err != nil {
				if ctx.Err() != nil {
					return done, err
				}
				// One transaction that cannot move must not hold up
				// everyone else's: it is logged (again at each pass,
				// for an operator to see) and the others go on.
				s.log.ErrorContext(ctx, "settlement step failed; the others go on", "transaction", due[i].ID, "err", err)
				failed = errors.Join(failed, err)
				continue
			}
			if applied {
				done++
				progressed++
			}
		}
		if len(due) < 100 || progressed == 0 {
			return done, failed
		}
	}
}

// SettleTransaction applies the due transition of one transaction, as the
// settlement worker does, and reports whether there was one to apply (false:
// not due, settled meanwhile, or another worker holds it).
func (s *Service) SettleTransaction(ctx context.Context, id string) (bool, error) {
	var x *store.Transaction
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		var err error
		x, err = tx.GetTransaction(ctx, id)
		return err
	})
	if err != nil {
		return false, err
	}
	return s.settleOne(ctx, x)
}

// settleOne claims the transaction and applies its due transition, if it
// is still due and no other worker holds it. The claim is a row lock (see
// store.Tx.ClaimDueTransaction): with several instances, a second worker
// passes the row over instead of waiting for it; the compare-and-set on the
// status below stays as the guarantee that a step is applied once.
//
// seen is the transaction as the caller last read it. The step moves the
// money of its wallet (settlementTurn), so it takes that wallet's turn like
// an execute does.
func (s *Service) settleOne(ctx context.Context, seen *store.Transaction) (bool, error) {
	id, wallet := seen.ID, settlementTurn(seen)
	applied := false
	// Only a step from PROCESSING (a payment leaving or failing) or from
	// COMPLETED (a return) needs the payment's earlier ledger
	// transactions; an expiry or a transfer starting reads none. The
	// status seen may be stale: a step that finds nothing known reads in
	// its own transaction (lookUp).
	var known []ledger.Transaction
	if seen.Status == "PROCESSING" || seen.Status == "COMPLETED" {
		known = s.booksOf(ctx, id)
	}
	err := s.tx(ctx, wallet, func(tx store.Tx) error {
		applied = false
		now := s.now()
		x, err := tx.ClaimDueTransaction(ctx, id, now)
		if errors.Is(err, store.ErrNotFound) {
			return nil // settled meanwhile, or another worker has it
		}
		if err != nil {
			return err
		}
		next := *x
		next.UpdatedAt, next.NextStepAt = now, time.Time{}
		var money func() error
		switch {
		case x.SenderUmaAddress != "":
			// An incoming UMA payment (incoming.go).
			money = s.incomingUmaStep(ctx, tx, x, &next, now)
		case x.QuoteID == "":
			// A transfer (transfers.go): its own steps.
			if money, err = s.transferStep(ctx, tx, x, &next, known, now); err != nil {
				return err
			}
		case x.Status == "PENDING":
			next.Status, next.FailureReason = "EXPIRED", "QUOTE_EXPIRED"
		case x.Status == "PENDING_AUTHORIZATION":
			// The person did not confirm in time (stepup.go).
			next.Status, next.FailureReason = "EXPIRED", "SCA_NOT_COMPLETED"
		case x.Status == "PROCESSING":
			switch x.Outcome {
			case "", "003":
				next.Status, next.SettledAt = "COMPLETED", now
				money = func() error { return s.payOut(ctx, tx, x, x.SourceAccountID, known, now) }
			case "005":
				next.Status, next.SettledAt = "COMPLETED", now
				next.NextStepAt = now.Add(s.settleAfter(x.PaymentRail, ""))
				money = func() error { return s.payOut(ctx, tx, x, x.SourceAccountID, known, now) }
			case "002":
				next.Status, next.FailureReason = "FAILED", "QUOTE_EXECUTION_FAILED"
				money = func() error {
					return s.voidPayment(ctx, tx, x, x.SourceAccountID, "Payment failed, money back", known, now)
				}
			case "004":
				next.Status, next.FailureReason = "FAILED", "OFFRAMP_FAILED"
				money = func() error {
					return s.voidPayment(ctx, tx, x, x.SourceAccountID, "Payment failed, money back", known, now)
				}
			case "006":
				next.Status = "REJECTED"
				money = func() error {
					return s.voidPayment(ctx, tx, x, x.SourceAccountID, "Payment rejected by the recipient, money back", known, now)
				}
			case "007":
				next.Status, next.FailureReason = "FAILED", "OFFRAMP_FAILED"
			default:
				return fmt.Errorf("service: transaction %s has unknown outcome %q", x.ID, x.Outcome)
			}
		case x.Status == "COMPLETED" && x.Outcome == "005":
			next.Status, next.FailureReason = "REFUNDED", "OFFRAMP_FAILED"
			money = func() error { return s.returnPayment(ctx, tx, x, x.SourceAccountID, known, now) }
		default:
			// Nothing is due in this state; clear the stray mark.
		}
		transit := x.QuoteID != "" && x.SourceAccountID == ""
		if transit {
			// A just-in-time funded quote's payment (realtime.go): the
			// money came in from outside and no wallet's balance moves.
			// A payout that leaves passes through the books (TRANSIT); a
			// failed or returned one is returned by the operator.
			money = nil
			if x.Status == "PROCESSING" && next.Status == "COMPLETED" {
				money = func() error { return s.passThrough(ctx, tx, x, now) }
			}
		}
		won, err := tx.AdvanceTransaction(ctx, &next, x.Status)
		if err != nil || !won {
			return err
		}
		if money != nil {
			if err := money(); err != nil {
				return err
			}
		}
		if next.Status != x.Status {
			emit := s.emitTransaction
			if x.QuoteID == "" {
				emit = s.emitTransfer
			}
			if err := emit(ctx, tx, &next); err != nil {
				return err
			}
		}
		if money != nil && !transit {
			if err := s.emitBalance(ctx, tx, settlementTurn(x)); err != nil {
				return err
			}
		}
		applied = true
		return nil
	})
	return applied, err
}
