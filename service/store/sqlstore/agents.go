package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"paywallet/service/store"
)

// ---- what agents do (store.AgentTx)

// in keeps the rows whose column is one of vs when vs is not nil; an empty
// (non-nil) vs keeps none.
func (f *filter) in(col string, vs []string) {
	if vs == nil {
		return
	}
	if len(vs) == 0 {
		f.conds = append(f.conds, "1 = 0")
		return
	}
	f.conds = append(f.conds, col+" IN (?"+strings.Repeat(", ?", len(vs)-1)+")")
	for _, v := range vs {
		f.args = append(f.args, v)
	}
}

// eitherIn keeps the rows where one of two columns is one of vs (nil: no
// condition; empty: none).
func (f *filter) eitherIn(a, b string, vs []string) {
	if vs == nil {
		return
	}
	if len(vs) == 0 {
		f.conds = append(f.conds, "1 = 0")
		return
	}
	marks := "(?" + strings.Repeat(", ?", len(vs)-1) + ")"
	f.conds = append(f.conds, "("+a+" IN "+marks+" OR "+b+" IN "+marks+")")
	for range 2 {
		for _, v := range vs {
			f.args = append(f.args, v)
		}
	}
}

func (t *tx) CreateAgentQuote(ctx context.Context, q *store.AgentQuote) error {
	return t.insert(ctx, fmt.Sprintf("record agent %q of quote %q", q.AgentID, q.QuoteID),
		`INSERT INTO agent_quotes (quote_id, agent_id, created_at) VALUES (?, ?, ?)`,
		q.QuoteID, q.AgentID, t.d.timeArg(q.CreatedAt))
}

func (t *tx) GetAgentQuote(ctx context.Context, quoteID string) (*store.AgentQuote, error) {
	var q store.AgentQuote
	err := t.queryRow(ctx, `SELECT quote_id, agent_id, created_at FROM agent_quotes WHERE quote_id = ?`, quoteID).
		Scan(&q.QuoteID, &q.AgentID, timeCol{&q.CreatedAt})
	if err != nil {
		return nil, t.fail(fmt.Sprintf("agent of quote %q", quoteID), err)
	}
	return &q, nil
}

const agentActionCols = `id, agent_id, customer_id, type, status, quote_id, transaction_id, spend, spend_currency,
	created_at, updated_at, request, rejection_reason, failure_reason, executed_at`

func scanAgentAction(s scanner) (store.AgentAction, error) {
	var a store.AgentAction
	err := s.Scan(&a.ID, &a.AgentID, &a.CustomerID, &a.Type, &a.Status, optStringCol{&a.QuoteID},
		optStringCol{&a.TransactionID}, &a.Spend, &a.SpendCurrency, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt},
		bytesCol{&a.Request}, optStringCol{&a.RejectionReason}, optStringCol{&a.FailureReason}, timeCol{&a.ExecutedAt})
	return a, err
}

func (t *tx) CreateAgentAction(ctx context.Context, a *store.AgentAction) error {
	return t.insert(ctx, fmt.Sprintf("create agent action %q", a.ID),
		`INSERT INTO agent_actions (`+agentActionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.AgentID, a.CustomerID, a.Type, a.Status, optString(a.QuoteID), optString(a.TransactionID),
		a.Spend, a.SpendCurrency, t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt),
		optBlob(a.Request), optString(a.RejectionReason), optString(a.FailureReason), t.d.timeArg(a.ExecutedAt))
}

func (t *tx) GetAgentAction(ctx context.Context, id string) (*store.AgentAction, error) {
	a, err := scanAgentAction(t.queryRow(ctx, `SELECT `+agentActionCols+` FROM agent_actions WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("agent action %q", id), err)
	}
	return &a, nil
}

func (t *tx) ListAgentActions(ctx context.Context, f store.AgentActionFilter) (store.Page[store.AgentAction], error) {
	if f.AgentID == "" {
		return store.Page[store.AgentAction]{}, fmt.Errorf("store: list agent actions: no agent")
	}
	w := filter{conds: []string{"agent_id = ?"}, args: []any{f.AgentID}, desc: true}
	w.eq("status", f.Status)
	return listPage(ctx, t, "list agent actions", "agent_actions", agentActionCols, w, f.Limit, f.Cursor,
		scanAgentAction, func(a *store.AgentAction) string { return a.ID })
}

func (t *tx) AgentUsage(ctx context.Context, agentID, currency string, since time.Time) (count, spend int64, err error) {
	err = t.queryRow(ctx, `SELECT count(*), `+t.d.cappedSum("spend")+` FROM agent_actions
		WHERE agent_id = ? AND status = 'APPROVED' AND spend_currency = ? AND COALESCE(executed_at, created_at) >= ?`,
		agentID, currency, t.d.timeArg(since)).Scan(&count, &spend)
	if err != nil {
		return 0, 0, t.fail(fmt.Sprintf("usage of agent %q", agentID), err)
	}
	return count, spend, nil
}

// ---- managing agents and their approvals

// timeRange keeps the rows whose col is within [after, before] (either
// bound zero: open).
func (t *tx) timeRange(f *filter, col string, after, before time.Time) {
	if !after.IsZero() {
		f.conds = append(f.conds, col+" >= ?")
		f.args = append(f.args, t.d.timeArg(after))
	}
	if !before.IsZero() {
		f.conds = append(f.conds, col+" <= ?")
		f.args = append(f.args, t.d.timeArg(before))
	}
}

func (t *tx) ListAgents(ctx context.Context, f store.AgentFilter) (store.Page[store.Agent], error) {
	w := filter{conds: []string{"deleted_at IS NULL"}}
	w.eq("customer_id", f.CustomerID)
	if f.IsPaused != nil {
		w.conds = append(w.conds, "is_paused = ?")
		w.args = append(w.args, *f.IsPaused)
	}
	if f.IsConnected != nil {
		cond := "EXISTS (SELECT 1 FROM agent_tokens k WHERE k.agent_id = agents.id AND k.revoked_at IS NULL)"
		if !*f.IsConnected {
			cond = "NOT " + cond
		}
		w.conds = append(w.conds, cond)
	}
	t.timeRange(&w, "created_at", f.CreatedAfter, f.CreatedBefore)
	t.timeRange(&w, "updated_at", f.UpdatedAfter, f.UpdatedBefore)
	return listPage(ctx, t, "list agents", "agents", agentCols, w, f.Limit, f.Cursor,
		scanAgent, func(a *store.Agent) string { return a.ID })
}

func (t *tx) UpdateAgentPolicy(ctx context.Context, id string, policy []byte, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("update policy of agent %q", id),
		`UPDATE agents SET policy = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
		exactBlob(policy), t.d.timeArg(at), id)
}

func (t *tx) DeleteAgent(ctx context.Context, id string, at time.Time) (bool, error) {
	what := fmt.Sprintf("delete agent %q", id)
	won, err := t.compareAndSet(ctx, what, "agents", id, at,
		`UPDATE agents SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
		t.d.timeArg(at), t.d.timeArg(at), id)
	if err != nil || !won {
		return won, err
	}
	if _, err := t.exec(ctx, `UPDATE agent_tokens SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL`,
		t.d.timeArg(at), id); err != nil {
		return false, t.fail(what, err)
	}
	if _, err := t.exec(ctx, `UPDATE device_codes SET expires_at = ?
		WHERE agent_id = ? AND redeemed_at IS NULL AND expires_at > ?`,
		t.d.timeArg(at), id, t.d.timeArg(at)); err != nil {
		return false, t.fail(what, err)
	}
	return true, nil
}

func (t *tx) ListAgentApprovals(ctx context.Context, f store.AgentApprovalFilter) (store.Page[store.AgentAction], error) {
	w := filter{conds: []string{"status = 'PENDING_APPROVAL'"}, desc: f.Descending}
	w.eq("agent_id", f.AgentID)
	w.eq("customer_id", f.CustomerID)
	t.timeRange(&w, "created_at", f.CreatedAfter, f.CreatedBefore)
	return listPage(ctx, t, "list agent approvals", "agent_actions", agentActionCols, w, f.Limit, f.Cursor,
		scanAgentAction, func(a *store.AgentAction) string { return a.ID })
}

func (t *tx) DecideAgentAction(ctx context.Context, a *store.AgentAction, from string) (bool, error) {
	return t.compareAndSet(ctx, fmt.Sprintf("decide agent action %q", a.ID), "agent_actions", a.ID, a.UpdatedAt,
		`UPDATE agent_actions SET status = ?, transaction_id = ?, spend = ?, spend_currency = ?, rejection_reason = ?,
			failure_reason = ?, executed_at = ?, updated_at = ? WHERE id = ? AND status = ?`,
		a.Status, optString(a.TransactionID), a.Spend, a.SpendCurrency, optString(a.RejectionReason),
		optString(a.FailureReason), t.d.timeArg(a.ExecutedAt), t.d.timeArg(a.UpdatedAt), a.ID, from)
}
