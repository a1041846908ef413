package sqlstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/seclog"
	"paywallet/service/store"
)

// TestVerifySecurityLog: on both dialects, the chains as the store wrote
// them verify, and a record changed behind the store's back (its details,
// its time, its account) is named.
func TestVerifySecurityLog(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			for _, c := range []struct {
				name, tamper string
				arg          func(b *booksDB) any
			}{
				{"details", `UPDATE security_events SET details = ? WHERE id = ?`, func(*booksDB) any { return `{"method":"PASSKEY"}` }},
				{"time", `UPDATE security_events SET created_at = ? WHERE id = ?`, func(b *booksDB) any { return b.time(b.now.Add(time.Hour)) }},
				{"account", `UPDATE security_events SET account_id = ? WHERE id = ?`, func(*booksDB) any { return ids.New("InternalAccount") }},
			} {
				t.Run(c.name, func(t *testing.T) {
					b := openBooks(t, d)
					var recs []string
					b.tx(func(tx store.Tx) error {
						cust := &store.Customer{ID: ids.New("Customer"), PlatformCustomerID: "sec-" + d, CustomerType: "INDIVIDUAL",
							CreatedAt: b.now, UpdatedAt: b.now}
						if err := tx.CreateCustomer(b.ctx, cust); err != nil {
							return err
						}
						for i := range 3 {
							e := &store.SecurityEvent{ID: ids.New("SecurityEvent"), CustomerID: cust.ID, Type: "SIGNED_IN",
								Details: fmt.Appendf(nil, `{"method":"EMAIL_OTP","n":%d}`, i), CreatedAt: b.tick()}
							if err := tx.AppendSecurityEvent(b.ctx, e); err != nil {
								return err
							}
							recs = append(recs, e.ID)
						}
						return nil
					})
					if r, err := b.st.VerifySecurityLog(b.ctx, nil); err != nil || r.Records != 3 || r.Customers != 1 {
						t.Fatalf("clean: %+v %v", r, err)
					}
					b.exec(c.tamper, c.arg(b), recs[1])
					r, err := b.st.VerifySecurityLog(b.ctx, nil)
					var p *seclog.Problem
					if !errors.As(err, &p) || p.ID != recs[1] || r.ProblemCount != 1 {
						t.Fatalf("tampered %s: %v, %+v", c.name, err, r.Problems)
					}
				})
			}
		})
	}
}
