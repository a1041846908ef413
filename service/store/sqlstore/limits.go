package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"paywallet/service/store"
)

// ---- an embedded wallet's personal limits (store.LimitsTx)

const walletLimitsCols = `account_id, per_payment, daily, cooling_off_hours,
	pending_per_payment_set, pending_per_payment, pending_daily_set, pending_daily,
	pending_cooling_off_set, pending_cooling_off, pending_effective_at, updated_at`

// optInt64 is the argument for a nullable integer column: nil is NULL.
func optInt64(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// int64Ptr is a scanned nullable integer: NULL is nil.
func int64Ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

func (t *tx) GetWalletLimits(ctx context.Context, accountID string) (*store.WalletLimits, error) {
	var l store.WalletLimits
	var per, daily, pendPer, pendDaily sql.NullInt64
	var p store.PendingLimits
	err := t.queryRow(ctx, `SELECT `+walletLimitsCols+` FROM wallet_limits WHERE account_id = ?`, accountID).Scan(
		&l.AccountID, &per, &daily, &l.CoolingOffHours,
		&p.PerPaymentSet, &pendPer, &p.DailySet, &pendDaily,
		&p.CoolingOffSet, &p.CoolingOffHours, timeCol{&p.EffectiveAt}, timeCol{&l.UpdatedAt})
	if err != nil {
		return nil, t.fail(fmt.Sprintf("limits of %q", accountID), err)
	}
	l.PerPayment, l.Daily = int64Ptr(per), int64Ptr(daily)
	p.PerPayment, p.Daily = int64Ptr(pendPer), int64Ptr(pendDaily)
	if !p.EffectiveAt.IsZero() {
		l.Pending = &p
	}
	return &l, nil
}

func (t *tx) PutWalletLimits(ctx context.Context, l *store.WalletLimits) error {
	p := l.Pending
	if p == nil {
		p = &store.PendingLimits{}
	} else if p.EffectiveAt.IsZero() {
		return fmt.Errorf("store: limits of %q: a pending change needs its EffectiveAt", l.AccountID)
	}
	_, err := t.exec(ctx, `INSERT INTO wallet_limits (`+walletLimitsCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id) DO UPDATE SET per_payment = excluded.per_payment, daily = excluded.daily,
			cooling_off_hours = excluded.cooling_off_hours,
			pending_per_payment_set = excluded.pending_per_payment_set, pending_per_payment = excluded.pending_per_payment,
			pending_daily_set = excluded.pending_daily_set, pending_daily = excluded.pending_daily,
			pending_cooling_off_set = excluded.pending_cooling_off_set, pending_cooling_off = excluded.pending_cooling_off,
			pending_effective_at = excluded.pending_effective_at, updated_at = excluded.updated_at`,
		l.AccountID, optInt64(l.PerPayment), optInt64(l.Daily), l.CoolingOffHours,
		p.PerPaymentSet, optInt64(p.PerPayment), p.DailySet, optInt64(p.Daily),
		p.CoolingOffSet, p.CoolingOffHours, t.d.timeArg(p.EffectiveAt), t.d.timeArg(l.UpdatedAt))
	if err != nil {
		return t.fail(fmt.Sprintf("put limits of %q", l.AccountID), err)
	}
	return nil
}

// countedOutgoing selects the transactions the daily limit counts: an
// account's outgoing ones created at or after a time that took or take
// money from it (store.Tx.OutgoingSince).
const countedOutgoing = `FROM transactions
		WHERE source_account_id = ? AND type = 'OUTGOING' AND created_at >= ?
		AND (status IN ('PROCESSING', 'COMPLETED') OR (status = 'PENDING' AND quote_id IS NULL))`

func (t *tx) OutgoingSince(ctx context.Context, accountID string, since time.Time) (int64, error) {
	var total int64
	err := t.queryRow(ctx, `SELECT `+t.d.cappedSum("sent_amount")+` `+countedOutgoing,
		accountID, t.d.timeArg(since)).Scan(&total)
	if err != nil {
		return 0, t.fail(fmt.Sprintf("outgoing payments of %q", accountID), err)
	}
	return total, nil
}

// NewestOutgoingOver reads the counted transactions newest first and stops
// at the one that takes their sum past budget: a refusal reads no more of
// a busy wallet's day than it must.
func (t *tx) NewestOutgoingOver(ctx context.Context, accountID string, since time.Time, budget int64) (time.Time, error) {
	what := fmt.Sprintf("outgoing payments of %q", accountID)
	rows, err := t.query(ctx, `SELECT sent_amount, created_at `+countedOutgoing+` ORDER BY created_at DESC, id DESC`,
		accountID, t.d.timeArg(since))
	if err != nil {
		return time.Time{}, t.fail(what, err)
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var amount int64
		var created time.Time
		if err := rows.Scan(&amount, timeCol{&created}); err != nil {
			return time.Time{}, t.fail(what, err)
		}
		if amount > budget-sum { // sum+amount > budget, without overflow
			return created, nil
		}
		sum += amount
	}
	if err := rows.Err(); err != nil {
		return time.Time{}, t.fail(what, err)
	}
	return time.Time{}, nil
}
