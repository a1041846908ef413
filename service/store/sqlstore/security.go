package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"paywallet/service/seclog"
	"paywallet/service/store"
)

// ---- the customers' security logs (store.SecurityTx, store.SignOutLinkTx)

const securityCols = `id, customer_id, account_id, seq, type, details, created_at, prev_hash, hash`

func scanSecurityEvent(s scanner) (store.SecurityEvent, error) {
	var e store.SecurityEvent
	var details string
	err := s.Scan(&e.ID, &e.CustomerID, optStringCol{&e.AccountID}, &e.Seq, &e.Type, &details, timeCol{&e.CreatedAt},
		&e.PrevHash, &e.Hash)
	e.Details = []byte(details)
	return e, err
}

func (t *tx) AppendSecurityEvent(ctx context.Context, e *store.SecurityEvent) error {
	what := fmt.Sprintf("append security event %q", e.ID)
	var last int64
	prev := seclog.Zero
	err := t.queryRow(ctx, `SELECT seq, hash FROM security_events WHERE customer_id = ? ORDER BY seq DESC LIMIT 1`,
		e.CustomerID).Scan(&last, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return t.fail(what, err)
	}
	e.CreatedAt = e.CreatedAt.UTC().Truncate(time.Microsecond)
	e.Seq, e.PrevHash = last+1, prev
	hash, ok := seclog.Next(prev, e.Seq, &seclog.Record{ID: e.ID, CustomerID: e.CustomerID, AccountID: e.AccountID,
		Type: e.Type, Details: e.Details, CreatedAt: e.CreatedAt})
	if !ok {
		return fmt.Errorf("store: %s: the customer's last record has a malformed hash %q", what, prev)
	}
	e.Hash = hash
	err = t.insert(ctx, what, `INSERT INTO security_events (`+securityCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.CustomerID, optString(e.AccountID), e.Seq, e.Type, string(e.Details), t.d.timeArg(e.CreatedAt),
		e.PrevHash, e.Hash)
	if errors.Is(err, store.ErrConflict) {
		// Another transaction appended the customer's seq first: this
		// one read a chain that has moved on, and runs again.
		t.lostRace = true
	}
	return err
}

func (t *tx) ListSecurityEvents(ctx context.Context, f store.SecurityEventFilter) (store.Page[store.SecurityEvent], error) {
	const what = "list security events"
	cursor, err := parseSeqCursor(what, f.Cursor)
	if err != nil {
		return store.Page[store.SecurityEvent]{}, err
	}
	var w filter
	w.conds, w.args = []string{"customer_id = ?"}, []any{f.CustomerID}
	w.eq("type", f.Type)
	w.desc = true
	return listPageBy(ctx, t, what, "security_events", securityCols, "seq", w, f.Limit, cursor,
		scanSecurityEvent, func(e *store.SecurityEvent) string { return strconv.FormatInt(e.Seq, 10) })
}

func (t *tx) CreateSignOutLink(ctx context.Context, l *store.SignOutLink) error {
	return t.insert(ctx, "create sign-out link",
		`INSERT INTO sign_out_links (token_hash, customer_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)`,
		l.TokenHash, l.CustomerID, t.d.timeArg(l.CreatedAt), t.d.timeArg(l.ExpiresAt), t.d.timeArg(l.UsedAt))
}

func (t *tx) UseSignOutLink(ctx context.Context, hash []byte, at time.Time) (string, error) {
	var customer string
	err := t.queryRow(ctx, `UPDATE sign_out_links SET used_at = ?
		WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING customer_id`,
		t.d.timeArg(at), hash, t.d.timeArg(at)).Scan(&customer)
	if err != nil {
		return "", t.fail("use sign-out link", err)
	}
	return customer, nil
}
