package storetest

import (
	"context"
	"fmt"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
)

// The four balance moves the money tests make, each one ledger transaction
// posted with PostLedger: a sandbox funding, a HOLD, a VOID and a POST to
// a rail's clearing.

func walletCurrency(ctx context.Context, tx store.Tx, id string) (string, error) {
	a, err := tx.GetInternalAccount(ctx, id)
	if err != nil {
		return "", err
	}
	return a.Currency, nil
}

// mustPost posts lt and turns a refusal into an error.
func mustPost(ctx context.Context, tx store.Tx, lt *ledger.Transaction) error {
	ok, err := tx.PostLedger(ctx, lt)
	if err == nil && !ok {
		err = fmt.Errorf("%s of %d refused: not enough money", lt.Kind, lt.Entries[0].Amount)
	}
	return err
}

func ledgerCredit(tx store.Tx, ctx context.Context, id string, amount int64, at time.Time) error {
	cur, err := walletCurrency(ctx, tx, id)
	if err != nil {
		return err
	}
	return mustPost(ctx, tx, ledger.New(newID("LedgerTransaction"), ledger.KindFunding, at, "Sandbox funding").
		Move(ledger.Sandbox(cur), cur, amount, ledger.WalletAccount(id, ledger.Available), cur, amount))
}

func ledgerHold(tx store.Tx, ctx context.Context, id string, amount int64, at time.Time) (bool, error) {
	cur, err := walletCurrency(ctx, tx, id)
	if err != nil {
		return false, err
	}
	return tx.PostLedger(ctx, ledger.HoldFor(newID("LedgerTransaction"), at, "Payment on its way", id, cur, amount))
}

func ledgerRelease(tx store.Tx, ctx context.Context, id string, amount int64, at time.Time) error {
	cur, err := walletCurrency(ctx, tx, id)
	if err != nil {
		return err
	}
	return mustPost(ctx, tx, ledger.VoidOf(newID("LedgerTransaction"), at, "Payment failed, money back", id, cur, amount))
}

func ledgerSettle(tx store.Tx, ctx context.Context, id string, amount int64, at time.Time) error {
	cur, err := walletCurrency(ctx, tx, id)
	if err != nil {
		return err
	}
	return mustPost(ctx, tx, ledger.Payout(newID("LedgerTransaction"), at, "Payment sent", id, cur, amount, 0, "ACH", cur, amount))
}

// testLedgerSealChain posts seven ledger transactions and seals them in
// batches of five and two: every transaction's stored link must be the
// chain's link at its own place, and the head the last one. (The sealer
// once gave every row of a batch the batch's last link: each row's link
// argument was a slice of the head it kept overwriting.)
func testLedgerSealChain(f *fixture) {
	_, a, _ := f.payer()
	var ids []string
	for i := range 7 {
		f.credit(a.ID, int64(100+i), at(time.Duration(i)*time.Second))
	}
	for _, limit := range []int{5, 2} {
		n, _, err := f.s.SealLedger(f.ctx, limit, at(time.Minute))
		if err != nil || n != limit {
			f.Fatalf("SealLedger(%d): sealed %d, %v", limit, n, err)
		}
	}
	var head ledger.Head
	var chain []*ledger.Transaction
	f.tx(func(tx store.Tx) error {
		chain = chain[:0]
		var err error
		if head, err = tx.LedgerHead(f.ctx); err != nil {
			return err
		}
		page, err := tx.ListLedgerEntries(f.ctx, store.LedgerEntryFilter{Wallet: a.ID, Limit: 100})
		if err != nil {
			return err
		}
		ids = ids[:0]
		for _, e := range page.Items {
			ids = append(ids, e.LedgerTransactionID)
		}
		for _, id := range ids {
			lt, err := tx.GetLedgerTransaction(f.ctx, id)
			if err != nil {
				return err
			}
			chain = append(chain, lt)
		}
		return nil
	})
	if len(chain) != 7 || head.Seq != 7 {
		f.Fatalf("%d ledger transactions, head at seq %d; want 7 and 7", len(chain), head.Seq)
	}
	var link ledger.Hash
	for i, lt := range chain {
		if lt.Seq != int64(i+1) {
			f.Fatalf("ledger transaction %d (%s) has seq %d", i+1, lt.ID, lt.Seq)
		}
		link = ledger.Link(link, lt.Seq, ledger.BodyHash(lt))
		if lt.Link != link {
			f.Errorf("seq %d: stored link %s, the chain's %s", lt.Seq, lt.Link, link)
		}
	}
	if head.Hash != link {
		f.Errorf("head %s, the chain's last link %s", head.Hash, link)
	}
}
