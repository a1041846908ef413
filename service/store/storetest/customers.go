package storetest

import (
	"strings"
	"time"

	"paywallet/service/store"
)

// testCustomerFields: the fields of the reference's customers (KYB status,
// profile document, sealed identifier, deletion time) round-trip through
// create, update and list.
func testCustomerFields(f *fixture) {
	c := newCustomer()
	c.KYBStatus = "PENDING"
	c.Profile = []byte(`{"region":"US","businessInfo":{"legalName":"Acme Ñ ✓"}}`)
	c.Identifier = []byte{0, 1, 2, 0xff}
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetCustomer(f.ctx, c.ID)
		if err != nil {
			return err
		}
		same(f, "created customer", *got, *c)
		c.KYCStatus, c.KYBStatus, c.Profile, c.Identifier, c.UpdatedAt = "APPROVED", "", []byte(`{"phoneNumber":"+14155551234"}`), nil, at(time.Hour)
		if err := tx.UpdateCustomer(f.ctx, c); err != nil {
			return err
		}
		got, err = tx.GetCustomer(f.ctx, c.ID)
		if err != nil {
			return err
		}
		same(f, "updated customer", *got, *c)
		return nil
	})
}

// testDeleteCustomer: DeleteCustomer marks once, frees the
// platformCustomerId, and lists leave deleted customers out unless asked.
func testDeleteCustomer(f *fixture) {
	c := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	f.tx(func(tx store.Tx) error {
		won, err := tx.DeleteCustomer(f.ctx, c.ID, at(time.Hour))
		if err != nil || !won {
			f.Errorf("first DeleteCustomer: %v %v", won, err)
		}
		won, err = tx.DeleteCustomer(f.ctx, c.ID, at(2*time.Hour))
		if err != nil || won {
			f.Errorf("second DeleteCustomer: %v %v", won, err)
		}
		got, err := tx.GetCustomer(f.ctx, c.ID)
		if err != nil {
			return err
		}
		if !got.DeletedAt.Equal(at(time.Hour)) || !got.UpdatedAt.Equal(at(time.Hour)) {
			f.Errorf("deleted customer %+v", got)
		}
		return nil
	})
	again := newCustomer()
	again.PlatformCustomerID = c.PlatformCustomerID
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, again) })
	third := newCustomer()
	third.PlatformCustomerID = c.PlatformCustomerID
	err := f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, third) })
	wantErr(f, "a platformCustomerId taken by a customer that is not deleted", err, store.ErrConflict)
	f.tx(func(tx store.Tx) error {
		p, err := tx.ListCustomers(f.ctx, store.CustomerFilter{PlatformCustomerID: c.PlatformCustomerID})
		if err != nil {
			return err
		}
		if len(p.Items) != 1 || p.Items[0].ID != again.ID || p.TotalCount != 1 {
			f.Errorf("list without deleted: %+v", p)
		}
		p, err = tx.ListCustomers(f.ctx, store.CustomerFilter{PlatformCustomerID: c.PlatformCustomerID, IncludeDeleted: true})
		if err != nil {
			return err
		}
		if len(p.Items) != 2 || p.TotalCount != 2 {
			f.Errorf("list with deleted: %+v", p)
		}
		return nil
	})
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.DeleteCustomer(f.ctx, newID("Customer"), at(0))
		return err
	})
	wantErr(f, "DeleteCustomer of an unknown customer", err, store.ErrNotFound)
}

// testPaymentsInFlight counts PROCESSING transactions, those with a next
// step in any status but PENDING, and PENDING transfers (no quote): a
// quote nobody executed moves no money, a transfer does;
// SetInternalAccountStatus sets the status.
func testPaymentsInFlight(f *fixture) {
	c, a, e := f.payer()
	count := func(want int) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			n, err := tx.PaymentsInFlight(f.ctx, c.ID)
			if err != nil {
				return err
			}
			if n != want {
				f.Errorf("PaymentsInFlight = %d, want %d", n, want)
			}
			return nil
		})
	}
	count(0)
	pending := newTransaction(c, a.ID, e.ID) // PENDING with a next step (its expiry)
	done := newTransaction(c, a.ID, e.ID)
	done.Status, done.NextStepAt = "COMPLETED", time.Time{}
	f.createTransactions(pending, done)
	count(0)
	processing := newTransaction(c, a.ID, e.ID)
	processing.Status, processing.NextStepAt = "PROCESSING", time.Time{}
	comingBack := newTransaction(c, a.ID, e.ID)
	comingBack.Status = "COMPLETED"
	f.createTransactions(processing, comingBack)
	count(2)
	transfer := newTransaction(c, a.ID, e.ID) // a transfer-in about to be pulled
	transfer.QuoteID = ""
	f.createTransactions(transfer)
	count(3)

	f.tx(func(tx store.Tx) error {
		if err := tx.SetInternalAccountStatus(f.ctx, a.ID, "CLOSED", at(time.Hour)); err != nil {
			return err
		}
		got, err := tx.GetInternalAccount(f.ctx, a.ID)
		if err != nil {
			return err
		}
		if got.Status != "CLOSED" || !got.UpdatedAt.Equal(at(time.Hour)) {
			f.Errorf("closed account %+v", got)
		}
		return nil
	})
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.SetInternalAccountStatus(f.ctx, newID("InternalAccount"), "CLOSED", at(0))
	})
	wantErr(f, "SetInternalAccountStatus of an unknown account", err, store.ErrNotFound)
}

// testCustomerByUmaAddress: GetCustomerByUmaAddress finds the oldest live
// customer with the address, skips deleted ones, and is ErrNotFound
// otherwise (exact match: no case folding).
func testCustomerByUmaAddress(f *fixture) {
	addr := "$uma-" + strings.ReplaceAll(newID("x")[2:], "-", "") + "@uma.example"
	gone, older, newer := newCustomer(), newCustomer(), newCustomer()
	gone.UmaAddress, older.UmaAddress, newer.UmaAddress = addr, addr, addr
	gone.CreatedAt, older.CreatedAt, newer.CreatedAt = at(time.Second), at(2*time.Second), at(3*time.Second)
	f.tx(func(tx store.Tx) error {
		for _, c := range []*store.Customer{newer, gone, older} {
			if err := tx.CreateCustomer(f.ctx, c); err != nil {
				return err
			}
		}
		_, err := tx.DeleteCustomer(f.ctx, gone.ID, at(time.Hour))
		return err
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetCustomerByUmaAddress(f.ctx, addr)
		if err != nil {
			return err
		}
		if got.ID != older.ID {
			f.Errorf("GetCustomerByUmaAddress: %s, want the oldest live customer %s", got.ID, older.ID)
		}
		_, err = tx.GetCustomerByUmaAddress(f.ctx, "$UMA"+addr[4:])
		wantErr(f, "another case", err, store.ErrNotFound)
		_, err = tx.GetCustomerByUmaAddress(f.ctx, "$nobody@uma.example")
		wantErr(f, "an unknown address", err, store.ErrNotFound)
		return nil
	})
}
