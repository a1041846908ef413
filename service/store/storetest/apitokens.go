package storetest

import (
	"time"

	"paywallet/service/store"
)

func newAPIToken(name string, created time.Duration, perms ...string) *store.APIToken {
	id := newID("Token")
	return &store.APIToken{ID: id, Name: name, Permissions: perms, ClientID: "client-" + id,
		SecretHash: []byte{0, 1, 2, 0xfe, 0xff}, CreatedAt: at(created), UpdatedAt: at(created + time.Second)}
}

// testAPIToken: a token's fields round-trip, the client id is unique and
// finds it, a deleted token is gone at once, and missing ones are
// ErrNotFound.
func testAPIToken(f *fixture) {
	a := newAPIToken("ops token", time.Minute, "VIEW", "TRANSACT", "MANAGE")
	f.tx(func(tx store.Tx) error { return tx.CreateAPIToken(f.ctx, a) })
	var byID, byClient *store.APIToken
	f.tx(func(tx store.Tx) error {
		var err error
		if byID, err = tx.GetAPIToken(f.ctx, a.ID); err != nil {
			return err
		}
		byClient, err = tx.GetAPITokenByClientID(f.ctx, a.ClientID)
		return err
	})
	same(f, "token by id", *byID, *a)
	same(f, "token by client id", *byClient, *a)

	dupClient := newAPIToken("other", time.Minute, "VIEW")
	dupClient.ClientID = a.ClientID
	wantErr(f, "a taken client id", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAPIToken(f.ctx, dupClient) }), store.ErrConflict)
	dupID := newAPIToken("other", time.Minute, "VIEW")
	dupID.ID = a.ID
	wantErr(f, "a taken id", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAPIToken(f.ctx, dupID) }), store.ErrConflict)

	f.tx(func(tx store.Tx) error { return tx.DeleteAPIToken(f.ctx, a.ID) })
	wantErr(f, "a deleted token by id", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAPIToken(f.ctx, a.ID)
		return err
	}), store.ErrNotFound)
	wantErr(f, "a deleted token by client id", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAPITokenByClientID(f.ctx, a.ClientID)
		return err
	}), store.ErrNotFound)
	wantErr(f, "a second delete", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.DeleteAPIToken(f.ctx, a.ID) }), store.ErrNotFound)
	wantErr(f, "an unknown client id", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAPITokenByClientID(f.ctx, "nobody")
		return err
	}), store.ErrNotFound)
}

// testAPITokenList: the name and the four time bounds (inclusive) filter,
// paging is by id with the total of the filter.
func testAPITokenList(f *fixture) {
	m := time.Minute
	toks := []*store.APIToken{
		newAPIToken("a", 0*m, "VIEW"),
		newAPIToken("b", 10*m, "VIEW", "MANAGE"),
		newAPIToken("a", 20*m, "TRANSACT"),
		newAPIToken("c", 30*m, "VIEW"),
	}
	toks[3].UpdatedAt = at(60 * m)
	f.tx(func(tx store.Tx) error {
		for _, a := range toks {
			if err := tx.CreateAPIToken(f.ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(p store.Page[store.APIToken]) []string {
		out := []string{}
		for _, a := range p.Items {
			out = append(out, a.ID)
		}
		return out
	}
	pick := func(is ...int) []string {
		out := []string{}
		for _, i := range is {
			out = append(out, toks[i].ID)
		}
		return out
	}
	type F = store.APITokenFilter
	cases := []struct {
		name  string
		f     F
		want  []string
		more  bool
		total int
	}{
		{"all", F{}, pick(0, 1, 2, 3), false, 4},
		{"by name", F{Name: "a"}, pick(0, 2), false, 2},
		{"created after, inclusive", F{CreatedAfter: at(10 * m)}, pick(1, 2, 3), false, 3},
		{"created before, inclusive", F{CreatedBefore: at(10 * m)}, pick(0, 1), false, 2},
		{"created in a range", F{CreatedAfter: at(10 * m), CreatedBefore: at(20 * m)}, pick(1, 2), false, 2},
		{"updated after", F{UpdatedAfter: at(30*m + 2*time.Second)}, pick(3), false, 1},
		{"updated before, inclusive", F{UpdatedBefore: at(10*m + time.Second)}, pick(0, 1), false, 2},
		{"page", F{Limit: 2}, pick(0, 1), true, 4},
		{"next page", F{Limit: 2, Cursor: toks[1].ID}, pick(2, 3), false, 4},
		{"none", F{Name: "zzz"}, []string{}, false, 0},
	}
	for _, c := range cases {
		var p store.Page[store.APIToken]
		f.tx(func(tx store.Tx) error {
			var err error
			p, err = tx.ListAPITokens(f.ctx, c.f)
			return err
		})
		same(f, c.name+": ids", ids(p), c.want)
		if p.HasMore != c.more || p.TotalCount != c.total {
			f.Errorf("%s: hasMore %v total %d, want %v %d", c.name, p.HasMore, p.TotalCount, c.more, c.total)
		}
		if c.more && p.NextCursor != c.want[len(c.want)-1] {
			f.Errorf("%s: next cursor %q", c.name, p.NextCursor)
		}
	}
	var p store.Page[store.APIToken]
	f.tx(func(tx store.Tx) error {
		var err error
		p, err = tx.ListAPITokens(f.ctx, F{Name: "b"})
		return err
	})
	if len(p.Items) != 1 {
		f.Fatalf("by name b: %+v", p)
	}
	same(f, "listed token", p.Items[0], *toks[1])
}
