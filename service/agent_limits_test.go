package service

import (
	"context"
	"math"
	"testing"

	"paywallet/service/ids"
	"paywallet/service/store"
)

// TestAgentLimitsNearTheInt64Maximum: a limit near the int64 maximum is
// still a limit. With usage already at the limit, the next payment is
// refused (403 SPENDING_LIMIT_EXCEEDED); before, usage+spend wrapped
// around to a negative total that passed. A month whose usage sums past
// the int64 maximum still answers (the sum is capped) rather than failing
// every later action with a 500.
func TestAgentLimitsNearTheInt64Maximum(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		w := newAgentWorld(t, opts...)
		e := w.e
		const limit = math.MaxInt64 - 1
		agent, token := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", limit,
			map[string]any{"dailyLimit": limit}))
		used := func(spend int64) {
			t.Helper()
			now := e.clock.Now()
			a := store.AgentAction{ID: ids.New("AgentAction"), AgentID: agent.ID, CustomerID: w.mine.customer.ID,
				Type: "EXECUTE_QUOTE", Status: "APPROVED", Spend: spend, SpendCurrency: "USD", CreatedAt: now, UpdatedAt: now}
			if err := e.store.Tx(context.Background(), func(tx store.Tx) error { return tx.CreateAgentAction(context.Background(), &a) }); err != nil {
				t.Fatal(err)
			}
		}
		used(limit)
		q := w.agentQuote(token, w.myDest.ID, 1000)
		r := w.agentExecute(token, q)
		if er := wantRefusal(t, r, 403, "FORBIDDEN"); er.Details["reason"] != "SPENDING_LIMIT_EXCEEDED" || er.Details["limit"] != "dailyLimit" {
			t.Fatalf("%s", r.body)
		}
		if x := e.transaction(q.TransactionID); x.Status != "PENDING" {
			t.Fatalf("the refused payment is %s", x.Status)
		}
		// Two actions of the month that sum past the maximum: the agent's
		// usage is still read (capped), and the limit still refuses.
		used(limit)
		r = e.do("GET", "/agents/me", nil, bearer(token))
		e.mustStatus(r, 200)
		if r := w.agentExecute(token, q); r.status != 403 {
			t.Fatalf("with usage past the maximum: %d %s", r.status, r.body)
		}
	})
}
