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
