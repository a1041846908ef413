package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"paywallet/service/store"
)

// TestBackfillDepositReferences: accounts made before migration 0007 (no
// deposit reference) get a well-formed one each, different from every
// other, and accounts that have one keep it.
func TestBackfillDepositReferences(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "backfill.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := &store.Customer{ID: "Customer:019aa5d2-7c10-7000-8000-000000000001", PlatformCustomerID: "p1", CustomerType: "INDIVIDUAL",
		CreatedAt: now, UpdatedAt: now}
	var accounts []*store.InternalAccount
	err = db.Tx(ctx, func(tx store.Tx) error {
		if err := tx.CreateCustomer(ctx, c); err != nil {
			return err
		}
		for i := range 5 {
			a := &store.InternalAccount{ID: "InternalAccount:019aa5d2-7c10-7000-8000-00000000001" + string(rune('0'+i)),
				CustomerID: c.ID, Type: "EMBEDDED_WALLET", Status: "ACTIVE", Currency: "USD", CreatedAt: now, UpdatedAt: now}
			if err := tx.CreateInternalAccount(ctx, a); err != nil {
				return err
			}
			accounts = append(accounts, a)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first three as a version before 0007 left them.
	for _, a := range accounts[:3] {
		if _, err := db.db.ExecContext(ctx, `UPDATE internal_accounts SET deposit_reference = NULL WHERE id = ?`, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	sqlTx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := backfillDepositReferences(ctx, sqlTx, db.d); err != nil {
		t.Fatal(err)
	}
	if err := sqlTx.Commit(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = db.Tx(ctx, func(tx store.Tx) error {
		for i, a := range accounts {
			got, err := tx.GetInternalAccount(ctx, a.ID)
			if err != nil {
				return err
			}
			if ref, ok := store.ParseDepositReference(got.DepositReference); !ok || ref != got.DepositReference || seen[ref] {
				t.Errorf("account %d: deposit reference %q after the backfill", i, got.DepositReference)
			}
			seen[got.DepositReference] = true
			if i >= 3 && got.DepositReference != a.DepositReference {
				t.Errorf("account %d: reference changed from %s to %s", i, a.DepositReference, got.DepositReference)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
