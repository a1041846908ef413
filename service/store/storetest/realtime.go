package storetest

import (
	"errors"

	"paywallet/service/store"
)

// testQuoteFundingReference: a just-in-time funded quote keeps its funding
// reference, is found by it (exactly), a second quote with the same
// reference is refused with ErrConflict, and quotes without one (NULL)
// do not collide.
func testQuoteFundingReference(f *fixture) {
	c, a, e := f.payer()
	mk := func(ref string) *store.Quote {
		x := newTransaction(c, a.ID, e.ID)
		q := newQuote(x)
		q.FundingReference = ref
		f.tx(func(tx store.Tx) error {
			if err := tx.CreateTransaction(f.ctx, x); err != nil {
				return err
			}
			return tx.CreateQuote(f.ctx, q)
		})
		return q
	}
	ref := store.NewDepositReference()
	funded := mk(ref)
	mk("")
	mk("") // two quotes without a reference do not conflict
	f.tx(func(tx store.Tx) error {
		got, err := tx.QuoteByFundingReference(f.ctx, ref)
		if err != nil {
			return err
		}
		same(f, "quote by funding reference", *got, *funded)
		got, err = tx.GetQuote(f.ctx, funded.ID)
		if err != nil {
			return err
		}
		same(f, "GetQuote keeps the funding reference", *got, *funded)
		if _, err := tx.QuoteByFundingReference(f.ctx, store.NewDepositReference()); !errors.Is(err, store.ErrNotFound) {
			f.Errorf("unknown funding reference: %v, want ErrNotFound", err)
		}
		if _, err := tx.QuoteByFundingReference(f.ctx, ""); !errors.Is(err, store.ErrNotFound) {
			f.Errorf("empty funding reference: %v, want ErrNotFound", err)
		}
		return nil
	})
	x := newTransaction(c, a.ID, e.ID)
	q := newQuote(x)
	q.FundingReference = ref
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		if err := tx.CreateTransaction(f.ctx, x); err != nil {
			return err
		}
		return tx.CreateQuote(f.ctx, q)
	})
	if !errors.Is(err, store.ErrConflict) {
		f.Errorf("second quote with funding reference %s: %v, want ErrConflict", ref, err)
	}
}
