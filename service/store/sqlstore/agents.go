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
	created_at, updated_at`

func scanAgentAction(s scanner) (store.AgentAction, error) {
	var a store.AgentAction
	err := s.Scan(&a.ID, &a.AgentID, &a.CustomerID, &a.Type, &a.Status, optStringCol{&a.QuoteID},
		optStringCol{&a.TransactionID}, &a.Spend, &a.SpendCurrency, timeCol{&a.CreatedAt}, timeCol{&a.UpdatedAt})
	return a, err
}

func (t *tx) CreateAgentAction(ctx context.Context, a *store.AgentAction) error {
	return t.insert(ctx, fmt.Sprintf("create agent action %q", a.ID),
		`INSERT INTO agent_actions (`+agentActionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.AgentID, a.CustomerID, a.Type, a.Status, optString(a.QuoteID), optString(a.TransactionID),
		a.Spend, a.SpendCurrency, t.d.timeArg(a.CreatedAt), t.d.timeArg(a.UpdatedAt))
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
		WHERE agent_id = ? AND status = 'APPROVED' AND spend_currency = ? AND created_at >= ?`,
		agentID, currency, t.d.timeArg(since)).Scan(&count, &spend)
	if err != nil {
		return 0, 0, t.fail(fmt.Sprintf("usage of agent %q", agentID), err)
	}
	return count, spend, nil
}
