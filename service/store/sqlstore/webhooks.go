package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"paywallet/service/store"
)

// ---- webhook outbox

const webhookCols = `id, type, resource_id, sequence, body, status, attempts, next_attempt_at, give_up_at, lease,
	last_status, last_error, delivered_at, created_at, updated_at`

func scanWebhookEvent(s scanner) (store.WebhookEvent, error) {
	var e store.WebhookEvent
	err := s.Scan(&e.ID, &e.Type, &e.ResourceID, &e.Sequence, exactBytesCol{&e.Body}, &e.Status, &e.Attempts,
		timeCol{&e.NextAttemptAt}, timeCol{&e.GiveUpAt}, &e.Lease, &e.LastStatus, &e.LastError,
		timeCol{&e.DeliveredAt}, timeCol{&e.CreatedAt}, timeCol{&e.UpdatedAt})
	return e, err
}

func (t *tx) NextWebhookSequence(ctx context.Context, resourceID string) (int64, error) {
	// One seek on the (resource_id, sequence) index; MAX wrapped in
	// COALESCE would read every event of the resource on SQLite.
	var n int64
	err := t.queryRow(ctx, `SELECT sequence FROM webhook_events WHERE resource_id = ? ORDER BY sequence DESC LIMIT 1`,
		resourceID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 1, nil
	}
	if err != nil {
		return 0, t.fail(fmt.Sprintf("next webhook sequence of %q", resourceID), err)
	}
	return n + 1, nil
}

func (t *tx) CreateWebhookEvent(ctx context.Context, e *store.WebhookEvent) error {
	what := fmt.Sprintf("create webhook event %q", e.ID)
	if e.Sequence < 1 {
		return fmt.Errorf("store: %s: sequence %d is not positive", what, e.Sequence)
	}
	err := t.insert(ctx, what,
		`INSERT INTO webhook_events (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.Type, e.ResourceID, e.Sequence, blob(e.Body), e.Status, e.Attempts, t.d.timeArg(e.NextAttemptAt),
		t.d.timeArg(e.GiveUpAt), e.Lease, e.LastStatus, e.LastError, t.d.timeArg(e.DeliveredAt),
		t.d.timeArg(e.CreatedAt), t.d.timeArg(e.UpdatedAt))
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	var one int
	switch err := t.queryRow(ctx, `SELECT 1 FROM webhook_events WHERE id = ?`, e.ID).Scan(&one); {
	case err == nil:
		return fmt.Errorf("%w: %s: the id is taken", store.ErrConflict, what)
	case !errors.Is(err, sql.ErrNoRows):
		return t.fail(what, err)
	}
	// The sequence is taken: another transaction wrote an event of this
	// resource after this one read the highest sequence. Run it again.
	t.lostRace = true
	return fmt.Errorf("store: %s: sequence %d of %q was taken by a concurrent transaction", what, e.Sequence, e.ResourceID)
}

func (t *tx) GetWebhookEvent(ctx context.Context, id string) (*store.WebhookEvent, error) {
	e, err := scanWebhookEvent(t.queryRow(ctx, `SELECT `+webhookCols+` FROM webhook_events WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("webhook event %q", id), err)
	}
	return &e, nil
}

func (t *tx) ListWebhookEvents(ctx context.Context, f store.WebhookEventFilter) (store.Page[store.WebhookEvent], error) {
	const what = "list webhook events"
	var w filter
	w.eq("status", f.Status)
	w.eq("resource_id", f.ResourceID)
	w.desc = true // newest first
	return listPage(ctx, t, what, "webhook_events", webhookCols, w, f.Limit, f.Cursor,
		scanWebhookEvent, func(e *store.WebhookEvent) string { return e.ID })
}

func (t *tx) ClaimWebhookEvents(ctx context.Context, now, until time.Time, lease string, limit int) ([]store.WebhookEvent, error) {
	const what = "claim webhook events"
	if limit < 1 {
		return []store.WebhookEvent{}, nil
	}
	if lease == "" || !until.After(now) {
		return nil, fmt.Errorf("store: %s: a lease token and an end after now are required", what)
	}
	// One statement: the subquery picks (and on PostgreSQL locks, passing
	// over rows another claim holds) and the update leases.
	rows, err := t.query(ctx, `UPDATE webhook_events SET lease = ?, next_attempt_at = ?, updated_at = ?
		WHERE id IN (SELECT e.id FROM webhook_events e
			WHERE e.status = 'PENDING' AND e.next_attempt_at <= ?
			AND NOT EXISTS (SELECT 1 FROM webhook_events p
				WHERE p.resource_id = e.resource_id AND p.status = 'PENDING' AND p.sequence < e.sequence)
			ORDER BY e.next_attempt_at, e.id LIMIT ?`+t.d.skipLocked+`)
		RETURNING `+webhookCols, lease, t.d.timeArg(until), t.d.timeArg(now), t.d.timeArg(now), limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	items, err := collect(rows, scanWebhookEvent)
	if err != nil {
		return nil, t.fail(what, err)
	}
	// RETURNING has no order; the claim's was oldest due first, and ids
	// (UUIDv7) are in the order events were recorded.
	slices.SortFunc(items, func(a, b store.WebhookEvent) int { return strings.Compare(a.ID, b.ID) })
	return items, nil
}

func (t *tx) FinishWebhookAttempt(ctx context.Context, e *store.WebhookEvent, a *store.WebhookAttempt, lease string) (bool, error) {
	what := fmt.Sprintf("finish webhook attempt %d of %q", a.Attempt, e.ID)
	if a.EventID != e.ID || a.Attempt < 1 {
		return false, fmt.Errorf("store: %s: the attempt does not belong to the event", what)
	}
	won, err := t.compareAndSet(ctx, what, "webhook_events", e.ID, e.UpdatedAt,
		`UPDATE webhook_events SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ?,
		 delivered_at = ?, updated_at = ?, lease = '' WHERE id = ? AND lease = ? AND lease <> '' AND attempts = ?`,
		e.Status, a.Attempt, t.d.timeArg(e.NextAttemptAt), e.LastStatus, e.LastError, t.d.timeArg(e.DeliveredAt),
		t.d.timeArg(e.UpdatedAt), e.ID, lease, a.Attempt-1)
	if err != nil || !won {
		return false, err
	}
	err = t.insert(ctx, what,
		`INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, response_status, error, duration_us)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.EventID, a.Attempt, t.d.timeArg(a.AttemptedAt), a.URL, a.ResponseStatus, a.Error, a.Duration.Microseconds())
	if err != nil {
		return false, err
	}
	e.Attempts, e.Lease = a.Attempt, ""
	return true, nil
}

func (t *tx) ListWebhookAttempts(ctx context.Context, eventID string) ([]store.WebhookAttempt, error) {
	what := fmt.Sprintf("webhook attempts of %q", eventID)
	rows, err := t.query(ctx, `SELECT event_id, attempt, attempted_at, url, response_status, error, duration_us
		FROM webhook_attempts WHERE event_id = ? ORDER BY attempt`, eventID)
	if err != nil {
		return nil, t.fail(what, err)
	}
	items, err := collect(rows, func(s scanner) (store.WebhookAttempt, error) {
		var a store.WebhookAttempt
		var us int64
		err := s.Scan(&a.EventID, &a.Attempt, timeCol{&a.AttemptedAt}, &a.URL, &a.ResponseStatus, &a.Error, &us)
		a.Duration = time.Duration(us) * time.Microsecond
		return a, err
	})
	if err != nil {
		return nil, t.fail(what, err)
	}
	return items, nil
}

func (t *tx) ReplayWebhookEvent(ctx context.Context, id string, at, giveUpAt time.Time) error {
	return t.updateOne(ctx, fmt.Sprintf("replay webhook event %q", id),
		`UPDATE webhook_events SET status = 'PENDING', next_attempt_at = ?, give_up_at = ?, lease = '', updated_at = ?
		 WHERE id = ?`, t.d.timeArg(at), t.d.timeArg(giveUpAt), t.d.timeArg(at), id)
}
