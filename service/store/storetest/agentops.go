package storetest

import (
	"time"

	"paywallet/service/store"
)

// Managing agents and their approvals (store.AgentTx).

func testAgentManagement(f *fixture) {
	cs := f.customers(2)
	a1, a2, a3 := newAgent(cs[0].ID), newAgent(cs[0].ID), newAgent(cs[1].ID)
	a2.IsPaused = true
	a2.CreatedAt, a2.UpdatedAt = at(time.Hour), at(time.Hour)
	a3.CreatedAt, a3.UpdatedAt = at(2*time.Hour), at(3*time.Hour)
	f.tx(func(tx store.Tx) error {
		for _, a := range []*store.Agent{a1, a2, a3} {
			if err := tx.CreateAgent(f.ctx, a); err != nil {
				return err
			}
		}
		return tx.CreateAgentToken(f.ctx, newAgentToken(a3.ID))
	})
	yes, no := true, false
	list := func(what string, flt store.AgentFilter, want ...*store.Agent) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			p, err := tx.ListAgents(f.ctx, flt)
			if err != nil {
				return err
			}
			same(f, what, ids(p.Items, agentID), ptrIDs(want, agentID))
			if flt.Cursor == "" && p.TotalCount != len(want) {
				f.Errorf("%s: total %d, want %d", what, p.TotalCount, len(want))
			}
			return nil
		})
	}
	list("all", store.AgentFilter{}, a1, a2, a3)
	list("customer", store.AgentFilter{CustomerID: cs[0].ID}, a1, a2)
	list("paused", store.AgentFilter{IsPaused: &yes}, a2)
	list("not paused", store.AgentFilter{IsPaused: &no}, a1, a3)
	list("connected", store.AgentFilter{IsConnected: &yes}, a3)
	list("not connected", store.AgentFilter{IsConnected: &no}, a1, a2)
	list("created after (inclusive)", store.AgentFilter{CreatedAfter: at(time.Hour)}, a2, a3)
	list("created before (inclusive)", store.AgentFilter{CreatedBefore: at(time.Hour)}, a1, a2)
	list("updated range", store.AgentFilter{UpdatedAfter: at(time.Minute), UpdatedBefore: at(2 * time.Hour)}, a2)
	list("page", store.AgentFilter{Limit: 1, Cursor: a1.ID}, a2)

	// The policy is replaced as given.
	policy := []byte(`{"permissions":["EXECUTE_QUOTES"]}`)
	f.tx(func(tx store.Tx) error { return tx.UpdateAgentPolicy(f.ctx, a1.ID, policy, at(4*time.Hour)) })
	f.tx(func(tx store.Tx) error {
		got, err := tx.GetAgent(f.ctx, a1.ID)
		if err != nil {
			return err
		}
		want := *a1
		want.Policy, want.UpdatedAt = policy, at(4*time.Hour)
		same(f, "agent after the policy", *got, want)
		return nil
	})
	wantErr(f, "policy of an unknown agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.UpdateAgentPolicy(f.ctx, newID("Agent"), policy, at(0))
	}), store.ErrNotFound)

	// A deleted agent is gone: not listed, not found, its token revoked,
	// its unredeemed device code ended.
	code := newDeviceCode(a3.ID, at(time.Minute))
	code.ExpiresAt = at(10 * time.Hour)
	f.tx(func(tx store.Tx) error { return tx.CreateDeviceCode(f.ctx, code) })
	var won bool
	f.tx(func(tx store.Tx) error {
		var err error
		won, err = tx.DeleteAgent(f.ctx, a3.ID, at(5*time.Hour))
		return err
	})
	if !won {
		f.Errorf("DeleteAgent: not done")
	}
	f.tx(func(tx store.Tx) error {
		if won, err := tx.DeleteAgent(f.ctx, a3.ID, at(6*time.Hour)); err != nil || won {
			f.Errorf("second DeleteAgent: %v, %v", won, err)
		}
		if connected, err := tx.AgentConnected(f.ctx, a3.ID); err != nil || connected {
			f.Errorf("deleted agent connected: %v, %v", connected, err)
		}
		d, err := tx.GetDeviceCode(f.ctx, code.Code)
		if err != nil {
			return err
		}
		if !d.ExpiresAt.Equal(at(5 * time.Hour)) {
			f.Errorf("device code of a deleted agent expires at %v", d.ExpiresAt)
		}
		if ok, err := tx.RedeemDeviceCode(f.ctx, code.Code, at(5*time.Hour+time.Second)); err != nil || ok {
			f.Errorf("redeem a deleted agent's code: %v, %v", ok, err)
		}
		return nil
	})
	wantErr(f, "get a deleted agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetAgent(f.ctx, a3.ID)
		return err
	}), store.ErrNotFound)
	wantErr(f, "policy of a deleted agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.UpdateAgentPolicy(f.ctx, a3.ID, policy, at(7*time.Hour))
	}), store.ErrNotFound)
	wantErr(f, "delete an unknown agent", f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.DeleteAgent(f.ctx, newID("Agent"), at(0))
		return err
	}), store.ErrNotFound)
	list("all after the delete", store.AgentFilter{}, a1, a2)
}

func testAgentApprovals(f *fixture) {
	ag, q, c, _, _ := f.agentPayer()
	other, q2, c2, _, _ := f.agentPayer()
	mk := func(ag *store.Agent, c *store.Customer, status string, created time.Duration) *store.AgentAction {
		return &store.AgentAction{ID: newID("AgentAction"), AgentID: ag.ID, CustomerID: c.ID, Type: "TRANSFER_IN",
			Status: status, Spend: 100, SpendCurrency: "USD", CreatedAt: at(created), UpdatedAt: at(created),
			Request: []byte(`{"amount":100}`)}
	}
	p1 := mk(ag, c, "PENDING_APPROVAL", 0)
	p1.Type, p1.QuoteID, p1.Request = "EXECUTE_QUOTE", q.ID, []byte(`{"signature":"s"}`)
	p2 := mk(ag, c, "PENDING_APPROVAL", time.Hour)
	p3 := mk(other, c2, "PENDING_APPROVAL", 2*time.Hour)
	p3.QuoteID = q2.ID
	done := mk(ag, c, "APPROVED", time.Hour)
	done.Request = nil
	f.tx(func(tx store.Tx) error {
		for _, a := range []*store.AgentAction{p1, p2, p3, done} {
			if err := tx.CreateAgentAction(f.ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	wantErr(f, "a second pending action of one quote", f.s.Tx(f.ctx, func(tx store.Tx) error {
		a := mk(ag, c, "PENDING_APPROVAL", 0)
		a.QuoteID = q.ID
		return tx.CreateAgentAction(f.ctx, a)
	}), store.ErrConflict)
	list := func(what string, flt store.AgentApprovalFilter, want ...*store.AgentAction) {
		f.Helper()
		f.tx(func(tx store.Tx) error {
			p, err := tx.ListAgentApprovals(f.ctx, flt)
			if err != nil {
				return err
			}
			same(f, what, ids(p.Items, actionID), ptrIDs(want, actionID))
			return nil
		})
	}
	list("all", store.AgentApprovalFilter{}, p1, p2, p3)
	list("newest first", store.AgentApprovalFilter{Descending: true}, p3, p2, p1)
	list("agent", store.AgentApprovalFilter{AgentID: ag.ID}, p1, p2)
	list("customer", store.AgentApprovalFilter{CustomerID: c2.ID}, p3)
	list("dates (inclusive)", store.AgentApprovalFilter{CreatedAfter: at(time.Hour), CreatedBefore: at(2 * time.Hour)}, p2, p3)
	list("page", store.AgentApprovalFilter{Limit: 1, Cursor: p3.ID, Descending: true}, p2)

	// Decide: compare-and-set on the status; the new fields round-trip.
	next := *p1
	next.Status, next.TransactionID, next.Spend, next.SpendCurrency = "APPROVED", q.TransactionID, 120, "EUR"
	next.ExecutedAt, next.UpdatedAt = at(3*time.Hour), at(3*time.Hour)
	f.tx(func(tx store.Tx) error {
		won, err := tx.DecideAgentAction(f.ctx, &next, "PENDING_APPROVAL")
		if err != nil || !won {
			f.Errorf("decide: %v, %v", won, err)
		}
		lost := next
		lost.Status, lost.RejectionReason = "REJECTED", "no"
		if won, err := tx.DecideAgentAction(f.ctx, &lost, "PENDING_APPROVAL"); err != nil || won {
			f.Errorf("second decide: %v, %v", won, err)
		}
		got, err := tx.GetAgentAction(f.ctx, p1.ID)
		if err != nil {
			return err
		}
		same(f, "decided action", *got, next)
		// Counted by when it moved money, not when it was asked for.
		n, sum, err := tx.AgentUsage(f.ctx, ag.ID, "EUR", at(3*time.Hour))
		if err != nil || n != 1 || sum != 120 {
			f.Errorf("usage by executedAt: %d, %d, %v", n, sum, err)
		}
		rej := *p2
		rej.Status, rej.RejectionReason, rej.FailureReason, rej.UpdatedAt = "REJECTED", "too much", "", at(4*time.Hour)
		if won, err := tx.DecideAgentAction(f.ctx, &rej, "PENDING_APPROVAL"); err != nil || !won {
			f.Errorf("reject: %v, %v", won, err)
		}
		got, err = tx.GetAgentAction(f.ctx, p2.ID)
		if err != nil {
			return err
		}
		same(f, "rejected action", *got, rej)
		return nil
	})
	list("after the decisions", store.AgentApprovalFilter{}, p3)
	// The quote may wait for approval again once its action is decided.
	f.tx(func(tx store.Tx) error {
		a := mk(ag, c, "PENDING_APPROVAL", 0)
		a.QuoteID = q.ID
		return tx.CreateAgentAction(f.ctx, a)
	})
	wantErr(f, "decide an unknown action", f.s.Tx(f.ctx, func(tx store.Tx) error {
		a := *p3
		a.ID = newID("AgentAction")
		_, err := tx.DecideAgentAction(f.ctx, &a, "PENDING_APPROVAL")
		return err
	}), store.ErrNotFound)
}

func agentID(a *store.Agent) string        { return a.ID }
func actionID(a *store.AgentAction) string { return a.ID }

// ptrIDs is ids for a list of pointers.
func ptrIDs[T any](items []*T, id func(*T) string) []string {
	out := make([]string, len(items))
	for i, v := range items {
		out[i] = id(v)
	}
	return out
}
