package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store"
)

// This file checks store.MoneyTx: balances of internal accounts, quotes,
// transactions and idempotency records.

// ---- test data

// newTransaction makes an outgoing payment of customer c from the internal
// account sourceID to the external account destinationID, with every field
// set; QuoteID names the quote newQuote makes for it.
func newTransaction(c *store.Customer, sourceID, destinationID string) *store.Transaction {
	id := newID("Transaction")
	return &store.Transaction{
		ID:                   id,
		QuoteID:              newID("Quote"),
		Type:                 "OUTGOING",
		Status:               "PENDING",
		CustomerID:           c.ID,
		PlatformCustomerID:   c.PlatformCustomerID,
		SourceAccountID:      sourceID,
		DestinationAccountID: destinationID,
		SendingCurrency:      "USDC",
		ReceivingCurrency:    "MXN",
		SentAmount:           10_000,
		ReceivedAmount:       171_234,
		Fees:                 150,
		ExchangeRate:         0.1 + 0.2, // 0.30000000000000004: all 64 bits must survive
		RateDetails: []byte(`{"counterpartyFixedFee":100,"counterpartyMultiplier":17.1234,` +
			`"gridApiFixedFee":50,"gridApiMultiplier":1}`),
		PaymentRail:        "SPEI",
		Description:        "Rent for Zoë ✓",
		FailureReason:      "LIMIT_EXCEEDED",
		Outcome:            "004",
		Reference:          "UMA-" + id[len(id)-12:],
		Counterparty:       []byte(`{"birthDate":"1990-01-01","fullName":"Zoë Ñandú O'Brien","nationality":"MX"}`),
		NextStepAt:         at(15 * time.Minute),
		SettledAt:          at(16 * time.Minute),
		ReceiptConfirmedAt: at(17 * time.Minute),
		CreatedAt:          at(20 * time.Second),
		UpdatedAt:          at(21 * time.Second),
	}
}

// newIncoming makes a completed funding of the internal account
// destinationID: no quote, no source, no rate details, no optional times.
func newIncoming(c *store.Customer, destinationID string) *store.Transaction {
	return &store.Transaction{
		ID:                   newID("Transaction"),
		Type:                 "INCOMING",
		Status:               "COMPLETED",
		CustomerID:           c.ID,
		PlatformCustomerID:   c.PlatformCustomerID,
		DestinationAccountID: destinationID,
		SendingCurrency:      "USD",
		ReceivingCurrency:    "USDC",
		SentAmount:           5_000,
		ReceivedAmount:       5_000,
		ExchangeRate:         1,
		CreatedAt:            at(22 * time.Second),
		UpdatedAt:            at(22 * time.Second),
	}
}

// newQuote makes the quote of an outgoing transaction made by newTransaction.
func newQuote(x *store.Transaction) *store.Quote {
	return &store.Quote{
		ID:                   x.QuoteID,
		TransactionID:        x.ID,
		CustomerID:           x.CustomerID,
		SourceAccountID:      x.SourceAccountID,
		DestinationAccountID: x.DestinationAccountID,
		PaymentRail:          x.PaymentRail,
		LockedSide:           "SENDING",
		LockedAmount:         x.SentAmount,
		SendingCurrency:      x.SendingCurrency,
		ReceivingCurrency:    x.ReceivingCurrency,
		TotalSendingAmount:   x.SentAmount,
		TotalReceivingAmount: x.ReceivedAmount,
		FeesIncluded:         x.Fees,
		ExchangeRate:         x.ExchangeRate,
		RateDetails:          slices.Clone(x.RateDetails),
		// Byte for byte: the signature covers it.
		Payload: `{"organizationId":"org-ü","parameters":{"amount":"10000"},"timestampMs":"1795000000000"}` +
			"\n\x00\xff tail ",
		Description: x.Description,
		CreatedAt:   x.CreatedAt,
		ExpiresAt:   x.CreatedAt.Add(5 * time.Minute),
	}
}

func newIdempotencyRecord(scope string, created time.Time) *store.IdempotencyRecord {
	key := newID("Key")
	h := sha256.Sum256([]byte(scope + " " + key))
	return &store.IdempotencyRecord{
		Scope:       scope,
		Key:         key[len("Key:"):], // a client-made UUID
		RequestHash: h[:],
		Status:      201,
		Body:        []byte(`{"id":"Quote:019aa5d2-7c10-7000-8000-000000000001","status":"PENDING","note":"Zoë ✓"}`),
		CreatedAt:   created,
	}
}

// payer creates a customer with an internal account (the source of its
// payments) and an external account (their destination).
func (f *fixture) payer() (*store.Customer, *store.InternalAccount, *store.ExternalAccount) {
	f.Helper()
	c := f.customers(1)[0]
	a := newAccount(c.ID)
	e := newExternalAccount(c.ID)
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateInternalAccount(f.ctx, a); err != nil {
			return err
		}
		return tx.CreateExternalAccount(f.ctx, e)
	})
	return c, a, e
}

// createTransactions stores the transactions in one Tx.
func (f *fixture) createTransactions(xs ...*store.Transaction) {
	f.Helper()
	f.tx(func(tx store.Tx) error {
		for _, x := range xs {
			if err := tx.CreateTransaction(f.ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
}

// account reads an internal account back.
func (f *fixture) account(id string) store.InternalAccount {
	f.Helper()
	var a store.InternalAccount
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetInternalAccount(f.ctx, id)
		if err != nil {
			return err
		}
		a = *got
		return nil
	})
	return a
}

// transaction reads a transaction back.
func (f *fixture) transaction(id string) store.Transaction {
	f.Helper()
	var x store.Transaction
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetTransaction(f.ctx, id)
		if err != nil {
			return err
		}
		x = *got
		return nil
	})
	return x
}

// credit funds an account that exists and returns it as stored afterwards.
func (f *fixture) credit(id string, amount int64, when time.Time) store.InternalAccount {
	f.Helper()
	f.tx(func(tx store.Tx) error { return ledgerCredit(tx, f.ctx, id, amount, when) })
	return f.account(id)
}

// checkFound is check for a Get that returns a pointer, which is nil on
// error.
func checkFound[T any](got *T, err error, want T) error {
	if err != nil {
		return err
	}
	return check(nil, *got, want)
}

func transactionIDs(xs []store.Transaction) []string {
	return ids(xs, func(x *store.Transaction) string { return x.ID })
}

// ---- balances

// balanceMove is one of the four balance methods with a common signature:
// ok is Hold's answer, and for the others whether they returned nil.
type balanceMove func(ctx context.Context, tx store.Tx, id string, amount int64, at time.Time) (bool, error)

var balanceMoves = map[string]balanceMove{
	"Credit": func(ctx context.Context, tx store.Tx, id string, amount int64, at time.Time) (bool, error) {
		err := ledgerCredit(tx, ctx, id, amount, at)
		return err == nil, err
	},
	"Hold": func(ctx context.Context, tx store.Tx, id string, amount int64, at time.Time) (bool, error) {
		return ledgerHold(tx, ctx, id, amount, at)
	},
	"ReleaseHold": func(ctx context.Context, tx store.Tx, id string, amount int64, at time.Time) (bool, error) {
		err := ledgerRelease(tx, ctx, id, amount, at)
		return err == nil, err
	},
	"SettleHold": func(ctx context.Context, tx store.Tx, id string, amount int64, at time.Time) (bool, error) {
		err := ledgerSettle(tx, ctx, id, amount, at)
		return err == nil, err
	},
}

// What a balance move must do.
const (
	moved   = iota // done: the balances and UpdatedAt change
	refused        // Hold only: false, nil (insufficient funds), nothing changes
	failed         // an error, nothing changes
)

// testBalances runs the balance methods one after the other on one account,
// each in its own committed Tx, and reads the account back after each, by
// GetInternalAccount and by ListInternalAccounts. Refused and failed moves
// change nothing, UpdatedAt included, even though the caller commits.
func testBalances(f *fixture) {
	c, a, _ := f.payer()
	bystander := newAccount(c.ID)
	f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, bystander) })
	if got := f.account(a.ID); got.Available != 0 || got.Held != 0 {
		f.Fatalf("a new account has available %d held %d, want 0 0", got.Available, got.Held)
	}
	f.credit(bystander.ID, 500, at(time.Second))
	f.tx(func(tx store.Tx) error {
		ok, err := ledgerHold(tx, f.ctx, bystander.ID, 70, at(2*time.Second))
		if err == nil && !ok {
			err = errors.New("hold of 70 out of 500 refused")
		}
		return err
	})
	wantBystander := f.account(bystander.ID)
	same(f, "the bystander's balances", [2]int64{wantBystander.Available, wantBystander.Held}, [2]int64{430, 70})

	steps := []struct {
		name            string
		op              string
		amount          int64
		outcome         int
		available, held int64 // afterwards
	}{
		{"first funding", "Credit", 100, moved, 100, 0},
		{"second funding adds", "Credit", 1, moved, 101, 0},
		{"hold part", "Hold", 30, moved, 71, 30},
		{"hold all that is left", "Hold", 71, moved, 0, 101},
		{"hold with nothing available", "Hold", 1, refused, 0, 101},
		{"release part", "ReleaseHold", 40, moved, 40, 61},
		{"settle all that is held", "SettleHold", 61, moved, 40, 0},
		{"settle with nothing held", "SettleHold", 1, failed, 40, 0},
		{"release with nothing held", "ReleaseHold", 1, failed, 40, 0},
		{"hold one more than available", "Hold", 41, refused, 40, 0},
		{"hold exactly what is available", "Hold", 40, moved, 0, 40},
		{"release one more than held", "ReleaseHold", 41, failed, 0, 40},
		{"settle one more than held", "SettleHold", 41, failed, 0, 40},
		{"release all that is held", "ReleaseHold", 40, moved, 40, 0},
		{"hold after a release", "Hold", 15, moved, 25, 15},
		{"credit while some is held", "Credit", 5, moved, 30, 15},
		{"settle the rest exactly", "SettleHold", 15, moved, 30, 0},
		{"credit of zero", "Credit", 0, failed, 30, 0},
		{"negative credit", "Credit", -10, failed, 30, 0},
		{"hold of zero", "Hold", 0, failed, 30, 0},
		{"negative hold", "Hold", -10, failed, 30, 0},
		{"release of zero", "ReleaseHold", 0, failed, 30, 0},
		{"negative release", "ReleaseHold", -10, failed, 30, 0},
		{"settle of zero", "SettleHold", 0, failed, 30, 0},
		{"negative settle", "SettleHold", -10, failed, 30, 0},
	}
	want := f.account(a.ID)
	for i, s := range steps {
		when := at(time.Duration(i+1) * time.Minute)
		f.Run(fmt.Sprintf("%s %d, %s", s.op, s.amount, s.name), func(t *testing.T) {
			var ok bool
			var moveErr error
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				ok, moveErr = balanceMoves[s.op](f.ctx, tx, a.ID, s.amount, when)
				return nil // commit whatever a refused or failed move may have done
			})
			if err != nil {
				t.Fatalf("Tx: %v", err)
			}
			switch s.outcome {
			case moved:
				if moveErr != nil || !ok {
					t.Errorf("%s(%d) = %v, %v; want it done", s.op, s.amount, ok, moveErr)
				}
				want.UpdatedAt = when
			case refused:
				if moveErr != nil || ok {
					t.Errorf("%s(%d) = %v, %v; want false, nil (insufficient funds)", s.op, s.amount, ok, moveErr)
				}
			case failed:
				switch {
				case moveErr == nil:
					t.Errorf("%s(%d) = %v, nil; want an error", s.op, s.amount, ok)
				case errors.Is(moveErr, store.ErrNotFound):
					t.Errorf("%s(%d) on an existing account: %v, want an error other than ErrNotFound", s.op, s.amount, moveErr)
				}
			}
			want.Available, want.Held = s.available, s.held
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetInternalAccount(f.ctx, a.ID)
				if err != nil {
					return err
				}
				same(t, "GetInternalAccount", *got, want)
				p, err := tx.ListInternalAccounts(f.ctx, store.InternalAccountFilter{CustomerID: c.ID})
				if err != nil {
					return err
				}
				same(t, "ListInternalAccounts (the account, then an account nobody touched)",
					p.Items, []store.InternalAccount{want, wantBystander})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	CheckBooks(f, f.s)
}

// testHoldRace: goroutines holding the same amount on one account at once,
// each in its own Tx, never take more than there is: exactly as many win as
// the funds cover.
func testHoldRace(f *fixture) {
	const n, amount = 16, 7
	cases := []struct {
		name  string
		funds int64
		wins  int
	}{
		{"funded for exactly 5", 5 * amount, 5},
		{"one short of 6", 6*amount - 1, 5},
		{"funded for all", n * amount, n},
		{"funded for none", amount - 1, 0},
	}
	c := f.customers(1)[0]
	when := func(i int) time.Time { return at(time.Duration(i+1) * time.Second) }
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			a := newAccount(c.ID)
			f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, a) })
			funded := f.credit(a.ID, tc.funds, at(-time.Hour))
			var wins atomic.Int32
			won := make([]bool, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					err := f.s.Tx(f.ctx, func(tx store.Tx) error {
						// Read first, as the service does.
						if _, err := tx.GetInternalAccount(f.ctx, a.ID); err != nil {
							return err
						}
						var err error
						won[i], err = ledgerHold(tx, f.ctx, a.ID, amount, when(i)) // a retried fn overwrites
						return err
					})
					if err != nil {
						t.Errorf("goroutine %d: %v", i, err)
						return
					}
					if won[i] {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if int(wins.Load()) != tc.wins {
				t.Errorf("%d Holds of %d on %d succeeded, want %d", wins.Load(), amount, tc.funds, tc.wins)
			}
			got := f.account(a.ID)
			held := int64(wins.Load()) * amount
			if got.Available != tc.funds-held || got.Held != held {
				t.Errorf("available %d held %d after %d Holds of %d on %d, want %d %d",
					got.Available, got.Held, wins.Load(), amount, tc.funds, tc.funds-held, held)
			}
			if got.Available+got.Held != tc.funds {
				t.Errorf("available %d + held %d is not the %d funded", got.Available, got.Held, tc.funds)
			}
			winnersAt := []time.Time{}
			for i, w := range won {
				if w {
					winnersAt = append(winnersAt, when(i))
				}
			}
			switch {
			case len(winnersAt) == 0 && !got.UpdatedAt.Equal(funded.UpdatedAt):
				t.Errorf("UpdatedAt %v after only refused Holds, want the funding's %v", got.UpdatedAt, funded.UpdatedAt)
			case len(winnersAt) > 0 && !slices.ContainsFunc(winnersAt, got.UpdatedAt.Equal):
				t.Errorf("UpdatedAt %v is no winner's time %v", got.UpdatedAt, winnersAt)
			}
			CheckBooks(t, f.s)
		})
	}
}

// testCreditRace: concurrent Credits (and Holds that the funds cover) on one
// account, each in its own Tx, all land.
func testCreditRace(f *fixture) {
	const n, initial, hold = 16, 1000, 10
	cases := []struct {
		name  string
		holds bool // odd goroutines hold instead of crediting
	}{
		{"credits", false},
		{"credits and holds", true},
	}
	c := f.customers(1)[0]
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			f := f.sub(t)
			a := newAccount(c.ID)
			f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, a) })
			f.credit(a.ID, initial, at(-time.Hour))
			var wantAvailable, wantHeld int64 = initial, 0
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				holds := tc.holds && i%2 == 1
				if holds {
					wantAvailable -= hold
					wantHeld += hold
				} else {
					wantAvailable += int64(i + 1)
				}
				wg.Go(func() {
					<-start
					err := f.s.Tx(f.ctx, func(tx store.Tx) error {
						if _, err := tx.GetInternalAccount(f.ctx, a.ID); err != nil {
							return err
						}
						if !holds {
							return ledgerCredit(tx, f.ctx, a.ID, int64(i+1), at(time.Duration(i)*time.Second))
						}
						ok, err := ledgerHold(tx, f.ctx, a.ID, hold, at(time.Duration(i)*time.Second))
						if err == nil && !ok {
							err = fmt.Errorf("hold of %d refused although at least %d is available", hold, initial-n*hold)
						}
						return err
					})
					if err != nil {
						t.Errorf("goroutine %d: %v", i, err)
					}
				})
			}
			close(start)
			wg.Wait()
			got := f.account(a.ID)
			if got.Available != wantAvailable || got.Held != wantHeld {
				t.Errorf("available %d held %d, want %d %d", got.Available, got.Held, wantAvailable, wantHeld)
			}
			CheckBooks(t, f.s)
		})
	}
}

// testMoneyRollback: balance moves and money records of a Tx whose fn
// returns an error are undone.
func testMoneyRollback(f *fixture) {
	sentinel := errors.New("handler refused")
	c, a, e := f.payer()
	f.credit(a.ID, 100, at(time.Minute))
	f.tx(func(tx store.Tx) error {
		ok, err := ledgerHold(tx, f.ctx, a.ID, 20, at(2*time.Minute))
		if err == nil && !ok {
			err = errors.New("hold of 20 out of 100 refused")
		}
		return err
	})
	before := f.account(a.ID) // 80 available, 20 held
	pending := newTransaction(c, a.ID, e.ID)
	f.createTransactions(pending)
	pendingBefore := f.transaction(pending.ID)

	x := newTransaction(c, a.ID, e.ID)
	q := newQuote(x)
	r := newIdempotencyRecord("quotes.create", at(time.Hour))
	cases := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"Credit", func(tx store.Tx) error { return ledgerCredit(tx, f.ctx, a.ID, 50, at(time.Hour)) }},
		{"Hold", func(tx store.Tx) error {
			ok, err := ledgerHold(tx, f.ctx, a.ID, 80, at(time.Hour))
			if err == nil && !ok {
				err = errors.New("hold of 80 out of 80 refused")
			}
			return err
		}},
		{"ReleaseHold", func(tx store.Tx) error { return ledgerRelease(tx, f.ctx, a.ID, 20, at(time.Hour)) }},
		{"SettleHold", func(tx store.Tx) error { return ledgerSettle(tx, f.ctx, a.ID, 20, at(time.Hour)) }},
		{"all moves, a payment and an idempotency record", func(tx store.Tx) error {
			if err := ledgerCredit(tx, f.ctx, a.ID, 50, at(time.Hour)); err != nil {
				return err
			}
			if ok, err := ledgerHold(tx, f.ctx, a.ID, 130, at(time.Hour)); err != nil || !ok {
				return fmt.Errorf("hold of 130 out of 130 = %v, %v", ok, err)
			}
			if err := ledgerSettle(tx, f.ctx, a.ID, 150, at(time.Hour)); err != nil {
				return err
			}
			if err := tx.CreateTransaction(f.ctx, x); err != nil {
				return err
			}
			if err := tx.CreateQuote(f.ctx, q); err != nil {
				return err
			}
			adv := pendingBefore
			adv.Status, adv.UpdatedAt = "PROCESSING", at(time.Hour)
			if ok, err := tx.AdvanceTransaction(f.ctx, &adv, "PENDING"); err != nil || !ok {
				return fmt.Errorf("AdvanceTransaction = %v, %v", ok, err)
			}
			if err := tx.ConfirmReceipt(f.ctx, pending.ID, at(time.Hour), at(time.Hour)); err != nil {
				return err
			}
			return tx.PutIdempotencyRecord(f.ctx, r)
		}},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				if err := tc.fn(tx); err != nil {
					return fmt.Errorf("before the refusal: %w", err)
				}
				return sentinel
			})
			if err != sentinel { //nolint:errorlint // the contract is "unchanged", not "wrapped"
				t.Fatalf("Tx returned %v, want the sentinel itself", err)
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetInternalAccount(f.ctx, a.ID)
				if err != nil {
					return err
				}
				same(t, "account after the rolled-back Tx", *got, before)
				gotX, err := tx.GetTransaction(f.ctx, pending.ID)
				if err != nil {
					return err
				}
				same(t, "transaction after the rolled-back Tx", *gotX, pendingBefore)
				_, err = tx.GetTransaction(f.ctx, x.ID)
				wantErr(t, "transaction created in the rolled-back Tx", err, store.ErrNotFound)
				_, err = tx.GetQuote(f.ctx, q.ID)
				wantErr(t, "quote created in the rolled-back Tx", err, store.ErrNotFound)
				_, err = tx.GetIdempotencyRecord(f.ctx, r.Scope, r.Key)
				wantErr(t, "idempotency record put in the rolled-back Tx", err, store.ErrNotFound)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	CheckBooks(f, f.s)
}

// ---- quotes

func testQuoteRoundTrip(f *fixture) {
	c, a, e := f.payer()
	// Each quote needs a transaction of its own.
	quoteOf := func(mod func(q *store.Quote)) *store.Quote {
		x := newTransaction(c, a.ID, e.ID)
		f.createTransactions(x)
		q := newQuote(x)
		if mod != nil {
			mod(q)
		}
		return q
	}
	full := quoteOf(nil)
	receiving := quoteOf(func(q *store.Quote) {
		q.LockedSide, q.LockedAmount = "RECEIVING", q.TotalReceivingAmount
		q.ExchangeRate = 17.123456789012345
	})
	// Empty optional strings; empty byte fields come back nil.
	bare := quoteOf(func(q *store.Quote) {
		q.PaymentRail, q.Payload, q.Description = "", "", ""
		q.RateDetails, q.FeesIncluded = nil, 0
	})
	emptyDetails := quoteOf(func(q *store.Quote) { q.RateDetails = []byte{} })
	emptyDetailsWant := *emptyDetails
	emptyDetailsWant.RateDetails = nil
	binary := quoteOf(func(q *store.Quote) {
		q.RateDetails = []byte{'{', 0x00, 0xff, 0xfe, '}', ' ', '\n', 0x00}
		q.Payload = "\x00"
	})
	zone := time.FixedZone("UTC-3", -3*3600)
	odd := quoteOf(func(q *store.Quote) {
		q.CreatedAt = time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, zone)
		q.ExpiresAt = time.Date(2100, 1, 1, 0, 0, 0, 1_999, zone)
	})
	oddWant := *odd
	oddWant.CreatedAt = odd.CreatedAt.UTC().Truncate(time.Microsecond)
	oddWant.ExpiresAt = odd.ExpiresAt.UTC().Truncate(time.Microsecond)

	cases := []struct {
		name     string
		in, want *store.Quote
	}{
		{"all fields", full, full},
		{"receiving side locked, rate with all digits", receiving, receiving},
		{"empty optional fields", bare, bare},
		{"empty rate details come back nil", emptyDetails, &emptyDetailsWant},
		{"bytes with NUL and invalid UTF-8", binary, binary},
		{"times normalised to UTC microseconds", odd, &oddWant},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			in := *tc.in
			in.RateDetails = slices.Clone(tc.in.RateDetails)
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateQuote(f.ctx, tc.in) })
			if err != nil {
				t.Fatalf("CreateQuote: %v", err)
			}
			same(t, "the argument is not modified", *tc.in, in)
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetQuote(f.ctx, tc.in.ID)
				if err != nil {
					return err
				}
				same(t, "GetQuote", *got, *tc.want)
				if got.CreatedAt.Location() != time.UTC || got.ExpiresAt.Location() != time.UTC {
					t.Errorf("times in %v and %v, want UTC", got.CreatedAt.Location(), got.ExpiresAt.Location())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ---- transactions

func testTransactionRoundTrip(f *fixture) {
	c, a, e := f.payer()
	full := newTransaction(c, a.ID, e.ID)
	incoming := newIncoming(c, a.ID)
	umaIncoming := newIncoming(c, a.ID)
	umaIncoming.SenderUmaAddress, umaIncoming.ReceiverUmaAddress = "$success.usd@sandbox.uma.money", "$zoë@uma.example"
	// Optional times unset, empty strings.
	bare := newTransaction(c, a.ID, e.ID)
	bare.NextStepAt, bare.SettledAt, bare.ReceiptConfirmedAt = time.Time{}, time.Time{}, time.Time{}
	bare.PaymentRail, bare.Description, bare.FailureReason, bare.Outcome, bare.Reference = "", "", "", "", ""
	bare.RateDetails, bare.Counterparty = nil, nil
	bare.SentAmount, bare.ReceivedAmount, bare.Fees, bare.ExchangeRate = 0, 0, 0, 0
	// Empty byte fields come back nil.
	emptyDocs := newTransaction(c, a.ID, e.ID)
	emptyDocs.RateDetails, emptyDocs.Counterparty = []byte{}, []byte{}
	emptyDocsWant := *emptyDocs
	emptyDocsWant.RateDetails, emptyDocsWant.Counterparty = nil, nil
	binary := newTransaction(c, a.ID, e.ID)
	binary.RateDetails = []byte{0x00}
	binary.Counterparty = []byte{'{', 0x00, 0xff, 0xfe, '"', '}', ' ', '\n', 0x00}
	huge := newTransaction(c, a.ID, e.ID)
	huge.SentAmount, huge.ReceivedAmount, huge.Fees = 1<<63-1, 1<<62+1, 1<<53+1
	zone := time.FixedZone("UTC+5:45", 5*3600+45*60)
	odd := newTransaction(c, a.ID, e.ID)
	odd.NextStepAt = time.Date(2038, 1, 19, 3, 14, 8, 1_999, zone)
	odd.SettledAt = time.Date(1969, 7, 20, 20, 17, 40, 999_999_999, zone)
	odd.ReceiptConfirmedAt = time.Date(2099, 12, 31, 23, 59, 59, 500, zone)
	odd.CreatedAt = time.Date(1970, 1, 1, 0, 0, 0, 1_000, zone)
	odd.UpdatedAt = time.Date(2026, 2, 28, 12, 0, 0, 999, zone)
	oddWant := *odd
	for _, p := range []*time.Time{&oddWant.NextStepAt, &oddWant.SettledAt, &oddWant.ReceiptConfirmedAt,
		&oddWant.CreatedAt, &oddWant.UpdatedAt} {
		*p = p.UTC().Truncate(time.Microsecond)
	}

	cases := []struct {
		name     string
		in, want *store.Transaction
	}{
		{"outgoing, all fields", full, full},
		{"incoming: no quote, no source, no optional times", incoming, incoming},
		{"incoming UMA payment: sender and receiver addresses", umaIncoming, umaIncoming},
		{"empty optional fields", bare, bare},
		{"empty documents come back nil", emptyDocs, &emptyDocsWant},
		{"documents with NUL and invalid UTF-8", binary, binary},
		{"amounts beyond 2^53", huge, huge},
		{"times normalised to UTC microseconds", odd, &oddWant},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			in := *tc.in
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateTransaction(f.ctx, tc.in) })
			if err != nil {
				t.Fatalf("CreateTransaction: %v", err)
			}
			same(t, "the argument is not modified", *tc.in, in)
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetTransaction(f.ctx, tc.in.ID)
				if err != nil {
					return err
				}
				same(t, "GetTransaction", *got, *tc.want)
				for _, tm := range []time.Time{got.CreatedAt, got.UpdatedAt, got.NextStepAt, got.SettledAt, got.ReceiptConfirmedAt} {
					if !tm.IsZero() && tm.Location() != time.UTC {
						t.Errorf("time %v in %v, want UTC", tm, tm.Location())
					}
				}
				// A list returns the same record.
				p, err := tx.ListTransactions(f.ctx, store.TransactionFilter{Limit: 100})
				if err != nil {
					return err
				}
				for _, x := range p.Items {
					if x.ID == tc.in.ID {
						same(t, "listed transaction", x, *tc.want)
						return nil
					}
				}
				t.Errorf("transaction not in ListTransactions")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// The quote of a transaction refers back to it.
	f.tx(func(tx store.Tx) error { return tx.CreateQuote(f.ctx, newQuote(full)) })
	f.tx(func(tx store.Tx) error {
		q, err := tx.GetQuote(f.ctx, full.QuoteID)
		if err != nil {
			return err
		}
		x, err := tx.GetTransaction(f.ctx, q.TransactionID)
		if err != nil {
			return err
		}
		same(f, "the quote's transaction", *x, *full)
		return nil
	})
}

// testTransactionList: filters, both orders, and pagination by id (ids are
// in creation order; CreatedAt deliberately is not).
func testTransactionList(f *fixture) {
	c1, a1, e1 := f.payer()
	c2, b1, e2 := f.payer()
	a2 := newAccount(c1.ID)
	f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, a2) })
	outgoing := func(c *store.Customer, status, src, dst string, created time.Duration) *store.Transaction {
		x := newTransaction(c, src, dst)
		x.Status, x.CreatedAt = status, at(created)
		return x
	}
	incoming := func(c *store.Customer, status, dst string, created time.Duration) *store.Transaction {
		x := newIncoming(c, dst)
		x.Status, x.CreatedAt = status, at(created)
		return x
	}
	m := time.Minute
	made := []*store.Transaction{
		outgoing(c1, "PENDING", a1.ID, e1.ID, 10*m),    // 0
		incoming(c1, "COMPLETED", a1.ID, 5*m),          // 1
		outgoing(c2, "PROCESSING", b1.ID, e2.ID, 20*m), // 2
		outgoing(c1, "COMPLETED", a2.ID, e1.ID, 15*m),  // 3
		incoming(c1, "COMPLETED", a2.ID, 30*m),         // 4
		incoming(c2, "FAILED", b1.ID, 25*m),            // 5
		outgoing(c1, "FAILED", a1.ID, e1.ID, 0),        // 6
		incoming(c1, "PENDING", a1.ID, 40*m),           // 7
	}
	f.createTransactions(made...)
	pick := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, made[i].ID)
		}
		return out
	}
	id := func(i int) string { return made[i].ID }
	zone := time.FixedZone("UTC-9:30", -(9*3600 + 1800))
	type F = store.TransactionFilter
	cases := []struct {
		name       string
		filter     F
		want       []string
		wantMore   bool
		wantCursor string
		wantTotal  int
	}{
		{"no filter", F{}, pick(0, 1, 2, 3, 4, 5, 6, 7), false, "", 8},
		{"no filter, descending", F{Descending: true}, pick(7, 6, 5, 4, 3, 2, 1, 0), false, "", 8},
		{"customer", F{CustomerID: c1.ID}, pick(0, 1, 3, 4, 6, 7), false, "", 6},
		{"another customer", F{CustomerID: c2.ID}, pick(2, 5), false, "", 2},
		{"unknown customer", F{CustomerID: newID("Customer")}, nil, false, "", 0},
		{"account as source or destination", F{AccountID: a1.ID}, pick(0, 1, 6, 7), false, "", 4},
		{"another account of the customer", F{AccountID: a2.ID}, pick(3, 4), false, "", 2},
		{"external account (destination)", F{AccountID: e1.ID}, pick(0, 3, 6), false, "", 3},
		{"account of another customer", F{AccountID: b1.ID}, pick(2, 5), false, "", 2},
		{"account and customer that do not match", F{AccountID: b1.ID, CustomerID: c1.ID}, nil, false, "", 0},
		{"status", F{Status: "COMPLETED"}, pick(1, 3, 4), false, "", 3},
		{"type", F{Type: "INCOMING"}, pick(1, 4, 5, 7), false, "", 4},
		{"type and status", F{Type: "OUTGOING", Status: "FAILED"}, pick(6), false, "", 1},
		{"customer, account and type", F{CustomerID: c1.ID, AccountID: a1.ID, Type: "INCOMING"}, pick(1, 7), false, "", 2},
		{"created after, inclusive", F{CreatedAfter: at(15 * m)}, pick(2, 3, 4, 5, 7), false, "", 5},
		{"created after, a microsecond later", F{CreatedAfter: at(15*m + time.Microsecond)}, pick(2, 4, 5, 7), false, "", 4},
		{"created before, exclusive", F{CreatedBefore: at(15 * m)}, pick(0, 1, 6), false, "", 3},
		{"created before, a microsecond later", F{CreatedBefore: at(15*m + time.Microsecond)}, pick(0, 1, 3, 6), false, "", 4},
		{"created in a range", F{CreatedAfter: at(10 * m), CreatedBefore: at(25 * m)}, pick(0, 2, 3), false, "", 3},
		{"created in a range given in another zone", F{CreatedAfter: at(10 * m).In(zone), CreatedBefore: at(25 * m).In(zone)},
			pick(0, 2, 3), false, "", 3},
		{"created in an empty range", F{CreatedAfter: at(15 * m), CreatedBefore: at(15 * m)}, nil, false, "", 0},
		{"created in a range, descending", F{CreatedAfter: at(10 * m), CreatedBefore: at(25 * m), Descending: true},
			pick(3, 2, 0), false, "", 3},
		{"first page", F{Limit: 3}, pick(0, 1, 2), true, id(2), 8},
		{"second page", F{Limit: 3, Cursor: id(2)}, pick(3, 4, 5), true, id(5), 8},
		{"last page", F{Limit: 3, Cursor: id(5)}, pick(6, 7), false, "", 8},
		{"page exactly fills the rest", F{Limit: 3, Cursor: id(4)}, pick(5, 6, 7), false, "", 8},
		{"cursor after the last", F{Cursor: id(7)}, nil, false, "", 8},
		{"first page, descending", F{Limit: 3, Descending: true}, pick(7, 6, 5), true, id(5), 8},
		{"second page, descending", F{Limit: 3, Cursor: id(5), Descending: true}, pick(4, 3, 2), true, id(2), 8},
		{"last page, descending", F{Limit: 3, Cursor: id(2), Descending: true}, pick(1, 0), false, "", 8},
		{"page exactly fills the rest, descending", F{Limit: 3, Cursor: id(3), Descending: true}, pick(2, 1, 0), false, "", 8},
		{"cursor after the last, descending", F{Cursor: id(0), Descending: true}, nil, false, "", 8},
		{"filtered first page", F{CustomerID: c1.ID, Limit: 4}, pick(0, 1, 3, 4), true, id(4), 6},
		{"filtered last page", F{CustomerID: c1.ID, Limit: 4, Cursor: id(4)}, pick(6, 7), false, "", 6},
		{"filtered first page, descending", F{CustomerID: c1.ID, Limit: 4, Descending: true}, pick(7, 6, 4, 3), true, id(3), 6},
		{"filtered last page, descending", F{CustomerID: c1.ID, Limit: 4, Cursor: id(3), Descending: true}, pick(1, 0), false, "", 6},
		{"cursor of a row the filter excludes", F{Type: "OUTGOING", Limit: 2, Cursor: id(1)}, pick(2, 3), true, id(3), 4},
		{"cursor of a row the filter excludes, descending", F{Type: "OUTGOING", Limit: 2, Cursor: id(5), Descending: true},
			pick(3, 2), true, id(2), 4},
		{"page and time range", F{CreatedAfter: at(5 * m), Limit: 2, Cursor: id(1)}, pick(2, 3), true, id(3), 7},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				p, err := tx.ListTransactions(f.ctx, tc.filter)
				if err != nil {
					return err
				}
				if got := transactionIDs(p.Items); !slices.Equal(got, tc.want) {
					t.Errorf("ids %v, want %v", got, tc.want)
				}
				if p.HasMore != tc.wantMore || p.NextCursor != tc.wantCursor || p.TotalCount != tc.wantTotal {
					t.Errorf("HasMore %v NextCursor %q TotalCount %d, want %v %q %d",
						p.HasMore, p.NextCursor, p.TotalCount, tc.wantMore, tc.wantCursor, tc.wantTotal)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Walking all pages in either order sees every row once.
	for _, desc := range []bool{false, true} {
		f.Run(fmt.Sprintf("walk, descending %v", desc), func(t *testing.T) {
			want := pick(0, 1, 2, 3, 4, 5, 6, 7)
			if desc {
				slices.Reverse(want)
			}
			var seen []string
			filter := F{Limit: 2, Descending: desc}
			for page := 0; ; page++ {
				if page > len(made) {
					t.Fatal("pagination does not end")
				}
				var p store.Page[store.Transaction]
				err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
					p, err = tx.ListTransactions(f.ctx, filter)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, transactionIDs(p.Items)...)
				if !p.HasMore {
					break
				}
				filter.Cursor = p.NextCursor
			}
			if !slices.Equal(seen, want) {
				t.Errorf("pages returned\n%v\nwant\n%v", seen, want)
			}
		})
	}
	// A list returns full records.
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListTransactions(f.ctx, F{AccountID: a2.ID, Descending: true})
		if err != nil {
			return err
		}
		same(f, "listed transactions", p.Items, []store.Transaction{*made[4], *made[3]})
		return nil
	})
}

// scrambled is a copy of x in which every field but the id differs, so that
// an AdvanceTransaction that writes more than it should is noticed.
func scrambled(x store.Transaction) store.Transaction {
	y := x
	y.QuoteID = newID("Quote")
	y.Type = x.Type + "-X"
	y.Status = x.Status + "-X"
	y.CustomerID = newID("Customer")
	y.PlatformCustomerID = x.PlatformCustomerID + "-X"
	y.SourceAccountID = newID("InternalAccount")
	y.DestinationAccountID = newID("ExternalAccount")
	y.SendingCurrency, y.ReceivingCurrency = "EUR", "GBP"
	y.SentAmount, y.ReceivedAmount, y.Fees = x.SentAmount+1, x.ReceivedAmount+1, x.Fees+1
	y.ExchangeRate = x.ExchangeRate + 1
	y.RateDetails = []byte(`{"scrambled":true}`)
	y.PaymentRail = x.PaymentRail + "-X"
	y.Description = x.Description + "-X"
	y.FailureReason = x.FailureReason + "-X"
	y.Outcome = x.Outcome + "-X"
	y.Reference = x.Reference + "-X"
	y.Counterparty = []byte(`{"scrambled":true}`)
	y.NextStepAt = x.NextStepAt.Add(time.Hour)
	y.SettledAt = x.SettledAt.Add(time.Hour)
	y.ReceiptConfirmedAt = x.ReceiptConfirmedAt.Add(time.Hour)
	y.CreatedAt = x.CreatedAt.Add(time.Hour)
	y.UpdatedAt = x.UpdatedAt.Add(time.Hour)
	return y
}

// testAdvanceTransaction walks a payment through its states with the
// compare-and-set: a step whose from is not the stored status changes
// nothing, and a step that wins writes Status, FailureReason, NextStepAt,
// SettledAt, Reference and UpdatedAt (setting or clearing them) and no other
// field.
func testAdvanceTransaction(f *fixture) {
	c, a, e := f.payer()
	x := newTransaction(c, a.ID, e.ID)
	x.FailureReason, x.Reference, x.SettledAt = "", "", time.Time{}
	bystander := newTransaction(c, a.ID, e.ID)
	f.createTransactions(x, bystander)

	type writes struct {
		status, failureReason, reference string
		nextStepAt, settledAt            time.Time
	}
	steps := []struct {
		name string
		from string
		to   writes
		won  bool
	}{
		{"execute", "PENDING", writes{status: "PROCESSING", reference: "REF-1", nextStepAt: at(time.Hour)}, true},
		{"execute again", "PENDING", writes{status: "PROCESSING", reference: "REF-2", nextStepAt: at(2 * time.Hour)}, false},
		{"expire after execution", "PENDING", writes{status: "FAILED", failureReason: "QUOTE_EXPIRED"}, false},
		{"from a status it never had", "COMPLETED", writes{status: "FAILED", failureReason: "X"}, false},
		{"status compared exactly", "processing", writes{status: "FAILED", failureReason: "X"}, false},
		{"empty from", "", writes{status: "FAILED", failureReason: "X"}, false},
		{"fail, clearing the next step", "PROCESSING",
			writes{status: "FAILED", failureReason: "004: insufficient funds at the receiver", reference: "REF-1",
				settledAt: at(3 * time.Hour)}, true},
		{"refund, clearing the failure and settlement", "FAILED",
			writes{status: "REFUND_PENDING", reference: "REF-3", nextStepAt: at(4 * time.Hour)}, true},
		{"same status to itself", "REFUND_PENDING",
			writes{status: "REFUND_PENDING", reference: "", nextStepAt: at(5 * time.Hour), settledAt: at(5 * time.Hour)}, true},
	}
	want := f.transaction(x.ID)
	for i, s := range steps {
		when := at(time.Duration(i+1) * time.Minute)
		f.Run(s.name, func(t *testing.T) {
			arg := scrambled(want)
			arg.Status, arg.FailureReason, arg.Reference = s.to.status, s.to.failureReason, s.to.reference
			arg.NextStepAt, arg.SettledAt, arg.UpdatedAt = s.to.nextStepAt, s.to.settledAt, when
			argCopy := arg
			var won bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
				won, err = tx.AdvanceTransaction(f.ctx, &arg, s.from)
				return err
			})
			if err != nil || won != s.won {
				t.Errorf("AdvanceTransaction(from %q) with stored status %q = %v, %v; want %v",
					s.from, want.Status, won, err, s.won)
			}
			same(t, "the argument is not modified", arg, argCopy)
			if won {
				want.Status, want.FailureReason, want.Reference = s.to.status, s.to.failureReason, s.to.reference
				want.NextStepAt, want.SettledAt, want.UpdatedAt = s.to.nextStepAt, s.to.settledAt, when
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetTransaction(f.ctx, x.ID)
				if err != nil {
					return err
				}
				same(t, "transaction", *got, want)
				got, err = tx.GetTransaction(f.ctx, bystander.ID)
				if err != nil {
					return err
				}
				same(t, "another transaction", *got, *bystander)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// testAdvanceRace: workers advancing one payment from the same status at
// once, each in its own Tx, have exactly one winner, whose values are
// stored.
func testAdvanceRace(f *fixture) {
	c, a, e := f.payer()
	x := newTransaction(c, a.ID, e.ID)
	f.createTransactions(x)
	when := func(i int) time.Time { return at(time.Duration(i+1) * time.Second) }
	w := race(f, f.s, f.ctx, 16, func(tx store.Tx, i int) (bool, error) {
		// Read first, as the worker does.
		got, err := tx.GetTransaction(f.ctx, x.ID)
		if err != nil {
			return false, err
		}
		got.Status, got.Reference, got.UpdatedAt = "PROCESSING", fmt.Sprintf("REF-%02d", i), when(i)
		return tx.AdvanceTransaction(f.ctx, got, "PENDING")
	})
	got := f.transaction(x.ID)
	want := *x
	want.Status, want.Reference, want.UpdatedAt = "PROCESSING", fmt.Sprintf("REF-%02d", w), when(w)
	same(f, "the winner's transaction", got, want)
}

func testConfirmReceipt(f *fixture) {
	c, a, e := f.payer()
	x := newTransaction(c, a.ID, e.ID)
	x.ReceiptConfirmedAt = time.Time{}
	incoming := newIncoming(c, a.ID)
	bystander := newTransaction(c, a.ID, e.ID)
	f.createTransactions(x, incoming, bystander)
	zone := time.FixedZone("UTC-7", -7*3600)
	steps := []struct {
		name             string
		tx               *store.Transaction
		confirmedAt, now time.Time
		fails            bool
	}{
		{"first confirmation", x, at(time.Hour), at(time.Hour + time.Second), false},
		{"overwritten by an earlier time", x, at(30 * time.Minute), at(2 * time.Hour), false},
		{"overwritten by a later time", x, at(3 * time.Hour), at(3 * time.Hour), false},
		{"zero time", x, time.Time{}, at(4 * time.Hour), true},
		{"an incoming payment", incoming, at(5 * time.Hour), at(5 * time.Hour), false},
		{"times in another zone with nanoseconds", incoming, time.Date(2027, 1, 2, 3, 4, 5, 6_789, zone),
			time.Date(2027, 1, 2, 3, 4, 6, 999, zone), false},
	}
	want := map[string]store.Transaction{x.ID: *x, incoming.ID: *incoming, bystander.ID: *bystander}
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			var confirmErr error
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				confirmErr = tx.ConfirmReceipt(f.ctx, s.tx.ID, s.confirmedAt, s.now)
				return nil // commit whatever a refused call may have done
			})
			if err != nil {
				t.Fatalf("Tx: %v", err)
			}
			switch {
			case s.fails && confirmErr == nil:
				t.Errorf("ConfirmReceipt with confirmedAt %v succeeded, want an error", s.confirmedAt)
			case !s.fails && confirmErr != nil:
				t.Errorf("ConfirmReceipt: %v", confirmErr)
			case !s.fails:
				w := want[s.tx.ID]
				w.ReceiptConfirmedAt = s.confirmedAt.UTC().Truncate(time.Microsecond)
				w.UpdatedAt = s.now.UTC().Truncate(time.Microsecond)
				want[s.tx.ID] = w
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				for _, id := range []string{x.ID, incoming.ID, bystander.ID} {
					got, err := tx.GetTransaction(f.ctx, id)
					if err != nil {
						return err
					}
					same(t, "transaction "+id, *got, want[id])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// newDueTransaction is newTransaction with its next step at next.
func newDueTransaction(c *store.Customer, sourceID, destinationID string, next time.Time) *store.Transaction {
	x := newTransaction(c, sourceID, destinationID)
	x.NextStepAt = next
	return x
}

func testDueTransactions(f *fixture) {
	c, a, e := f.payer()
	now := at(30 * time.Minute)
	mk := func(next time.Time) *store.Transaction { return newDueTransaction(c, a.ID, e.ID, next) }
	// Ids are in creation order; NextStepAt deliberately is not.
	d1 := mk(at(10 * time.Minute))
	d2 := mk(at(5 * time.Minute))
	atNow := mk(now) // due: not after now
	later := mk(now.Add(time.Microsecond))
	never := mk(time.Time{})
	d0 := mk(at(-time.Hour))
	d3 := mk(at(5*time.Minute + time.Microsecond))
	f.createTransactions(d1, d2, atNow, later, never, d0, d3)
	never2 := newIncoming(c, a.ID) // no NextStepAt either
	f.createTransactions(never2)

	all := []store.Transaction{*d0, *d2, *d3, *d1, *atNow}
	cases := []struct {
		name  string
		now   time.Time
		limit int
		want  []store.Transaction
	}{
		{"limit 1", now, 1, all[:1]},
		{"limit 3", now, 3, all[:3]},
		{"limit equal to the number", now, 5, all},
		{"limit above the number", now, 100, all},
		{"limit 0", now, 0, []store.Transaction{}},
		{"a microsecond later", now.Add(time.Microsecond), 100, append(slices.Clone(all), *later)},
		{"earlier now", at(5 * time.Minute), 100, all[:2]},
		{"a microsecond before the earliest", at(-time.Hour - time.Microsecond), 100, []store.Transaction{}},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.DueTransactions(f.ctx, tc.now, tc.limit)
				if err != nil {
					return err
				}
				if len(got) == 0 && len(tc.want) == 0 {
					return nil // nil and empty are both fine here
				}
				if g, w := transactionIDs(got), transactionIDs(tc.want); !slices.Equal(g, w) {
					t.Errorf("ids %v, want %v", g, w)
					return nil
				}
				same(t, "DueTransactions", got, tc.want)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Clearing NextStepAt takes a row off the list; setting it puts one on.
	f.tx(func(tx store.Tx) error {
		done := *d2
		done.Status, done.NextStepAt, done.UpdatedAt = "PROCESSING", time.Time{}, at(time.Hour)
		if ok, err := tx.AdvanceTransaction(f.ctx, &done, d2.Status); err != nil || !ok {
			return fmt.Errorf("AdvanceTransaction clearing NextStepAt = %v, %v", ok, err)
		}
		again := *never
		again.Status, again.NextStepAt, again.UpdatedAt = "PROCESSING", at(7*time.Minute), at(time.Hour)
		if ok, err := tx.AdvanceTransaction(f.ctx, &again, never.Status); err != nil || !ok {
			return fmt.Errorf("AdvanceTransaction setting NextStepAt = %v, %v", ok, err)
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.DueTransactions(f.ctx, now, 100)
		if err != nil {
			return err
		}
		same(f, "due after one was cleared and one set", transactionIDs(got),
			[]string{d0.ID, d3.ID, never.ID, d1.ID, atNow.ID})
		return nil
	})
	// A step moved later is due at its new time only, and once; a
	// compare-and-set that lost schedules nothing.
	f.tx(func(tx store.Tx) error {
		moved := *d1
		moved.Status, moved.NextStepAt, moved.UpdatedAt = "PROCESSING", now.Add(time.Hour), at(2*time.Hour)
		if ok, err := tx.AdvanceTransaction(f.ctx, &moved, d1.Status); err != nil || !ok {
			return fmt.Errorf("AdvanceTransaction moving NextStepAt = %v, %v", ok, err)
		}
		lost := *atNow
		lost.Status, lost.NextStepAt, lost.UpdatedAt = "PROCESSING", at(time.Minute), at(2*time.Hour)
		if ok, err := tx.AdvanceTransaction(f.ctx, &lost, "COMPLETED"); err != nil || ok {
			return fmt.Errorf("AdvanceTransaction from a status it is not in = %v, %v; want false, nil", ok, err)
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		now  time.Time
		want []string
	}{
		{"a step moved later is not due at its old time", now, []string{d0.ID, d3.ID, never.ID, atNow.ID}},
		{"a step moved later is due at its new time, once", now.Add(time.Hour), []string{d0.ID, d3.ID, never.ID, atNow.ID, later.ID, d1.ID}},
	} {
		f.tx(func(tx store.Tx) error {
			got, err := tx.DueTransactions(f.ctx, tc.now, 100)
			if err != nil {
				return err
			}
			same(f, tc.name, transactionIDs(got), tc.want)
			return nil
		})
	}
}

func testClaimDueTransaction(f *fixture) {
	c, a, e := f.payer()
	now := at(30 * time.Minute)
	mk := func(next time.Time) *store.Transaction { return newDueTransaction(c, a.ID, e.ID, next) }
	due := mk(at(10 * time.Minute))
	atNow := mk(now)
	later := mk(now.Add(time.Microsecond))
	never := mk(time.Time{})
	f.createTransactions(due, atNow, later, never)

	cases := []struct {
		name string
		id   string
		want *store.Transaction // nil: ErrNotFound
	}{
		{"due", due.ID, due},
		{"due exactly now", atNow.ID, atNow},
		{"a microsecond later", later.ID, nil},
		{"no next step", never.ID, nil},
		{"unknown id", newID("Transaction"), nil},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.ClaimDueTransaction(f.ctx, tc.id, now)
				if tc.want == nil {
					if !errors.Is(err, store.ErrNotFound) {
						t.Errorf("ClaimDueTransaction = %v, %v; want ErrNotFound", got, err)
					}
					return nil
				}
				if err != nil {
					return err
				}
				same(t, "ClaimDueTransaction", *got, *tc.want)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}

	// Two workers: while the first holds its claim, the second must not get
	// the row. On PostgreSQL the second skips the locked row at once (so
	// the first waits for it to finish); on SQLite the second waits for the
	// first to commit and then finds the step done. Either way: not found.
	f.Run("held by another worker", func(t *testing.T) {
		holding, secondDone := make(chan struct{}), make(chan struct{})
		var second error
		go func() {
			defer close(secondDone)
			<-holding
			second = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.ClaimDueTransaction(f.ctx, due.ID, now)
				if err == nil {
					return fmt.Errorf("second worker claimed %s too", got.ID)
				}
				if !errors.Is(err, store.ErrNotFound) {
					return err
				}
				return nil
			})
		}()
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			x, err := tx.ClaimDueTransaction(f.ctx, due.ID, now)
			if err != nil {
				return err
			}
			close(holding)
			select {
			case <-secondDone: // skipped the locked row
			case <-time.After(300 * time.Millisecond): // queued behind this transaction
			}
			next := *x
			next.Status, next.NextStepAt, next.UpdatedAt = "PROCESSING", time.Time{}, now
			if ok, err := tx.AdvanceTransaction(f.ctx, &next, x.Status); err != nil || !ok {
				return fmt.Errorf("AdvanceTransaction = %v, %v", ok, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		<-secondDone
		if second != nil {
			t.Fatal(second)
		}
	})
}

// testTxFor: TxFor is a transaction like Tx: it commits fn's writes,
// returns fn's error unchanged and rolls back, and ends when ctx does.
func testTxFor(f *fixture) {
	_, a, _ := f.payer()
	if err := f.s.TxFor(f.ctx, a.ID, func(tx store.Tx) error {
		return ledgerCredit(tx, f.ctx, a.ID, 500, at(time.Minute))
	}); err != nil {
		f.Fatal(err)
	}
	sentinel := errors.New("refused")
	err := f.s.TxFor(f.ctx, a.ID, func(tx store.Tx) error {
		if err := ledgerCredit(tx, f.ctx, a.ID, 7, at(2*time.Minute)); err != nil {
			return err
		}
		return sentinel
	})
	if err != sentinel { //nolint:errorlint // the contract is "unchanged"
		f.Fatalf("TxFor returned %v, want the sentinel itself", err)
	}
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetInternalAccount(f.ctx, a.ID)
		if err != nil {
			return err
		}
		if got.Available != 500 {
			f.Errorf("available %d, want 500 (the second credit rolled back)", got.Available)
		}
		return nil
	})
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	if err := f.s.TxFor(ctx, a.ID, func(store.Tx) error { return nil }); !errors.Is(err, context.Canceled) {
		f.Errorf("TxFor with a cancelled context = %v, want context.Canceled", err)
	}
	CheckBooks(f, f.s)
}

// testTxForTurns: TxFor calls on one key never overlap, and every one of
// many concurrent calls on a hot row succeeds.
func testTxForTurns(f *fixture) {
	_, a, _ := f.payer()
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	const n = 24
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- f.s.TxFor(f.ctx, a.ID, func(tx store.Tx) error {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				if err := ledgerCredit(tx, f.ctx, a.ID, 1, at(time.Duration(i)*time.Second)); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
				return nil
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			f.Error(err)
		}
	}
	if overlaps.Load() > 0 {
		f.Errorf("%d TxFor calls on one key overlapped", overlaps.Load())
	}
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetInternalAccount(f.ctx, a.ID)
		if err == nil && got.Available != n {
			f.Errorf("available %d, want %d", got.Available, n)
		}
		return err
	})
	CheckBooks(f, f.s)
}

// ---- idempotency records

func testIdempotencyRecord(f *fixture) {
	full := newIdempotencyRecord("quotes.execute Quote:019aa5d2-7c10-7000-8000-00000000aaaa", at(time.Minute))
	emptyJSON := newIdempotencyRecord("quotes.create", at(2*time.Minute))
	emptyJSON.Status, emptyJSON.Body = 200, []byte(`{}`)
	// Whitespace and key order are the answer's, not normalised.
	spaced := newIdempotencyRecord("quotes.create", at(3*time.Minute))
	spaced.Body = []byte("{\n  \"z\": 1,\n  \"a\": \"\\u00e9\"\n}\n")
	raw := newIdempotencyRecord("quotes.create", at(4*time.Minute))
	raw.Status, raw.Body = 500, []byte{0x00, 0xff, 0xfe, 0x00}
	raw.RequestHash = []byte{0x00, 0x00, 0x01}
	noBody := newIdempotencyRecord("customers.delete", at(5*time.Minute))
	noBody.Status, noBody.Body = 204, []byte{}
	zone := time.FixedZone("UTC+9", 9*3600)
	odd := newIdempotencyRecord("quotes.create", time.Date(2026, 11, 22, 18, 30, 0, 123_456_789, zone))
	oddWant := *odd
	oddWant.CreatedAt = odd.CreatedAt.UTC().Truncate(time.Microsecond)
	// The same key under another scope is another record.
	otherScope := newIdempotencyRecord("transfers.create", at(6*time.Minute))
	otherScope.Key = full.Key
	otherScope.Body = []byte(`{"other":"scope"}`)

	cases := []struct {
		name     string
		in, want *store.IdempotencyRecord
	}{
		{"all fields", full, full},
		{"empty JSON body", emptyJSON, emptyJSON},
		{"body with whitespace kept byte for byte", spaced, spaced},
		{"binary body and hash", raw, raw},
		{"empty body", noBody, noBody},
		{"time normalised to UTC microseconds", odd, &oddWant},
		{"same key, another scope", otherScope, otherScope},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			in := *tc.in
			err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.PutIdempotencyRecord(f.ctx, tc.in) })
			if err != nil {
				t.Fatalf("PutIdempotencyRecord: %v", err)
			}
			same(t, "the argument is not modified", *tc.in, in)
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				got, err := tx.GetIdempotencyRecord(f.ctx, tc.in.Scope, tc.in.Key)
				if err != nil {
					return err
				}
				same(t, "GetIdempotencyRecord", *got, *tc.want)
				if got.CreatedAt.Location() != time.UTC {
					t.Errorf("CreatedAt in %v, want UTC", got.CreatedAt.Location())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}

	// A second Put of a (scope, key) is a conflict that keeps the first
	// answer; the caller carries on in the same Tx to replay it.
	f.Run("conflict", func(t *testing.T) {
		dup := newIdempotencyRecord(full.Scope, at(time.Hour))
		dup.Key, dup.Status, dup.Body = full.Key, 409, []byte(`{"second":true}`)
		after := newIdempotencyRecord("quotes.create", at(time.Hour))
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			wantErr(t, "PutIdempotencyRecord of a taken (scope, key)", tx.PutIdempotencyRecord(f.ctx, dup), store.ErrConflict)
			got, err := tx.GetIdempotencyRecord(f.ctx, full.Scope, full.Key)
			if err != nil {
				return fmt.Errorf("replay after the conflict: %w", err)
			}
			same(t, "the stored answer, in the same Tx", *got, *full)
			return tx.PutIdempotencyRecord(f.ctx, after)
		})
		if err != nil {
			t.Fatal(err)
		}
		err = f.s.Tx(f.ctx, func(tx store.Tx) error {
			got, err := tx.GetIdempotencyRecord(f.ctx, full.Scope, full.Key)
			if err := checkFound(got, err, *full); err != nil {
				return fmt.Errorf("the first record: %w", err)
			}
			got, err = tx.GetIdempotencyRecord(f.ctx, otherScope.Scope, otherScope.Key)
			if err := checkFound(got, err, *otherScope); err != nil {
				return fmt.Errorf("the record of the same key under another scope: %w", err)
			}
			_, err = tx.GetIdempotencyRecord(f.ctx, after.Scope, after.Key)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	missing := []struct {
		name, scope, key string
	}{
		{"unknown key", full.Scope, "no-such-key"},
		{"known key, unknown scope", "customers.create", full.Key},
		{"known scope and key, swapped", full.Key, full.Scope},
		{"empty scope and key", "", ""},
	}
	for _, tc := range missing {
		f.Run(tc.name, func(t *testing.T) {
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				_, err := tx.GetIdempotencyRecord(f.ctx, tc.scope, tc.key)
				return err
			})
			wantErr(t, "GetIdempotencyRecord", err, store.ErrNotFound)
		})
	}
}

// testIdempotencyRace: requests with the same Idempotency-Key arriving at
// once, each in its own Tx: exactly one Put succeeds, the others conflict.
func testIdempotencyRace(f *fixture) {
	const n = 16
	records := make([]*store.IdempotencyRecord, n)
	for i := range records {
		records[i] = newIdempotencyRecord("quotes.execute Quote:x", at(time.Duration(i)*time.Second))
		records[i].Key = "same-key"
		records[i].Body = fmt.Appendf(nil, `{"n":%d}`, i)
	}
	var wins, winner atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			var put bool
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				put = false // a retried fn starts over
				// Look first, as the service does; a request that finds
				// the record replays it and puts nothing.
				_, err := tx.GetIdempotencyRecord(f.ctx, "quotes.execute Quote:x", "same-key")
				switch {
				case err == nil:
					return nil
				case !errors.Is(err, store.ErrNotFound):
					return err
				}
				if err := tx.PutIdempotencyRecord(f.ctx, records[i]); err != nil {
					return err
				}
				put = true
				return nil
			})
			switch {
			case err == nil && put:
				wins.Add(1)
				winner.Store(int32(i))
			case err != nil && !errors.Is(err, store.ErrConflict):
				f.Errorf("goroutine %d: %v, want nil or ErrConflict", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		f.Fatalf("%d Puts succeeded, want exactly 1", wins.Load())
	}
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetIdempotencyRecord(f.ctx, "quotes.execute Quote:x", "same-key")
		return checkFound(got, err, *records[winner.Load()])
	})
}

func testDeleteIdempotencyRecords(f *fixture) {
	cutoff := at(time.Hour)
	old := newIdempotencyRecord("quotes.create", cutoff.Add(-24*time.Hour))
	older := newIdempotencyRecord("quotes.execute", cutoff.Add(-48*time.Hour))
	justBefore := newIdempotencyRecord("quotes.create", cutoff.Add(-time.Microsecond))
	atCutoff := newIdempotencyRecord("quotes.create", cutoff)
	newer := newIdempotencyRecord("quotes.execute", cutoff.Add(time.Microsecond))
	all := []*store.IdempotencyRecord{old, older, justBefore, atCutoff, newer}
	f.tx(func(tx store.Tx) error {
		for _, r := range all {
			if err := tx.PutIdempotencyRecord(f.ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	steps := []struct {
		name    string
		before  time.Time
		deleted int64
		left    []*store.IdempotencyRecord
	}{
		{"before all of them", cutoff.Add(-72 * time.Hour), 0, all},
		{"before the cutoff", cutoff, 3, []*store.IdempotencyRecord{atCutoff, newer}},
		{"again", cutoff, 0, []*store.IdempotencyRecord{atCutoff, newer}},
		{"a microsecond after the cutoff", cutoff.Add(time.Microsecond), 1, []*store.IdempotencyRecord{newer}},
		{"long after", cutoff.Add(24 * time.Hour), 1, nil},
		{"nothing left", cutoff.Add(24 * time.Hour), 0, nil},
	}
	for _, s := range steps {
		f.Run(s.name, func(t *testing.T) {
			var n int64
			err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
				n, err = tx.DeleteIdempotencyRecords(f.ctx, s.before)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != s.deleted {
				t.Errorf("DeleteIdempotencyRecords(%v) = %d, want %d", s.before, n, s.deleted)
			}
			err = f.s.Tx(f.ctx, func(tx store.Tx) error {
				for _, r := range all {
					got, err := tx.GetIdempotencyRecord(f.ctx, r.Scope, r.Key)
					if slices.Contains(s.left, r) {
						if err := checkFound(got, err, *r); err != nil {
							t.Errorf("record created at %v: %v", r.CreatedAt, err)
						}
					} else {
						wantErr(t, fmt.Sprintf("record created at %v", r.CreatedAt), err, store.ErrNotFound)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ---- errors

func testMoneyNotFound(f *fixture) {
	missing := func(prefix string) string { return newID(prefix) }
	c, a, e := f.payer()
	ghost := newTransaction(c, a.ID, e.ID) // never stored
	cases := []struct {
		name string
		call func(store.Tx) error
	}{
		{"Credit", func(tx store.Tx) error { return ledgerCredit(tx, f.ctx, missing("InternalAccount"), 10, at(0)) }},
		{"Hold", func(tx store.Tx) error {
			ok, err := ledgerHold(tx, f.ctx, missing("InternalAccount"), 10, at(0))
			if ok {
				return errors.New("hold on an unknown account reported true")
			}
			return err
		}},
		{"ReleaseHold", func(tx store.Tx) error { return ledgerRelease(tx, f.ctx, missing("InternalAccount"), 10, at(0)) }},
		{"SettleHold", func(tx store.Tx) error { return ledgerSettle(tx, f.ctx, missing("InternalAccount"), 10, at(0)) }},
		{"GetQuote", func(tx store.Tx) error { _, err := tx.GetQuote(f.ctx, missing("Quote")); return err }},
		{"GetQuote with a transaction id", func(tx store.Tx) error { _, err := tx.GetQuote(f.ctx, ghost.ID); return err }},
		{"GetTransaction", func(tx store.Tx) error { _, err := tx.GetTransaction(f.ctx, missing("Transaction")); return err }},
		{"AdvanceTransaction", func(tx store.Tx) error {
			ok, err := tx.AdvanceTransaction(f.ctx, ghost, ghost.Status)
			if ok {
				return errors.New("advance of an unknown transaction reported true")
			}
			return err
		}},
		{"ConfirmReceipt", func(tx store.Tx) error {
			return tx.ConfirmReceipt(f.ctx, missing("Transaction"), at(0), at(0))
		}},
		{"GetIdempotencyRecord", func(tx store.Tx) error {
			_, err := tx.GetIdempotencyRecord(f.ctx, "quotes.create", "missing")
			return err
		}},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.name, f.s.Tx(f.ctx, tc.call), store.ErrNotFound)
		})
	}
	// Nothing was created on the way.
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListTransactions(f.ctx, store.TransactionFilter{})
		if err != nil {
			return err
		}
		if p.TotalCount != 0 {
			f.Errorf("transactions after only failed calls: %+v", p)
		}
		return nil
	})
	CheckBooks(f, f.s)
}

// testMoneyMissingReference: a quote names its transaction, customer,
// source account and destination account, and a transaction its customer;
// naming one that does not exist fails with ErrNotFound and stores nothing.
func testMoneyMissingReference(f *fixture) {
	c, a, e := f.payer()
	quoteOf := func(mod func(q *store.Quote)) *store.Quote {
		x := newTransaction(c, a.ID, e.ID)
		f.createTransactions(x)
		q := newQuote(x)
		mod(q)
		return q
	}
	noTransaction := newQuote(newTransaction(c, a.ID, e.ID)) // its transaction is never stored
	cases := []struct {
		name  string
		quote *store.Quote
	}{
		{"quote of an unknown transaction", noTransaction},
		{"quote of an unknown customer", quoteOf(func(q *store.Quote) { q.CustomerID = newID("Customer") })},
		{"quote from an unknown internal account", quoteOf(func(q *store.Quote) { q.SourceAccountID = newID("InternalAccount") })},
		{"quote to an unknown external account", quoteOf(func(q *store.Quote) { q.DestinationAccountID = newID("ExternalAccount") })},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			wantErr(t, "create", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateQuote(f.ctx, tc.quote) }),
				store.ErrNotFound)
			wantErr(t, "read back", f.s.Tx(f.ctx, func(tx store.Tx) error {
				_, err := tx.GetQuote(f.ctx, tc.quote.ID)
				return err
			}), store.ErrNotFound)
		})
	}
	f.Run("transaction of an unknown customer", func(t *testing.T) {
		stranger := newCustomer() // never stored
		x := newTransaction(stranger, a.ID, e.ID)
		wantErr(t, "create", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateTransaction(f.ctx, x) }),
			store.ErrNotFound)
		wantErr(t, "read back", f.s.Tx(f.ctx, func(tx store.Tx) error {
			_, err := tx.GetTransaction(f.ctx, x.ID)
			return err
		}), store.ErrNotFound)
	})
}

// testMoneyDuplicateID: a quote or transaction with a taken id is a
// conflict that leaves the existing record as it was; the caller may carry
// on in the same Tx, and what it does afterwards commits.
func testMoneyDuplicateID(f *fixture) {
	c, a, e := f.payer()
	x := newTransaction(c, a.ID, e.ID)
	other := newTransaction(c, a.ID, e.ID)
	f.createTransactions(x, other)
	q := newQuote(x)
	f.tx(func(tx store.Tx) error { return tx.CreateQuote(f.ctx, q) })

	q2 := newQuote(other) // another, valid transaction; the id of q
	q2.ID, q2.LockedAmount, q2.Description = q.ID, 1, "second"
	x2 := newTransaction(c, a.ID, e.ID)
	x2.ID, x2.Status, x2.Description = x.ID, "FAILED", "second"
	cases := []struct {
		name   string
		create func(store.Tx) error
		check  func(store.Tx) error
	}{
		{"quote", func(tx store.Tx) error { return tx.CreateQuote(f.ctx, q2) },
			func(tx store.Tx) error { got, err := tx.GetQuote(f.ctx, q.ID); return checkFound(got, err, *q) }},
		{"transaction", func(tx store.Tx) error { return tx.CreateTransaction(f.ctx, x2) },
			func(tx store.Tx) error { got, err := tx.GetTransaction(f.ctx, x.ID); return checkFound(got, err, *x) }},
	}
	for _, tc := range cases {
		f.Run(tc.name, func(t *testing.T) {
			after := newIncoming(c, a.ID)
			err := f.s.Tx(f.ctx, func(tx store.Tx) error {
				wantErr(t, "create with a taken id", tc.create(tx), store.ErrConflict)
				return tx.CreateTransaction(f.ctx, after)
			})
			if err != nil {
				t.Fatalf("carrying on after the conflict: %v", err)
			}
			if err := f.s.Tx(f.ctx, tc.check); err != nil {
				t.Error(err)
			}
			if err := f.s.Tx(f.ctx, func(tx store.Tx) error { _, err := tx.GetTransaction(f.ctx, after.ID); return err }); err != nil {
				t.Errorf("write after the conflict: %v", err)
			}
		})
	}
}

// ---- deposit references

// testDepositReferences: every new account gets a well-formed reference of
// its own unless it brings one; reads return it; the lookup by reference
// finds exactly that account; a taken reference is a conflict.
func testDepositReferences(f *fixture) {
	c := f.customers(1)[0]
	const n = 40
	made := make([]*store.InternalAccount, n)
	f.tx(func(tx store.Tx) error {
		for i := range made {
			made[i] = newAccount(c.ID)
			if err := tx.CreateInternalAccount(f.ctx, made[i]); err != nil {
				return err
			}
		}
		return nil
	})
	seen := map[string]bool{}
	for _, a := range made {
		ref, ok := store.ParseDepositReference(a.DepositReference)
		if !ok || ref != a.DepositReference {
			f.Fatalf("account %s has the malformed deposit reference %q", a.ID, a.DepositReference)
		}
		if seen[ref] {
			f.Fatalf("deposit reference %s given twice", ref)
		}
		seen[ref] = true
		same(f, "account read back", f.account(a.ID), *a)
		f.tx(func(tx store.Tx) error {
			got, err := tx.InternalAccountByDepositReference(f.ctx, ref)
			if err != nil {
				return err
			}
			same(f, "account by reference", *got, *a)
			return nil
		})
	}
	f.tx(func(tx store.Tx) error {
		page, err := tx.ListInternalAccounts(f.ctx, store.InternalAccountFilter{CustomerID: c.ID, Limit: 100})
		if err != nil {
			return err
		}
		for _, a := range page.Items {
			if !seen[a.DepositReference] {
				f.Errorf("listed account %s has reference %q", a.ID, a.DepositReference)
			}
		}
		_, err = tx.InternalAccountByDepositReference(f.ctx, "0000000000")
		wantErr(f, "unknown reference", err, store.ErrNotFound)
		return nil
	})

	// A reference given by the caller is kept; a taken one conflicts and
	// the transaction carries on.
	own := newAccount(c.ID)
	own.DepositReference = store.NewDepositReference()
	taken := newAccount(c.ID)
	taken.DepositReference = own.DepositReference
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateInternalAccount(f.ctx, own); err != nil {
			return err
		}
		wantErr(f, "a taken deposit reference", tx.CreateInternalAccount(f.ctx, taken), store.ErrConflict)
		return nil
	})
	same(f, "given reference", f.account(own.ID).DepositReference, own.DepositReference)
	f.tx(func(tx store.Tx) error {
		_, err := tx.GetInternalAccount(f.ctx, taken.ID)
		wantErr(f, "the refused account", err, store.ErrNotFound)
		return nil
	})
}

// testIncomingReferenceUnique: an incoming transaction's reference is unique
// per receiving account (a bank credit is recorded once); other accounts,
// outgoing transactions and empty references are not constrained.
func testIncomingReferenceUnique(f *fixture) {
	c, a, e := f.payer()
	other := newAccount(c.ID)
	f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, other) })
	first := newIncoming(c, a.ID)
	first.Reference = "BANK-REF-1"
	f.createTransactions(first)
	again := newIncoming(c, a.ID)
	again.Reference = "BANK-REF-1"
	f.tx(func(tx store.Tx) error {
		wantErr(f, "the same bank reference again", tx.CreateTransaction(f.ctx, again), store.ErrConflict)
		return nil
	})
	elsewhere := newIncoming(c, other.ID)
	elsewhere.Reference = "BANK-REF-1"
	blank1, blank2 := newIncoming(c, a.ID), newIncoming(c, a.ID)
	out1, out2 := newTransaction(c, a.ID, e.ID), newTransaction(c, a.ID, e.ID)
	out1.Reference, out2.Reference = "SAME", "SAME"
	f.createTransactions(elsewhere, blank1, blank2, out1, out2)
}
