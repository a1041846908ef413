package sqlstore

import (
	"path/filepath"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// TestExternalAccountConstraints checks that the schema itself, not only the
// code in front of it, refuses a second default UMA deposit account of an
// owner and a second account of an owner with the same fingerprint, the
// platform (customer_id NULL) included.
func TestExternalAccountConstraints(t *testing.T) {
	cases := []struct {
		name string
		open func(t *testing.T) (*DB, error)
	}{
		{"sqlite", func(t *testing.T) (*DB, error) {
			return OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "c.db"))
		}},
		{"postgres", func(t *testing.T) (*DB, error) {
			return OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db, err := c.open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := t.Context()
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			cust := &store.Customer{ID: "Customer:c1", CustomerType: "INDIVIDUAL", CreatedAt: now, UpdatedAt: now}
			acct := func(id, customer string, fp byte) *store.ExternalAccount {
				return &store.ExternalAccount{ID: id, CustomerID: customer, Currency: "USD", Status: "PENDING",
					Fingerprint: []byte{fp}, CreatedAt: now, UpdatedAt: now}
			}
			err = db.Tx(ctx, func(x store.Tx) error {
				if err := x.CreateCustomer(ctx, cust); err != nil {
					return err
				}
				for _, a := range []*store.ExternalAccount{
					acct("ExternalAccount:a1", cust.ID, 1), acct("ExternalAccount:a2", cust.ID, 2),
					acct("ExternalAccount:p1", "", 1), acct("ExternalAccount:p2", "", 2),
				} {
					if err := x.CreateExternalAccount(ctx, a); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			stmts := []struct {
				name string
				sql  string
				args []any
			}{
				{"two defaults of a customer",
					`UPDATE external_accounts SET default_uma_deposit_account = ? WHERE customer_id = ?`, []any{true, cust.ID}},
				{"two defaults of the platform",
					`UPDATE external_accounts SET default_uma_deposit_account = ? WHERE customer_id IS NULL`, []any{true}},
				{"a customer's fingerprint twice",
					`UPDATE external_accounts SET fingerprint = ? WHERE id = ?`, []any{[]byte{1}, "ExternalAccount:a2"}},
				{"the platform's fingerprint twice",
					`UPDATE external_accounts SET fingerprint = ? WHERE id = ?`, []any{[]byte{1}, "ExternalAccount:p2"}},
			}
			for _, s := range stmts {
				_, err := db.db.ExecContext(ctx, db.d.rebind(s.sql), s.args...)
				if db.d.classify(err) != errUnique {
					t.Errorf("%s: got %v, want a unique violation", s.name, err)
				}
			}
		})
	}
}
