package storetest

import (
	"time"

	"paywallet/service/store"
)

// This file checks store.LimitsTx: an embedded wallet's personal limits
// and the rolling total they are enforced against.

// testWalletLimits: no row is ErrNotFound; every field round-trips, a
// removed limit (nil) and a pending removal (Set with nil) included; a
// second put replaces the first, a pending change goes when it is put
// without one; an unknown account is ErrNotFound.
func testWalletLimits(f *fixture) {
	_, a, _ := f.world()
	get := func() (*store.WalletLimits, error) {
		var l *store.WalletLimits
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			var err error
			l, err = tx.GetWalletLimits(f.ctx, a.ID)
			return err
		})
		return l, err
	}
	put := func(l *store.WalletLimits) {
		f.Helper()
		f.tx(func(tx store.Tx) error { return tx.PutWalletLimits(f.ctx, l) })
		got, err := get()
		if err != nil {
			f.Fatalf("limits read back: %v", err)
		}
		same(f, "limits read back", *got, *l)
		if l.Pending != nil {
			same(f, "pending change read back", *got.Pending, *l.Pending)
		}
	}
	_, err := get()
	wantErr(f, "limits never set", err, store.ErrNotFound)

	put(&store.WalletLimits{AccountID: a.ID, PerPayment: new(int64(50_000)), Daily: new(int64(9_000_000_000_000_000)),
		CoolingOffHours: 720, UpdatedAt: at(time.Minute)})
	put(&store.WalletLimits{AccountID: a.ID, Daily: new(int64(1)), CoolingOffHours: 0, UpdatedAt: at(2 * time.Minute),
		Pending: &store.PendingLimits{PerPaymentSet: true, PerPayment: nil, DailySet: true, Daily: new(int64(700)),
			CoolingOffSet: true, CoolingOffHours: 0, EffectiveAt: at(24 * time.Hour)}})
	put(&store.WalletLimits{AccountID: a.ID, PerPayment: new(int64(3)), UpdatedAt: at(3 * time.Minute),
		Pending: &store.PendingLimits{CoolingOffSet: true, CoolingOffHours: 12, EffectiveAt: at(25 * time.Hour)}})
	put(&store.WalletLimits{AccountID: a.ID, UpdatedAt: at(4 * time.Minute)})

	wantErr(f, "limits of an unknown account", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.PutWalletLimits(f.ctx, &store.WalletLimits{AccountID: lowID("InternalAccount", 9), UpdatedAt: at(0)})
	}), store.ErrNotFound)
}

// testOutgoingSince: the total counts the wallet's outgoing payments that
// took money from it since the time given (inclusive): executed quotes
// (PROCESSING, COMPLETED) and transfer-outs (PENDING without a quote);
// not a quote's PENDING transaction, not FAILED, REJECTED, EXPIRED or
// REFUNDED ones, not incoming payments, not another wallet's, not older
// ones. Nothing is 0, and the sum saturates rather than wraps.
func testOutgoingSince(f *fixture) {
	c, a, e := f.payer()
	other := newAccount(c.ID)
	f.tx(func(tx store.Tx) error { return tx.CreateInternalAccount(f.ctx, other) })
	total := func(since time.Time, want int64) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			got, err := tx.OutgoingSince(f.ctx, a.ID, since)
			if err != nil {
				return err
			}
			if got != want {
				f.Errorf("OutgoingSince(%v) = %d, want %d", since.Sub(base), got, want)
			}
			return nil
		})
	}
	total(at(0), 0)
	payment := func(status string, amount int64, created time.Duration, quoted bool) *store.Transaction {
		x := newTransaction(c, a.ID, e.ID)
		x.Status, x.SentAmount, x.CreatedAt = status, amount, at(created)
		if !quoted {
			x.QuoteID = ""
		}
		return x
	}
	h := time.Hour
	elsewhere := newTransaction(c, other.ID, e.ID)
	elsewhere.Status = "COMPLETED"
	f.createTransactions(
		payment("PROCESSING", 1, h, true),
		payment("COMPLETED", 10, 2*h, true),
		payment("PENDING", 100, 3*h, false),  // a transfer-out, held
		payment("PENDING", 1_000, 3*h, true), // a quote not executed
		payment("FAILED", 10_000, 3*h, true),
		payment("REJECTED", 10_000, 3*h, false),
		payment("EXPIRED", 10_000, 3*h, true),
		payment("REFUNDED", 10_000, 3*h, true),
		payment("COMPLETED", 100_000, 0, true), // before the window below
		newIncoming(c, a.ID),
		elsewhere,
	)
	total(at(time.Second), 111)
	total(at(h), 111) // inclusive
	total(at(h+time.Microsecond), 110)
	total(at(0), 100_111)
	total(at(4*h), 0)

	// NewestOutgoingOver, over the same rows: newest first they are 100
	// (3h), 10 (2h), 1 (h), 100,000 (0).
	over := func(since time.Time, budget int64, want time.Time) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			got, err := tx.NewestOutgoingOver(f.ctx, a.ID, since, budget)
			if err != nil {
				return err
			}
			if !got.Equal(want) {
				f.Errorf("NewestOutgoingOver(%v, %d) = %v, want %v", since.Sub(base), budget, got, want)
			}
			return nil
		})
	}
	over(at(0), 99, at(3*h))                // the newest alone is over
	over(at(0), 100, at(2*h))               // 100 fits, 110 does not
	over(at(0), 110, at(h))                 // 111 does not
	over(at(0), 111, at(0))                 // only the oldest takes it over
	over(at(time.Second), 111, time.Time{}) // without the oldest, all fit
	over(at(0), 100_111, time.Time{})
	over(at(4*h), 0, time.Time{}) // nothing counted

	f.createTransactions(payment("COMPLETED", 9_000_000_000_000_000_000, 5*h, true),
		payment("COMPLETED", 9_000_000_000_000_000_000, 5*h, false))
	total(at(5*h), 9_223_372_036_854_775_807)
	// Sums past the int64 maximum do not wrap into fitting.
	over(at(5*h), 9_223_372_036_854_775_807, at(5*h))
}
