package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"paywallet/service/store"
)

// ---- step-ups (store.StepUpTx)

const stepUpCols = `id, account_id, customer_id, action, target_id, payload_hash, reasons, factor, code_hash, codes_sent,
	payment, status, created_at, expires_at, authorized_at, used_at`

// The reasons column holds the list comma-separated (the reasons are
// upper-case words, which hold no comma).
func scanStepUp(s scanner) (store.StepUp, error) {
	var u store.StepUp
	var reasons string
	err := s.Scan(&u.ID, &u.AccountID, &u.CustomerID, &u.Action, &u.TargetID, bytesCol{&u.PayloadHash}, &reasons,
		&u.Factor, bytesCol{&u.CodeHash}, &u.CodesSent, bytesCol{&u.Payment}, &u.Status,
		timeCol{&u.CreatedAt}, timeCol{&u.ExpiresAt}, timeCol{&u.AuthorizedAt}, timeCol{&u.UsedAt})
	if reasons != "" {
		u.Reasons = strings.Split(reasons, ",")
	}
	return u, err
}

func (t *tx) CreateStepUp(ctx context.Context, u *store.StepUp) error {
	return t.insert(ctx, fmt.Sprintf("create step-up %q", u.ID),
		`INSERT INTO step_ups (`+stepUpCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.AccountID, u.CustomerID, u.Action, u.TargetID, u.PayloadHash, strings.Join(u.Reasons, ","), u.Factor,
		u.CodeHash, u.CodesSent, u.Payment, u.Status, t.d.timeArg(u.CreatedAt), t.d.timeArg(u.ExpiresAt),
		t.d.timeArg(u.AuthorizedAt), t.d.timeArg(u.UsedAt))
}

func (t *tx) GetStepUp(ctx context.Context, id string) (*store.StepUp, error) {
	u, err := scanStepUp(t.queryRow(ctx, `SELECT `+stepUpCols+` FROM step_ups WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("step-up %q", id), err)
	}
	return &u, nil
}

func (t *tx) StepUpOf(ctx context.Context, targetID string) (*store.StepUp, error) {
	u, err := scanStepUp(t.queryRow(ctx, `SELECT `+stepUpCols+` FROM step_ups WHERE target_id = ?
		ORDER BY created_at DESC, id DESC LIMIT 1`, targetID))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("step-up of %q", targetID), err)
	}
	return &u, nil
}

func (t *tx) AdvanceStepUp(ctx context.Context, id, from, to string, at time.Time) (bool, error) {
	col := "used_at"
	if to == "AUTHORIZED" {
		col = "authorized_at"
	}
	return t.compareAndSet(ctx, fmt.Sprintf("advance step-up %q", id), "step_ups", id, at,
		`UPDATE step_ups SET status = ?, `+col+` = ? WHERE id = ? AND status = ?`, to, t.d.timeArg(at), id, from)
}

func (t *tx) SetStepUpCode(ctx context.Context, id string, codeHash []byte, at time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("set the code of step-up %q", id),
		`UPDATE step_ups SET code_hash = ?, codes_sent = codes_sent + 1 WHERE id = ?`, codeHash, id)
}

func (t *tx) AddStepUpAttempt(ctx context.Context, id, accountID string, at time.Time) error {
	return t.insert(ctx, "count a step-up attempt",
		`INSERT INTO step_up_attempts (id, account_id, attempted_at) VALUES (?, ?, ?)`, id, accountID, t.d.timeArg(at))
}

func (t *tx) DeleteStepUpAttempt(ctx context.Context, id string) error {
	if _, err := t.exec(ctx, `DELETE FROM step_up_attempts WHERE id = ?`, id); err != nil {
		return t.fail("uncount a step-up attempt", err)
	}
	return nil
}

func (t *tx) StepUpAttempts(ctx context.Context, accountID string, since time.Time) (int, error) {
	var n int
	err := t.queryRow(ctx, `SELECT COUNT(*) FROM step_up_attempts WHERE account_id = ? AND attempted_at >= ?`,
		accountID, t.d.timeArg(since)).Scan(&n)
	if err != nil {
		return 0, t.fail("count step-up attempts", err)
	}
	return n, nil
}

func (t *tx) LockAccount(ctx context.Context, accountID string, until time.Time, failures int) error {
	_, err := t.exec(ctx, `INSERT INTO account_locks (account_id, locked_until, failed_attempts) VALUES (?, ?, ?)
		ON CONFLICT (account_id) DO UPDATE SET locked_until = excluded.locked_until, failed_attempts = excluded.failed_attempts`,
		accountID, t.d.timeArg(until), failures)
	if err != nil {
		return t.fail(fmt.Sprintf("lock account %q", accountID), err)
	}
	return nil
}

func (t *tx) AccountLock(ctx context.Context, accountID string) (time.Time, int, error) {
	var until time.Time
	var n int
	err := t.queryRow(ctx, `SELECT locked_until, failed_attempts FROM account_locks WHERE account_id = ?`, accountID).
		Scan(timeCol{&until}, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, 0, nil
	}
	if err != nil {
		return time.Time{}, 0, t.fail(fmt.Sprintf("lock of account %q", accountID), err)
	}
	return until, n, nil
}

func (t *tx) HasPaid(ctx context.Context, walletID, externalAccountID string) (bool, error) {
	var n int
	err := t.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM transactions WHERE source_account_id = ?
		AND destination_account_id = ? AND status IN ('PROCESSING', 'COMPLETED', 'REFUNDED') LIMIT 1) AS paid`,
		walletID, externalAccountID).Scan(&n)
	if err != nil {
		return false, t.fail("payments to an external account", err)
	}
	return n > 0, nil
}
