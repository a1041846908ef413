package service

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/service/store/storetest"
	"paywallet/shared/wire"
)

// actionOut is an AgentAction as the approval tests read it.
type actionOut struct {
	ID, AgentID, CustomerID, Status, Type string
	RejectionReason, FailureReason        string
	Quote                                 *wire.Quote
	TransferDetails                       *struct {
		Amount                                          int64
		Currency, SourceAccountID, DestinationAccountID string
	}
	Transaction *wire.Transaction
}

func decodeAction(t *testing.T, r response, status string) actionOut {
	t.Helper()
	var a actionOut
	r.decode(t, &a)
	if a.Status != status {
		t.Fatalf("action %s, want %s: %s", a.Status, status, r.body)
	}
	return a
}

// approvalPolicy is every permission, APPROVAL_REQUIRED, with the given
// daily limit (0: none).
func approvalPolicy(daily int64) map[string]any {
	extra := map[string]any{}
	if daily > 0 {
		extra["dailyLimit"] = daily
	}
	pol := limits(policy(allPermissions...), "USD", 100_000, extra)
	pol["defaultExecutionMode"] = "APPROVAL_REQUIRED"
	return pol
}

func withWebhookURL(c *Config) { c.WebhookURL = "https://hooks.example/agent-actions" }

func (w *agentWorld) approve(agentID, actionID string, headers map[string]string) response {
	return w.e.do("POST", "/agents/"+agentID+"/actions/"+actionID+"/approve", nil, headers)
}

func (w *agentWorld) usage(token string) (count, spend int64) {
	w.e.t.Helper()
	var me struct {
		Usage struct{ DailyTransactionCount, DailySpend int64 }
	}
	w.e.do("GET", "/agents/me", nil, bearer(token)).decode(w.e.t, &me)
	return me.Usage.DailyTransactionCount, me.Usage.DailySpend
}

// TestAgentExecuteApproval: an execute the policy holds for approval
// answers 200 PENDING_APPROVAL with the quote and no transaction, moves
// nothing, counts nothing and emits AGENT_ACTION.PENDING_APPROVAL in its
// transaction; the platform's approval executes it once (the hold, the
// usage), on both databases.
func TestAgentExecuteApproval(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		w := newAgentWorld(t, append(opts, withWebhookURL)...)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
		before := e.account(w.mine.account.ID)
		q := w.agentQuote(token, w.myDest.ID, 1_000)
		r := w.agentExecute(token, q)
		e.mustStatus(r, http.StatusOK)
		act := decodeAction(t, r, "PENDING_APPROVAL")
		if act.Type != "EXECUTE_QUOTE" || act.AgentID != ag.ID || act.Quote == nil || act.Quote.ID != q.ID || act.Transaction != nil {
			t.Fatalf("pending action %s", r.body)
		}
		if x := e.transaction(q.TransactionID); x.Status != "PENDING" {
			t.Fatalf("transaction %s before the approval", x.Status)
		}
		if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount {
			t.Fatal("a pending action held money")
		}
		if n, spend := w.usage(token); n != 0 || spend != 0 {
			t.Fatalf("a pending action counted: %d, %d", n, spend)
		}
		if ev := e.eventOf(act.ID, "AGENT_ACTION.PENDING_APPROVAL"); !strings.Contains(string(ev.Data), `"status":"PENDING_APPROVAL"`) {
			t.Fatalf("the action's event: %+v", ev)
		}
		// The quote waits once.
		wantRefusal(t, w.agentExecute(token, q), http.StatusConflict, "CONFLICT")
		// The agent sees it waiting.
		got := decodeAction(t, e.do("GET", "/agents/me/actions/"+act.ID, nil, bearer(token)), "PENDING_APPROVAL")
		if got.ID != act.ID {
			t.Fatal(got.ID)
		}

		r = w.approve(ag.ID, act.ID, nil)
		e.mustStatus(r, http.StatusOK)
		done := decodeAction(t, r, "APPROVED")
		if done.Transaction == nil || done.Transaction.ID != q.TransactionID || done.Transaction.Status != "PROCESSING" {
			t.Fatalf("approved %s", r.body)
		}
		if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount-q.TotalSendingAmount {
			t.Fatalf("available %d after the approval, want %d", a.Balance.Amount, before.Balance.Amount-q.TotalSendingAmount)
		}
		if n, spend := w.usage(token); n != 1 || spend != q.TotalSendingAmount {
			t.Fatalf("usage after the approval: %d, %d", n, spend)
		}
		// Decided: approve and reject are 409, and it is off the list.
		wantRefusal(t, w.approve(ag.ID, act.ID, nil), http.StatusConflict, "CONFLICT")
		wantRefusal(t, e.do("POST", "/agents/"+ag.ID+"/actions/"+act.ID+"/reject", nil, nil), http.StatusConflict, "CONFLICT")
		if ids := idsOf(t, e.do("GET", "/agents/approvals", nil, nil), func(a actionOut) string { return a.ID }); len(ids) != 0 {
			t.Fatalf("approvals %v", ids)
		}
	})
}

// TestAgentApprovalRefusals: the platform's credential only; an unknown
// agent, an action of another agent, an unknown or malformed action id are
// 404; the reject body is checked.
func TestAgentApprovalRefusals(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	other, _ := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	act := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	noAgent, noAction := "Agent:01900000-0000-7000-8000-000000000001", "AgentAction:01900000-0000-7000-8000-000000000001"
	for _, c := range []struct {
		name, agent, action string
		headers             map[string]string
		status              int
		code                string
	}{
		{"no credential", ag.ID, act.ID, map[string]string{"Authorization": ""}, 401, "UNAUTHORIZED"},
		{"the agent's own token", ag.ID, act.ID, bearer(token), 401, "UNAUTHORIZED"},
		{"unknown agent", noAgent, act.ID, nil, 404, "NOT_FOUND"},
		{"another agent's action", other.ID, act.ID, nil, 404, "NOT_FOUND"},
		{"unknown action", ag.ID, noAction, nil, 404, "NOT_FOUND"},
		{"malformed action id", ag.ID, "x", nil, 404, "NOT_FOUND"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, verb := range []string{"approve", "reject"} {
				wantRefusal(t, e.do("POST", "/agents/"+c.agent+"/actions/"+c.action+"/"+verb, nil, c.headers), c.status, c.code)
			}
		})
	}
	reject := "/agents/" + ag.ID + "/actions/" + act.ID + "/reject"
	for _, c := range []struct {
		name, body, want string
	}{
		{"reason too long", `{"reason":"` + strings.Repeat("x", 501) + `"}`, "reason"},
		{"control characters", `{"reason":"a\u0007b"}`, "reason"},
		{"unknown member and wrong type", `{"reason":5,"why":"x"}`, "reason,why"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := errorFields(wantRefusal(t, e.do("POST", reject, c.body, nil), 400, "INVALID_INPUT")); got != c.want {
				t.Fatalf("fields %q, want %q", got, c.want)
			}
		})
	}
	for _, q := range []string{"agentId=x&customerId=y&startDate=z&endDate=w&sortOrder=up&limit=0&cursor=c"} {
		if got := errorFields(wantRefusal(t, e.do("GET", "/agents/approvals?"+q, nil, nil), 400, "INVALID_INPUT")); got != "agentId,cursor,customerId,endDate,limit,sortOrder,startDate" {
			t.Fatalf("approvals query: %q", got)
		}
	}
	wantRefusal(t, e.do("GET", "/agents/approvals", nil, map[string]string{"Authorization": ""}), 401, "UNAUTHORIZED")
	// Nothing was decided by the refusals.
	decodeAction(t, e.do("GET", "/agents/me/actions/"+act.ID, nil, bearer(token)), "PENDING_APPROVAL")

	r := e.do("POST", reject, map[string]any{"reason": "  Above the customer's risk limit. "}, nil)
	e.mustStatus(r, http.StatusOK)
	if got := decodeAction(t, r, "REJECTED"); got.RejectionReason != "Above the customer's risk limit." || got.Transaction != nil {
		t.Fatalf("rejected %s", r.body)
	}
	wantRefusal(t, w.approve(ag.ID, act.ID, nil), http.StatusConflict, "CONFLICT")
	if x := e.transaction(act.Quote.TransactionID); x.Status != "PENDING" {
		t.Fatalf("a rejected action's transaction is %s", x.Status)
	}
}

// TestAgentApprovalsList: the platform's list of waiting actions, with its
// filters and paging.
func TestAgentApprovalsList(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	a1, t1 := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	a2, t2 := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	first := decodeAction(t, w.agentExecute(t1, w.agentQuote(t1, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	e.clock.Advance(time.Minute)
	second := decodeAction(t, w.agentExecute(t2, w.agentQuote(t2, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	e.clock.Advance(time.Minute)
	third := decodeAction(t, w.agentExecute(t1, w.agentQuote(t1, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	// An AUTO agent's execute waits for nobody.
	_, auto := e.connectAgent(w.mine.customer.ID, limits(policy(allPermissions...), "USD", 100_000, nil))
	decodeAction(t, w.agentExecute(auto, w.agentQuote(auto, w.myDest.ID, 1_000)), "APPROVED")
	id := func(a actionOut) string { return a.ID }
	start := timestamp(e.clock.Now().Add(-30 * time.Second))
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{third.ID, second.ID, first.ID}},
		{"?sortOrder=asc", []string{first.ID, second.ID, third.ID}},
		{"?agentId=" + a1.ID, []string{third.ID, first.ID}},
		{"?agentId=" + a2.ID + "&customerId=" + w.mine.customer.ID, []string{second.ID}},
		{"?customerId=" + w.theirs.customer.ID, nil},
		{"?startDate=" + start, []string{third.ID}},
		{"?endDate=" + start, []string{second.ID, first.ID}},
		{"?limit=2&cursor=" + third.ID, []string{second.ID, first.ID}},
	} {
		t.Run(c.query, func(t *testing.T) {
			if got := orderedIDs(t, e.do("GET", "/agents/approvals"+c.query, nil, nil), id); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestAgentApprovalFailures: an approval runs the execute then, so what
// would refuse it then makes the action FAILED (answered 200) and moves
// nothing: an expired quote, a limit the day's other payments have used
// up, a signature whose session ended.
func TestAgentApprovalFailures(t *testing.T) {
	t.Run("expired quote", func(t *testing.T) {
		w := newAgentWorld(t)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
		act := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
		e.clock.Advance(16 * time.Minute)
		r := w.approve(ag.ID, act.ID, map[string]string{wire.HeaderIdempotencyKey: "approve-expired"})
		e.mustStatus(r, http.StatusOK)
		failed := decodeAction(t, r, "FAILED")
		if !strings.HasPrefix(failed.FailureReason, "INVALID_STATE_TRANSITION: the quote expired") || failed.Transaction != nil {
			t.Fatalf("failed %s", r.body)
		}
		// The FAILED answer is the one recorded under the key.
		again := w.approve(ag.ID, act.ID, map[string]string{wire.HeaderIdempotencyKey: "approve-expired"})
		if again.status != http.StatusOK || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d %s", again.status, again.body)
		}
		wantRefusal(t, w.approve(ag.ID, act.ID, nil), http.StatusConflict, "CONFLICT")
		if n, _ := w.usage(token); n != 0 {
			t.Fatalf("a failed action counted")
		}
	})
	t.Run("limit used up at approval", func(t *testing.T) {
		w := newAgentWorld(t)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(1_500))
		a1 := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
		a2 := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
		before := e.account(w.mine.account.ID)
		decodeAction(t, w.approve(ag.ID, a1.ID, nil), "APPROVED")
		r := w.approve(ag.ID, a2.ID, nil)
		failed := decodeAction(t, r, "FAILED")
		if !strings.HasPrefix(failed.FailureReason, "FORBIDDEN: spending limit exceeded: dailyLimit") {
			t.Fatalf("failed %s", r.body)
		}
		if x := e.transaction(a2.Quote.TransactionID); x.Status != "PENDING" {
			t.Fatalf("the failed action's transaction is %s", x.Status)
		}
		if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount-a1.Quote.TotalSendingAmount {
			t.Fatal("the failed approval held money")
		}
		// A submission past the day's limit is refused at once.
		over := wantRefusal(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 600)), 403, "FORBIDDEN")
		if over.Details["reason"] != "SPENDING_LIMIT_EXCEEDED" {
			t.Fatalf("%+v", over)
		}
	})
	t.Run("signature of an ended session", func(t *testing.T) {
		w := newAgentWorld(t)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
		// The session (15 minutes) ends before the quote (15 minutes from now).
		e.clock.Advance(10 * time.Minute)
		q := w.agentQuote(token, w.myDest.ID, 1_000)
		// A bad signature is refused at submission; nothing is recorded.
		h := bearer(token)
		h[wire.HeaderWalletSignature] = mustStamp(t, mustKey(t), payloadOf(t, q))
		wantRefusal(t, e.do("POST", "/agents/me/quotes/"+q.ID+"/execute", nil, h), 401, "WALLET_SIGNATURE_INVALID")
		delete(h, wire.HeaderWalletSignature)
		wantRefusal(t, e.do("POST", "/agents/me/quotes/"+q.ID+"/execute", nil, h), 401, "WALLET_SIGNATURE_MISSING")
		if ids := idsOf(t, e.do("GET", "/agents/approvals", nil, nil), func(a actionOut) string { return a.ID }); len(ids) != 0 {
			t.Fatalf("a refused submission recorded %v", ids)
		}
		act := decodeAction(t, w.agentExecute(token, q), "PENDING_APPROVAL")
		e.clock.Advance(6 * time.Minute)
		failed := decodeAction(t, w.approve(ag.ID, act.ID, nil), "FAILED")
		if !strings.HasPrefix(failed.FailureReason, "WALLET_SIGNATURE_INVALID") {
			t.Fatalf("failed %+v", failed)
		}
	})
}

// TestAgentApprovalConcurrent: concurrent approvals of one action execute
// it once; concurrent approvals of several cannot overrun the daily limit
// together; on both databases; the books balance.
func TestAgentApprovalConcurrent(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		w := newAgentWorld(t, opts...)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(7_000))
		act := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
		before := e.account(w.mine.account.ID)
		var ok, conflict atomic.Int32
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				var h map[string]string
				if i%2 == 1 {
					h = map[string]string{wire.HeaderIdempotencyKey: "key-" + string(rune('a'+i))}
				}
				switch r := w.approve(ag.ID, act.ID, h); r.status {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusConflict:
					conflict.Add(1)
				default:
					t.Errorf("approve: %d %s", r.status, r.body)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 || conflict.Load() != 3 {
			t.Fatalf("%d approvals ran, %d refused", ok.Load(), conflict.Load())
		}
		if a := e.account(w.mine.account.ID); a.Balance.Amount != before.Balance.Amount-act.Quote.TotalSendingAmount {
			t.Fatalf("held %d, want %d", before.Balance.Amount-a.Balance.Amount, act.Quote.TotalSendingAmount)
		}

		// Three of 3000 against what is left of 7000 (1000 is used).
		var acts []actionOut
		for range 3 {
			acts = append(acts, decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 2_500)), "PENDING_APPROVAL"))
		}
		var approved, failed atomic.Int32
		for _, a := range acts {
			wg.Go(func() {
				var out actionOut
				r := w.approve(ag.ID, a.ID, nil)
				if r.status != http.StatusOK {
					t.Errorf("approve: %d %s", r.status, r.body)
					return
				}
				r.decode(t, &out)
				switch out.Status {
				case "APPROVED":
					approved.Add(1)
				case "FAILED":
					failed.Add(1)
				}
			})
		}
		wg.Wait()
		n, spend := w.usage(token)
		if approved.Load() != 2 || failed.Load() != 1 || n != 3 || spend > 7_000 {
			t.Fatalf("%d approved, %d failed; usage %d, %d of a daily limit of 7000", approved.Load(), failed.Load(), n, spend)
		}
		storetest.CheckBooks(t, e.store)
	})
}

// TestAgentPausedApproval: a paused agent's actions wait: approving is 409
// (reason AGENT_PAUSED) and leaves it pending; once resumed it can be
// approved; rejecting works while paused.
func TestAgentPausedApproval(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	a1 := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	a2 := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	e.mustStatus(e.do("PATCH", "/agents/"+ag.ID, map[string]any{"isPaused": true}, nil), http.StatusOK)
	er := wantRefusal(t, w.approve(ag.ID, a1.ID, nil), http.StatusConflict, "CONFLICT")
	if er.Details["reason"] != "AGENT_PAUSED" {
		t.Fatalf("%+v", er)
	}
	decodeAction(t, e.do("POST", "/agents/"+ag.ID+"/actions/"+a2.ID+"/reject", nil, nil), "REJECTED")
	e.mustStatus(e.do("PATCH", "/agents/"+ag.ID, map[string]any{"isPaused": false}, nil), http.StatusOK)
	decodeAction(t, w.approve(ag.ID, a1.ID, nil), "APPROVED")
}

// TestAgentTransferApproval: transfers the policy holds for approval wait
// as PENDING_APPROVAL with their transferDetails and run at approval; a
// transfer-out from an embedded wallet cannot wait (its signature answers
// a one-time challenge) and is refused.
func TestAgentTransferApproval(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		w := newAgentWorld(t, opts...)
		e := w.e
		ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
		h := bearer(token)
		r := e.do("POST", "/agents/me/transfer-in", transferInBody(w.myDest.ID, w.mine.account.ID, 2_500), h)
		e.mustStatus(r, http.StatusCreated)
		in := decodeAction(t, r, "PENDING_APPROVAL")
		if d := in.TransferDetails; d == nil || d.Amount != 2_500 || d.Currency != "USD" || d.SourceAccountID != w.myDest.ID ||
			d.DestinationAccountID != w.mine.account.ID || in.Transaction != nil || in.Type != "TRANSFER_IN" {
			t.Fatalf("pending transfer-in %s", r.body)
		}
		r = w.approve(ag.ID, in.ID, nil)
		done := decodeAction(t, r, "APPROVED")
		if done.Transaction == nil || done.Transaction.Type != "INCOMING" || done.TransferDetails.Amount != 2_500 {
			t.Fatalf("approved transfer-in %s", r.body)
		}

		fiat := e.fiatAccount(w.mine)
		e.fund(fiat, 10_000)
		r = e.do("POST", "/agents/me/transfer-out", transferOutBody(fiat, w.myDest.ID, 4_000), h)
		e.mustStatus(r, http.StatusCreated)
		out := decodeAction(t, r, "PENDING_APPROVAL")
		balances(t, e.account(fiat), 10_000, 10_000)
		done = decodeAction(t, w.approve(ag.ID, out.ID, nil), "APPROVED")
		if done.Transaction == nil || done.Transaction.Type != "OUTGOING" {
			t.Fatalf("approved transfer-out %+v", done)
		}
		balances(t, e.account(fiat), 6_000, 10_000)
		// Short of money at approval: FAILED, nothing moves.
		short := decodeAction(t, e.do("POST", "/agents/me/transfer-out", transferOutBody(fiat, w.myDest.ID, 5_000), h), "PENDING_APPROVAL")
		e.mustStatus(e.do("POST", "/transfer-out", transferOutBody(fiat, w.myDest.ID, 2_000), nil), http.StatusCreated)
		if failed := decodeAction(t, w.approve(ag.ID, short.ID, nil), "FAILED"); !strings.HasPrefix(failed.FailureReason, "INSUFFICIENT_BALANCE") {
			t.Fatalf("failed %+v", failed)
		}
		balances(t, e.account(fiat), 4_000, 10_000)

		er := wantRefusal(t, e.do("POST", "/agents/me/transfer-out", transferOutBody(w.mine.account.ID, w.myDest.ID, 100), h), 403, "FORBIDDEN")
		if er.Details["reason"] != "APPROVAL_REQUIRED" {
			t.Fatalf("%+v", er)
		}
	})
}

// TestAgentList: GET /agents with its filters; deleted agents are left
// out; the query's bad values are all named.
func TestAgentList(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	a1, _ := e.connectAgent(w.mine.customer.ID, policy("VIEW_TRANSACTIONS"))
	e.clock.Advance(time.Minute)
	r := e.do("POST", "/agents", map[string]any{"customerId": w.theirs.customer.ID, "name": "Idle", "policy": policy("VIEW_TRANSACTIONS")}, nil)
	e.mustStatus(r, http.StatusCreated)
	var a2 agentOut
	r.decode(t, &a2)
	e.clock.Advance(time.Minute)
	a3, _ := e.connectAgent(w.mine.customer.ID, policy("VIEW_TRANSACTIONS"))
	e.mustStatus(e.do("PATCH", "/agents/"+a3.ID, map[string]any{"isPaused": true}, nil), http.StatusOK)
	id := func(a agentOut) string { return a.ID }
	mid := timestamp(e.clock.Now().Add(-time.Minute))
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{a1.ID, a2.ID, a3.ID}},
		{"?customerId=" + w.mine.customer.ID, []string{a1.ID, a3.ID}},
		{"?isPaused=true", []string{a3.ID}},
		{"?isPaused=false&isConnected=true", []string{a1.ID}},
		{"?isConnected=false", []string{a2.ID}},
		{"?createdAfter=" + mid, []string{a2.ID, a3.ID}},
		{"?createdBefore=" + mid, []string{a1.ID, a2.ID}},
		{"?updatedAfter=" + timestamp(e.clock.Now()), []string{a3.ID}},
		{"?updatedBefore=" + mid, []string{a1.ID, a2.ID}},
		{"?limit=1&cursor=" + a1.ID, []string{a2.ID}},
	} {
		t.Run(c.query, func(t *testing.T) {
			if got := orderedIDs(t, e.do("GET", "/agents"+c.query, nil, nil), id); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	bad := "?customerId=x&isPaused=yes&isConnected=1&createdAfter=a&createdBefore=b&updatedAfter=c&updatedBefore=d&limit=101&cursor=e"
	if got := errorFields(wantRefusal(t, e.do("GET", "/agents"+bad, nil, nil), 400, "INVALID_INPUT")); got !=
		"createdAfter,createdBefore,cursor,customerId,isConnected,isPaused,limit,updatedAfter,updatedBefore" {
		t.Fatalf("fields %q", got)
	}
	wantRefusal(t, e.do("GET", "/agents", nil, map[string]string{"Authorization": ""}), 401, "UNAUTHORIZED")
}

// TestAgentDelete: a deleted agent is gone at once: its token stops
// working, every platform operation on it is 404, its waiting actions are
// REJECTED; its past actions and transactions stay.
func TestAgentDelete(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	ag, token := e.connectAgent(w.mine.customer.ID, approvalPolicy(0))
	act := decodeAction(t, w.agentExecute(token, w.agentQuote(token, w.myDest.ID, 1_000)), "PENDING_APPROVAL")
	keep, _ := e.connectAgent(w.mine.customer.ID, policy("VIEW_TRANSACTIONS"))
	wantRefusal(t, e.do("DELETE", "/agents/"+ag.ID, nil, map[string]string{"Authorization": ""}), 401, "UNAUTHORIZED")
	wantRefusal(t, e.do("DELETE", "/agents/Agent:01900000-0000-7000-8000-000000000001", nil, nil), 404, "NOT_FOUND")
	wantRefusal(t, e.do("DELETE", "/agents/x", nil, nil), 404, "NOT_FOUND")
	e.mustStatus(e.do("DELETE", "/agents/"+ag.ID, nil, nil), http.StatusNoContent)

	wantRefusal(t, e.do("GET", "/agents/me", nil, bearer(token)), 401, "UNAUTHORIZED")
	for _, c := range []struct{ method, path string }{
		{"GET", "/agents/" + ag.ID},
		{"DELETE", "/agents/" + ag.ID},
		{"PATCH", "/agents/" + ag.ID},
		{"PATCH", "/agents/" + ag.ID + "/policy"},
		{"POST", "/agents/" + ag.ID + "/device-codes"},
		{"POST", "/agents/" + ag.ID + "/actions/" + act.ID + "/approve"},
	} {
		var body any
		if c.method == "PATCH" {
			body = map[string]any{"isPaused": false}
			if strings.HasSuffix(c.path, "/policy") {
				body = map[string]any{"defaultExecutionMode": "AUTO"}
			}
		}
		wantRefusal(t, e.do(c.method, c.path, body, nil), 404, "NOT_FOUND")
	}
	if got := idsOf(t, e.do("GET", "/agents", nil, nil), func(a agentOut) string { return a.ID }); !slices.Equal(got, []string{keep.ID}) {
		t.Fatalf("agents after the delete %v", got)
	}
	if ids := idsOf(t, e.do("GET", "/agents/approvals", nil, nil), func(a actionOut) string { return a.ID }); len(ids) != 0 {
		t.Fatalf("approvals after the delete %v", ids)
	}
	if x := e.transaction(act.Quote.TransactionID); x.Status != "PENDING" {
		t.Fatalf("the deleted agent's pending execute ran: %s", x.Status)
	}
}

// TestAgentPolicyUpdate: PATCH /agents/{agentId}/policy changes the
// members it names; every bad member, unknown member and wrong type is
// named at once and nothing is stored; the new policy applies at once.
func TestAgentPolicyUpdate(t *testing.T) {
	w := newAgentWorld(t)
	e := w.e
	pol := limits(policy("CREATE_QUOTES", "EXECUTE_QUOTES"), "USD", 10_000, map[string]any{"dailyLimit": 50_000, "dailyTransactionLimit": 5})
	ag, token := e.connectAgent(w.mine.customer.ID, pol)
	path := "/agents/" + ag.ID + "/policy"
	policyOf := func(r response) map[string]any {
		t.Helper()
		var a struct{ Policy map[string]any }
		r.decode(t, &a)
		return a.Policy
	}
	stored := func() string {
		t.Helper()
		b, _ := json.Marshal(policyOf(e.do("GET", "/agents/"+ag.ID, nil, nil)))
		return string(b)
	}
	for _, c := range []struct {
		name string
		body string
		want string // fields, comma-separated
	}{
		{"unknown members and wrong types", `{"permisions":["X"],"defaultExecutionMode":5,"spendingLimits":{"dailyLimit":"many","weekly":1},"approvalThresholds":{"amount":true}}`,
			"approvalThresholds.amount,defaultExecutionMode,permisions,spendingLimits.dailyLimit,spendingLimits.weekly"},
		{"bad values", `{"permissions":["PAY","VIEW_TRANSACTIONS"],"defaultExecutionMode":"MAYBE","spendingLimits":{"currency":"usd","perTransactionLimit":-1},` +
			`"accountRestrictions":{"allowedAccountIds":["x"],"accountRules":[{"executionMode":"SOMETIMES"}]},"approvalThresholds":{}}`,
			"accountRestrictions.accountRules[0].accountId,accountRestrictions.accountRules[0].executionMode,accountRestrictions.allowedAccountIds[0]," +
				"approvalThresholds.amount,defaultExecutionMode,permissions[0],spendingLimits.currency,spendingLimits.perTransactionLimit"},
		{"required members removed", `{"permissions":null,"defaultExecutionMode":null,"spendingLimits":{"perTransactionLimit":null}}`,
			"defaultExecutionMode,permissions,spendingLimits.perTransactionLimit"},
		{"no spending limits", `{"permissions":[],"spendingLimits":null}`, "permissions,spendingLimits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := stored()
			if got := errorFields(wantRefusal(t, e.do("PATCH", path, c.body, nil), 400, "INVALID_INPUT")); got != c.want {
				t.Fatalf("fields %q, want %q", got, c.want)
			}
			if after := stored(); after != before {
				t.Fatalf("a refused update changed the policy: %s", after)
			}
		})
	}
	wantRefusal(t, e.do("PATCH", path, `[1]`, nil), 400, "INVALID_INPUT")
	wantRefusal(t, e.do("PATCH", path, nil, nil), 400, "INVALID_REQUEST_FORMAT")
	wantRefusal(t, e.do("PATCH", "/agents/Agent:01900000-0000-7000-8000-000000000001/policy", `{}`, nil), 404, "NOT_FOUND")
	wantRefusal(t, e.do("PATCH", path, `{}`, map[string]string{"Authorization": ""}), 401, "UNAUTHORIZED")

	// A partial change: what is named changes, the rest stays.
	r := e.do("PATCH", path, `{"spendingLimits":{"dailyLimit":null,"monthlyLimit":90000},"approvalThresholds":{"amount":2000}}`, nil)
	e.mustStatus(r, http.StatusOK)
	got := policyOf(r)
	sl := got["spendingLimits"].(map[string]any)
	if sl["dailyLimit"] != nil || sl["monthlyLimit"] != float64(90_000) || sl["perTransactionLimit"] != float64(10_000) ||
		sl["dailyTransactionLimit"] != float64(5) || sl["currency"] != "USD" || got["defaultExecutionMode"] != "AUTO" ||
		!slices.Equal(anyStrings(got["permissions"]), []string{"CREATE_QUOTES", "EXECUTE_QUOTES"}) {
		t.Fatalf("policy %s", r.body)
	}
	// It applies at once: above the threshold the execute waits.
	q := w.agentQuote(token, w.myDest.ID, 2_500)
	decodeAction(t, w.agentExecute(token, q), "PENDING_APPROVAL")
	r = e.do("PATCH", path, `{"approvalThresholds":null,"permissions":["VIEW_TRANSACTIONS"]}`, nil)
	e.mustStatus(r, http.StatusOK)
	if got := policyOf(r); got["approvalThresholds"] != nil {
		t.Fatalf("thresholds not removed: %s", r.body)
	}
	wantRefusal(t, e.do("POST", "/agents/me/quotes", quoteBody(w.mine, w.myDest.ID, "SENDING", 100), bearer(token)), 403, "FORBIDDEN")

	// A new currency recasts the limits the request does not restate.
	r = e.do("PATCH", path, `{"spendingLimits":{"currency":"EUR","perTransactionLimit":7000}}`, nil)
	e.mustStatus(r, http.StatusOK)
	sl = policyOf(r)["spendingLimits"].(map[string]any)
	if sl["currency"] != "EUR" || sl["perTransactionLimit"] != float64(7_000) || sl["dailyTransactionLimit"] != float64(5) {
		t.Fatalf("recast %s", r.body)
	}
	if m := sl["monthlyLimit"].(float64); m == 90_000 || m <= 0 {
		t.Fatalf("monthlyLimit 90000 USD cents recast as %v EUR cents", m)
	}
}

// orderedIDs are the ids of a list's page in the order given.
func orderedIDs[T any](t *testing.T, r response, id func(T) string) []string {
	t.Helper()
	var l wire.List[T]
	r.decode(t, &l)
	var out []string
	for _, v := range l.Data {
		out = append(out, id(v))
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
