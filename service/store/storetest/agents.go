package storetest

import (
	"slices"
	"time"

	"paywallet/service/store"
)

// agentPayer is an agent of a payer's customer, with a quote of that
// customer (and its transaction) stored.
func (f *fixture) agentPayer() (*store.Agent, *store.Quote, *store.Customer, *store.InternalAccount, *store.ExternalAccount) {
	f.Helper()
	c, a, e := f.payer()
	ag := newAgent(c.ID)
	x := newTransaction(c, a.ID, e.ID)
	q := newQuote(x)
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateAgent(f.ctx, ag); err != nil {
			return err
		}
		if err := tx.CreateTransaction(f.ctx, x); err != nil {
			return err
		}
		return tx.CreateQuote(f.ctx, q)
	})
	return ag, q, c, a, e
}

func testAgentQuote(f *fixture) {
	ag, q, _, _, _ := f.agentPayer()
	rec := &store.AgentQuote{QuoteID: q.ID, AgentID: ag.ID, CreatedAt: at(time.Minute)}
	f.tx(func(tx store.Tx) error { return tx.CreateAgentQuote(f.ctx, rec) })
	var got *store.AgentQuote
	f.tx(func(tx store.Tx) error {
		var err error
		got, err = tx.GetAgentQuote(f.ctx, q.ID)
		return err
	})
	same(f, "agent quote", *got, *rec)
	wantErr(f, "a second agent for the quote", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAgentQuote(f.ctx, rec) }), store.ErrConflict)
	wantErr(f, "unknown quote", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.CreateAgentQuote(f.ctx, &store.AgentQuote{QuoteID: newID("Quote"), AgentID: ag.ID, CreatedAt: at(0)})
	}), store.ErrNotFound)
	other := newQuoteFor(f)
	wantErr(f, "unknown agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.CreateAgentQuote(f.ctx, &store.AgentQuote{QuoteID: other, AgentID: newID("Agent"), CreatedAt: at(0)})
	}), store.ErrNotFound)
	wantErr(f, "quote of no agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAgentQuote(f.ctx, newID("Quote"))
		return err
	}), store.ErrNotFound)
}

// newQuoteFor stores a quote of a new payer and returns its id.
func newQuoteFor(f *fixture) string {
	f.Helper()
	_, q, _, _, _ := f.agentPayer()
	return q.ID
}

func testAgentActions(f *fixture) {
	ag, q, c, _, _ := f.agentPayer()
	mk := func(status, currency string, spend int64, created time.Duration) *store.AgentAction {
		return &store.AgentAction{ID: newID("AgentAction"), AgentID: ag.ID, CustomerID: c.ID, Type: "EXECUTE_QUOTE",
			Status: status, Spend: spend, SpendCurrency: currency, CreatedAt: at(created), UpdatedAt: at(created)}
	}
	first := mk("APPROVED", "USD", 100, 0)
	first.QuoteID, first.TransactionID = q.ID, q.TransactionID
	all := []*store.AgentAction{first, mk("APPROVED", "USD", 250, time.Hour), mk("REJECTED", "USD", 1000, time.Hour),
		mk("APPROVED", "EUR", 7, time.Hour), mk("APPROVED", "USD", 40, 2*time.Hour)}
	f.tx(func(tx store.Tx) error {
		for _, a := range all {
			if err := tx.CreateAgentAction(f.ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetAgentAction(f.ctx, first.ID)
		if err != nil {
			return err
		}
		same(f, "action", *got, *first)
		got, err = tx.GetAgentAction(f.ctx, all[1].ID)
		if err != nil {
			return err
		}
		same(f, "action without quote", *got, *all[1])
		for _, tt := range []struct {
			since        time.Duration
			currency     string
			count, spend int64
		}{{0, "USD", 3, 390}, {time.Hour, "USD", 2, 290}, {3 * time.Hour, "USD", 0, 0}, {0, "EUR", 1, 7}} {
			n, sum, err := tx.AgentUsage(f.ctx, ag.ID, tt.currency, at(tt.since))
			if err != nil {
				return err
			}
			if n != tt.count || sum != tt.spend {
				f.Errorf("usage since %v in %s: %d, %d; want %d, %d", tt.since, tt.currency, n, sum, tt.count, tt.spend)
			}
		}
		// Newest first, two by two; the status filter.
		var ids []string
		cursor := ""
		for {
			p, err := tx.ListAgentActions(f.ctx, store.AgentActionFilter{AgentID: ag.ID, Limit: 2, Cursor: cursor})
			if err != nil {
				return err
			}
			if p.TotalCount != len(all) {
				f.Errorf("total %d", p.TotalCount)
			}
			for _, a := range p.Items {
				ids = append(ids, a.ID)
			}
			if !p.HasMore {
				break
			}
			cursor = p.NextCursor
		}
		var want []string
		for _, a := range all {
			want = append(want, a.ID)
		}
		slices.Sort(want)
		slices.Reverse(want)
		same(f, "listed actions", ids, want)
		p, err := tx.ListAgentActions(f.ctx, store.AgentActionFilter{AgentID: ag.ID, Status: "REJECTED"})
		if err != nil {
			return err
		}
		if len(p.Items) != 1 || p.Items[0].ID != all[2].ID {
			f.Errorf("REJECTED: %+v", p.Items)
		}
		return nil
	})
	wantErr(f, "unknown action", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAgentAction(f.ctx, newID("AgentAction"))
		return err
	}), store.ErrNotFound)
	wantErr(f, "taken id", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateAgentAction(f.ctx, first) }), store.ErrConflict)
	wantErr(f, "unknown agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		a := mk("APPROVED", "USD", 1, 0)
		a.AgentID = newID("Agent")
		return tx.CreateAgentAction(f.ctx, a)
	}), store.ErrNotFound)
}

// testListByIDs: the IDs filters of the account lists and the AccountIDs
// filter of the transaction list keep only the named rows; an empty (not
// nil) list keeps none.
func testListByIDs(f *fixture) {
	c, a, e := f.payer()
	a2 := newAccount(c.ID)
	e2 := newExternalAccount(c.ID)
	e2.Fingerprint = []byte("other-" + e2.ID)
	f.tx(func(tx store.Tx) error {
		if err := tx.CreateInternalAccount(f.ctx, a2); err != nil {
			return err
		}
		return tx.CreateExternalAccount(f.ctx, e2)
	})
	x1, x2 := newTransaction(c, a.ID, e.ID), newTransaction(c, a2.ID, e2.ID)
	f.createTransactions(x1, x2)
	f.tx(func(tx store.Tx) error {
		for _, tt := range []struct {
			ids  []string
			want []string
		}{{nil, []string{a.ID, a2.ID}}, {[]string{a2.ID, e.ID}, []string{a2.ID}}, {[]string{}, nil}} {
			p, err := tx.ListInternalAccounts(f.ctx, store.InternalAccountFilter{CustomerID: c.ID, IDs: tt.ids})
			if err != nil {
				return err
			}
			var got []string
			for _, x := range p.Items {
				got = append(got, x.ID)
			}
			same(f, "internal accounts", got, tt.want)
		}
		for _, tt := range []struct {
			ids  []string
			want []string
		}{{nil, []string{e.ID, e2.ID}}, {[]string{e2.ID, a.ID}, []string{e2.ID}}, {[]string{}, nil}} {
			p, err := tx.ListExternalAccounts(f.ctx, store.ExternalAccountFilter{CustomerID: c.ID, IDs: tt.ids})
			if err != nil {
				return err
			}
			var got []string
			for _, x := range p.Items {
				got = append(got, x.ID)
			}
			same(f, "external accounts", got, tt.want)
		}
		for _, tt := range []struct {
			ids  []string
			want []string
		}{{nil, []string{x1.ID, x2.ID}}, {[]string{a.ID}, []string{x1.ID}}, {[]string{e2.ID}, []string{x2.ID}}, {[]string{}, []string{}}} {
			p, err := tx.ListTransactions(f.ctx, store.TransactionFilter{CustomerID: c.ID, AccountIDs: tt.ids})
			if err != nil {
				return err
			}
			same(f, "transactions", transactionIDs(p.Items), tt.want)
		}
		return nil
	})
}
