package storetest

import (
	"fmt"
	"sync"
	"time"

	"paywallet/service/seclog"
	"paywallet/service/store"
)

func newSecurityEvent(customerID, accountID, typ string, created time.Duration) *store.SecurityEvent {
	return &store.SecurityEvent{ID: newID("SecurityEvent"), CustomerID: customerID, AccountID: accountID, Type: typ,
		Details: []byte(`{"device":"Firefox on Linux","method":"PASSKEY"}`), CreatedAt: at(created)}
}

// testSecurityEventChain: appends number a customer's records 1, 2, …
// each chained to the one before (the hash recomputes with seclog), two
// customers' chains are apart, every field round-trips, an unknown
// customer is ErrNotFound, and a rolled-back append leaves no gap.
func testSecurityEventChain(f *fixture) {
	c1, c2 := newCustomer(), newCustomer()
	c2.PlatformCustomerID += "-2"
	acct := newAccount(c1.ID)
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateCustomer(f.ctx, c1); err != nil {
			return err
		}
		if err := tx.CreateCustomer(f.ctx, c2); err != nil {
			return err
		}
		return tx.CreateInternalAccount(f.ctx, acct)
	})
	var evs []*store.SecurityEvent
	for i, c := range []string{c1.ID, c1.ID, c2.ID, c1.ID} {
		e := newSecurityEvent(c, "", "SIGNED_IN", time.Duration(i)*time.Minute)
		if i == 1 {
			e.AccountID, e.Type, e.Details = acct.ID, "SESSION_REVOKED", []byte(`{}`)
		}
		f.tx(func(tx store.Tx) error { return tx.AppendSecurityEvent(f.ctx, e) })
		evs = append(evs, e)
	}
	wantSeq := []int64{1, 2, 1, 3}
	for i, e := range evs {
		if e.Seq != wantSeq[i] {
			f.Errorf("record %d: seq %d, want %d", i, e.Seq, wantSeq[i])
		}
	}
	if evs[0].PrevHash != seclog.Zero || evs[2].PrevHash != seclog.Zero {
		f.Errorf("first records' prev_hash %q %q, want zeros", evs[0].PrevHash, evs[2].PrevHash)
	}
	if evs[1].PrevHash != evs[0].Hash || evs[3].PrevHash != evs[1].Hash {
		f.Errorf("links: %+v", evs)
	}
	var v seclog.Verifier
	for _, e := range []*store.SecurityEvent{evs[0], evs[1], evs[3], evs[2]} {
		v.Add(&seclog.Row{Record: seclog.Record{ID: e.ID, CustomerID: e.CustomerID, AccountID: e.AccountID, Type: e.Type,
			Details: e.Details, CreatedAt: e.CreatedAt}, Seq: e.Seq, PrevHash: e.PrevHash, Hash: e.Hash})
	}
	if r := v.Finish(); r.Err() != nil || r.Records != 4 {
		f.Errorf("the chains as appended do not verify: %+v", r)
	}

	var p store.Page[store.SecurityEvent]
	f.tx(func(tx store.Tx) error {
		var err error
		p, err = tx.ListSecurityEvents(f.ctx, store.SecurityEventFilter{CustomerID: c1.ID})
		return err
	})
	if len(p.Items) != 3 || p.TotalCount != 3 || p.HasMore {
		f.Fatalf("c1's records: %+v", p)
	}
	same(f, "newest first", p.Items[0], *evs[3])
	same(f, "with an account", p.Items[1], *evs[1])
	same(f, "oldest", p.Items[2], *evs[0])

	wantErr(f, "an unknown customer", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.AppendSecurityEvent(f.ctx, newSecurityEvent(newID("Customer"), "", "SIGNED_IN", 0))
	}), store.ErrNotFound)
	rolled := newSecurityEvent(c2.ID, "", "SIGNED_IN", time.Hour)
	f.s.Tx(f.ctx, func(tx store.Tx) error { //nolint:errcheck // rolled back on purpose
		if err := tx.AppendSecurityEvent(f.ctx, rolled); err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	})
	next := newSecurityEvent(c2.ID, "", "SIGNED_IN", 2*time.Hour)
	f.tx(func(tx store.Tx) error { return tx.AppendSecurityEvent(f.ctx, next) })
	if next.Seq != 2 || next.PrevHash != evs[2].Hash {
		f.Errorf("after a rollback: seq %d prev %s, want 2 %s", next.Seq, next.PrevHash, evs[2].Hash)
	}
}

// testSecurityEventList: newest first by seq, the type filter, pages with
// a seq cursor and the total of the filter.
func testSecurityEventList(f *fixture) {
	c := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	types := []string{"SIGNED_IN", "SIGN_IN_FAILED", "SIGNED_IN", "SESSION_REVOKED", "SIGNED_IN"}
	for i, typ := range types {
		f.tx(func(tx store.Tx) error {
			return tx.AppendSecurityEvent(f.ctx, newSecurityEvent(c.ID, "", typ, time.Duration(i)*time.Second))
		})
	}
	seqs := func(p store.Page[store.SecurityEvent]) []int64 {
		out := []int64{}
		for _, e := range p.Items {
			out = append(out, e.Seq)
		}
		return out
	}
	type F = store.SecurityEventFilter
	cases := []struct {
		name   string
		f      F
		want   []int64
		more   bool
		total  int
		cursor string
	}{
		{"all", F{CustomerID: c.ID}, []int64{5, 4, 3, 2, 1}, false, 5, ""},
		{"page", F{CustomerID: c.ID, Limit: 2}, []int64{5, 4}, true, 5, "4"},
		{"next page", F{CustomerID: c.ID, Limit: 2, Cursor: "4"}, []int64{3, 2}, true, 5, "2"},
		{"last page", F{CustomerID: c.ID, Limit: 2, Cursor: "2"}, []int64{1}, false, 5, ""},
		{"by type", F{CustomerID: c.ID, Type: "SIGNED_IN"}, []int64{5, 3, 1}, false, 3, ""},
		{"another customer", F{CustomerID: newID("Customer")}, []int64{}, false, 0, ""},
	}
	for _, tc := range cases {
		var p store.Page[store.SecurityEvent]
		f.tx(func(tx store.Tx) error {
			var err error
			p, err = tx.ListSecurityEvents(f.ctx, tc.f)
			return err
		})
		same(f, tc.name+": seqs", seqs(p), tc.want)
		if p.HasMore != tc.more || p.TotalCount != tc.total || p.NextCursor != tc.cursor {
			f.Errorf("%s: hasMore %v total %d cursor %q, want %v %d %q", tc.name, p.HasMore, p.TotalCount, p.NextCursor,
				tc.more, tc.total, tc.cursor)
		}
	}
}

// testSecurityEventConcurrent: appends of one customer racing in many
// transactions make one chain 1..n without a gap or a fork (a collision
// on the seq is run again by the store, never surfaced).
func testSecurityEventConcurrent(f *fixture) {
	c := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- f.s.Tx(f.ctx, func(tx store.Tx) error {
				return tx.AppendSecurityEvent(f.ctx, newSecurityEvent(c.ID, "", "SIGNED_IN", time.Duration(i)*time.Second))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			f.Errorf("concurrent append: %v", err)
		}
	}
	var p store.Page[store.SecurityEvent]
	f.tx(func(tx store.Tx) error {
		var err error
		p, err = tx.ListSecurityEvents(f.ctx, store.SecurityEventFilter{CustomerID: c.ID, Limit: 100})
		return err
	})
	if len(p.Items) != n {
		f.Fatalf("%d records, want %d", len(p.Items), n)
	}
	var v seclog.Verifier
	for i := len(p.Items) - 1; i >= 0; i-- {
		e := &p.Items[i]
		v.Add(&seclog.Row{Record: seclog.Record{ID: e.ID, CustomerID: e.CustomerID, AccountID: e.AccountID, Type: e.Type,
			Details: e.Details, CreatedAt: e.CreatedAt}, Seq: e.Seq, PrevHash: e.PrevHash, Hash: e.Hash})
	}
	if r := v.Finish(); r.Err() != nil {
		f.Errorf("the chain after concurrent appends: %v", r.Err())
	}
}

// testSignOutLink: a link is used once, not after it expired, not when
// unknown; concurrent uses: one wins.
func testSignOutLink(f *fixture) {
	c := newCustomer()
	f.tx(func(tx store.Tx) error { return tx.CreateCustomer(f.ctx, c) })
	link := func(b byte, expires time.Duration) *store.SignOutLink {
		return &store.SignOutLink{TokenHash: []byte{b, 1, 2, 3}, CustomerID: c.ID, CreatedAt: at(0), ExpiresAt: at(expires)}
	}
	fresh, old, raced := link(1, time.Hour), link(2, time.Minute), link(3, time.Hour)
	f.tx(func(tx store.Tx) error {
		for _, l := range []*store.SignOutLink{fresh, old, raced} {
			if err := tx.CreateSignOutLink(f.ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
	wantErr(f, "a taken hash", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateSignOutLink(f.ctx, link(1, time.Hour)) }),
		store.ErrConflict)
	use := func(hash []byte, when time.Duration) (string, error) {
		var got string
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.UseSignOutLink(f.ctx, hash, at(when))
			return err
		})
		return got, err
	}
	if got, err := use(fresh.TokenHash, time.Minute); err != nil || got != c.ID {
		f.Errorf("first use: %q %v", got, err)
	}
	_, err := use(fresh.TokenHash, 2*time.Minute)
	wantErr(f, "a second use", err, store.ErrNotFound)
	_, err = use(old.TokenHash, time.Minute)
	wantErr(f, "at its expiry", err, store.ErrNotFound)
	_, err = use([]byte{9, 9}, 0)
	wantErr(f, "an unknown hash", err, store.ErrNotFound)

	var wg sync.WaitGroup
	wins := make(chan bool, 8)
	for range 8 {
		wg.Go(func() {
			_, err := use(raced.TokenHash, time.Minute)
			wins <- err == nil
		})
	}
	wg.Wait()
	close(wins)
	n := 0
	for w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		f.Errorf("%d concurrent uses won, want 1", n)
	}
}
