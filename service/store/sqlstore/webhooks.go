package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
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

// scanLeasedWebhookEvent scans webhookCols followed by lease_until, as a
// claim returns them.
func scanLeasedWebhookEvent(s scanner) (store.WebhookEvent, error) {
	var e store.WebhookEvent
	err := s.Scan(&e.ID, &e.Type, &e.ResourceID, &e.Sequence, exactBytesCol{&e.Body}, &e.Status, &e.Attempts,
		timeCol{&e.NextAttemptAt}, timeCol{&e.GiveUpAt}, &e.Lease, &e.LastStatus, &e.LastError,
		timeCol{&e.DeliveredAt}, timeCol{&e.CreatedAt}, timeCol{&e.UpdatedAt}, timeCol{&e.LeaseUntil})
	return e, err
}

// unleased is the condition, on the events table aliased as alias, that
// no lease holds the event at the time of the statement's next parameter.
// A claim records its lease's end in lease_until and leaves
// next_attempt_at alone: an update of unindexed columns only (see
// migration 0014). A lease taken before lease_until existed left it NULL
// and moved next_attempt_at to the lease's end instead, which the due
// condition already checks.
func unleased(alias string) string {
	return "(" + alias + ".lease = '' OR " + alias + ".lease_until IS NULL OR " + alias + ".lease_until <= ?)"
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
	if e.Sequence < 0 {
		return fmt.Errorf("store: %s: sequence %d is negative", what, e.Sequence)
	}
	// With Sequence 0 the INSERT computes the next sequence itself (one
	// seek on the (resource_id, sequence) index): one statement per event
	// instead of a read and a write.
	seq := any(e.Sequence)
	if e.Sequence == 0 {
		seq = nil
	}
	var got int64
	err := t.queryRow(ctx,
		`INSERT INTO webhook_events (`+webhookCols+`) VALUES (?, ?, ?,
			COALESCE(CAST(? AS BIGINT), COALESCE((SELECT p.sequence FROM webhook_events p WHERE p.resource_id = ?
				ORDER BY p.sequence DESC LIMIT 1), 0) + 1),
			?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING sequence`,
		e.ID, e.Type, e.ResourceID, seq, e.ResourceID, blob(e.Body), e.Status, e.Attempts, t.d.timeArg(e.NextAttemptAt),
		t.d.timeArg(e.GiveUpAt), e.Lease, e.LastStatus, e.LastError, t.d.timeArg(e.DeliveredAt),
		t.d.timeArg(e.CreatedAt), t.d.timeArg(e.UpdatedAt)).Scan(&got)
	if err == nil {
		e.Sequence = got
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return t.fail(what, err)
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
	return fmt.Errorf("store: %s: a sequence of %q was taken by a concurrent transaction", what, e.ResourceID)
}

func (t *tx) CreateWebhookEvents(ctx context.Context, es []*store.WebhookEvent) error {
	// One INSERT of several rows when every event asks for its resource's
	// next sequence and no two share a resource: each row's sequence
	// subquery then reads only rows recorded before the statement,
	// whatever order the database inserts the rows in. Otherwise (rare:
	// a transaction that records two events of one resource) one by one.
	seen := make(map[string]bool, len(es))
	batch := len(es) > 1
	for _, e := range es {
		if e.Sequence != 0 || seen[e.ResourceID] {
			batch = false
			break
		}
		seen[e.ResourceID] = true
	}
	if !batch {
		for _, e := range es {
			if err := t.CreateWebhookEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}
	const row = `(?, ?, ?, COALESCE((SELECT p.sequence FROM webhook_events p WHERE p.resource_id = ?
		ORDER BY p.sequence DESC LIMIT 1), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	var q strings.Builder
	q.WriteString(`INSERT INTO webhook_events (` + webhookCols + `) VALUES `)
	args := make([]any, 0, 16*len(es))
	for i, e := range es {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(row)
		args = append(args, e.ID, e.Type, e.ResourceID, e.ResourceID, blob(e.Body), e.Status, e.Attempts,
			t.d.timeArg(e.NextAttemptAt), t.d.timeArg(e.GiveUpAt), e.Lease, e.LastStatus, e.LastError,
			t.d.timeArg(e.DeliveredAt), t.d.timeArg(e.CreatedAt), t.d.timeArg(e.UpdatedAt))
	}
	q.WriteString(` ON CONFLICT DO NOTHING RETURNING id, sequence`)
	what := fmt.Sprintf("create %d webhook events", len(es))
	rows, err := t.query(ctx, q.String(), args...)
	if err != nil {
		return t.fail(what, err)
	}
	type created struct {
		id  string
		seq int64
	}
	got, err := collect(rows, func(s scanner) (created, error) {
		var c created
		return c, s.Scan(&c.id, &c.seq)
	})
	if err != nil {
		return t.fail(what, err)
	}
	seqs := make(map[string]int64, len(got))
	for _, c := range got {
		seqs[c.id] = c.seq
	}
	for _, e := range es {
		if seq, ok := seqs[e.ID]; ok {
			e.Sequence = seq
			continue
		}
		// Not inserted: a taken id, or a sequence a concurrent
		// transaction took (as in CreateWebhookEvent).
		var one int
		switch err := t.queryRow(ctx, `SELECT 1 FROM webhook_events WHERE id = ?`, e.ID).Scan(&one); {
		case err == nil:
			return fmt.Errorf("%w: %s: the id %q is taken", store.ErrConflict, what, e.ID)
		case !errors.Is(err, sql.ErrNoRows):
			return t.fail(what, err)
		}
		t.lostRace = true
		return fmt.Errorf("store: %s: a sequence of %q was taken by a concurrent transaction", what, e.ResourceID)
	}
	return nil
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
	rows, err := t.query(ctx, `UPDATE webhook_events SET lease = ?, lease_until = ?, updated_at = ?
		WHERE id IN (SELECT e.id FROM webhook_events e
			WHERE e.status = 'PENDING' AND e.next_attempt_at <= ? AND `+unleased("e")+`
			AND NOT EXISTS (SELECT 1 FROM webhook_events p
				WHERE p.resource_id = e.resource_id AND p.status = 'PENDING' AND p.sequence < e.sequence)
			ORDER BY e.next_attempt_at, e.id LIMIT ?`+t.d.skipLocked+`)
		RETURNING `+webhookCols+`, lease_until`, lease, t.d.timeArg(until), t.d.timeArg(now), t.d.timeArg(now), t.d.timeArg(now), limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	items, err := collect(rows, scanLeasedWebhookEvent)
	if err != nil {
		return nil, t.fail(what, err)
	}
	// RETURNING has no order; the claim's was oldest due first, and ids
	// (UUIDv7) are in the order events were recorded.
	slices.SortFunc(items, func(a, b store.WebhookEvent) int { return strings.Compare(a.ID, b.ID) })
	return items, nil
}

func (t *tx) ClaimWebhookFollowers(ctx context.Context, heads []store.WebhookEvent, now, until time.Time, lease string, limit int) ([]store.WebhookEvent, error) {
	const what = "claim webhook followers"
	if limit < 1 || len(heads) == 0 {
		return []store.WebhookEvent{}, nil
	}
	if lease == "" || !until.After(now) {
		return nil, fmt.Errorf("store: %s: a lease token and an end after now are required", what)
	}
	resources := make([]idRow, 0, len(heads))
	for _, h := range heads {
		if h.Lease != lease {
			return nil, fmt.Errorf("store: %s: head %q is not held by the lease", what, h.ID)
		}
		resources = append(resources, idRow{h.ResourceID})
	}
	list, err := json.Marshal(resources)
	if err != nil {
		return nil, err
	}
	// The heads themselves are leased (lease_until is after now), so the
	// unleased condition leaves them out. The partial index of pending events
	// per resource serves both the filter and the order. The limit keeps
	// a prefix of each resource's run, in sequence order.
	rows, err := t.query(ctx, `UPDATE webhook_events SET lease = ?, lease_until = ?, updated_at = ?
		WHERE id IN (SELECT e.id FROM webhook_events e
			WHERE e.status = 'PENDING' AND e.next_attempt_at <= ? AND `+unleased("e")+`
			AND e.resource_id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`)
			ORDER BY e.resource_id, e.sequence LIMIT ?)
		RETURNING `+webhookCols+`, lease_until`, lease, t.d.timeArg(until), t.d.timeArg(now), t.d.timeArg(now), t.d.timeArg(now), string(list), limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	items, err := collect(rows, scanLeasedWebhookEvent)
	if err != nil {
		return nil, t.fail(what, err)
	}
	slices.SortFunc(items, func(a, b store.WebhookEvent) int {
		if c := strings.Compare(a.ResourceID, b.ResourceID); c != 0 {
			return c
		}
		return cmp.Compare(a.Sequence, b.Sequence)
	})
	return items, nil
}

// idRow is a row of one id, for jsonRows.
type idRow struct {
	ID string `json:"id"`
}

func (t *tx) ReleaseWebhookEvents(ctx context.Context, ids []string, lease string, at time.Time) error {
	const what = "release webhook events"
	if len(ids) == 0 {
		return nil
	}
	if lease == "" {
		return fmt.Errorf("store: %s: a lease token is required", what)
	}
	rows := make([]idRow, len(ids))
	for i, id := range ids {
		rows[i] = idRow{id}
	}
	list, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE webhook_events SET lease = '', lease_until = NULL, next_attempt_at = ?, updated_at = ?
		WHERE lease = ? AND status = 'PENDING' AND id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`)`,
		t.d.timeArg(at), t.d.timeArg(at), lease, string(list))
	if err != nil {
		return t.fail(what, err)
	}
	return nil
}

func (t *tx) FinishWebhookAttempt(ctx context.Context, e *store.WebhookEvent, a *store.WebhookAttempt, lease string) (bool, error) {
	what := fmt.Sprintf("finish webhook attempt %d of %q", a.Attempt, e.ID)
	if a.EventID != e.ID || a.Attempt < 1 || a.AttemptedAt.IsZero() {
		return false, fmt.Errorf("store: %s: the attempt does not belong to the event or has no time", what)
	}
	if a.Attempt > 1 {
		if _, err := t.exec(ctx, `INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, response_status, error, duration_us)
			SELECT id, last_attempt, last_attempt_at, last_url, last_response_status, last_attempt_error, last_duration_us FROM webhook_events
			WHERE id = ? AND lease = ? AND lease <> '' AND attempts = ? AND last_attempt > 0
			ON CONFLICT DO NOTHING`, e.ID, lease, a.Attempt-1); err != nil {
			return false, t.fail(what, err)
		}
	}
	won, err := t.compareAndSet(ctx, what, "webhook_events", e.ID, e.UpdatedAt,
		`UPDATE webhook_events SET status = ?, attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ?,
		 delivered_at = ?, updated_at = ?, lease = '', lease_until = NULL,
		 last_attempt = ?, last_attempt_at = ?, last_url = ?, last_response_status = ?, last_attempt_error = ?, last_duration_us = ?
		 WHERE id = ? AND lease = ? AND lease <> '' AND attempts = ?`,
		e.Status, a.Attempt, t.d.timeArg(e.NextAttemptAt), a.ResponseStatus, a.Error, t.d.timeArg(e.DeliveredAt),
		t.d.timeArg(e.UpdatedAt), a.Attempt, t.d.timeArg(a.AttemptedAt), a.URL, a.ResponseStatus, a.Error, a.Duration.Microseconds(),
		e.ID, lease, a.Attempt-1)
	if err != nil || !won {
		return false, err
	}
	e.Attempts, e.Lease, e.LastStatus, e.LastError = a.Attempt, "", a.ResponseStatus, a.Error
	return true, nil
}

func (t *tx) FinishWebhookAttempts(ctx context.Context, outcomes []store.WebhookOutcome, lease string) ([]string, error) {
	const what = "finish webhook attempts"
	if len(outcomes) == 0 {
		return nil, nil
	}
	if lease == "" {
		return nil, fmt.Errorf("store: %s: a lease token is required", what)
	}
	type finishRow struct {
		ID             string `json:"id"`
		Status         string `json:"status"`
		Attempt        int    `json:"attempt"`
		NextAttemptAt  any    `json:"next_attempt_at"`
		DeliveredAt    any    `json:"delivered_at"`
		UpdatedAt      any    `json:"updated_at"`
		AttemptedAt    any    `json:"attempted_at"`
		URL            string `json:"url"`
		ResponseStatus int    `json:"response_status"`
		Error          string `json:"error"`
		DurationUs     int64  `json:"duration_us"`
	}
	finish := make([]finishRow, 0, len(outcomes))
	retried := false
	for i := range outcomes {
		e, a := &outcomes[i].Event, &outcomes[i].Attempt
		if a.EventID != e.ID || a.Attempt < 1 || a.AttemptedAt.IsZero() {
			return nil, fmt.Errorf("store: %s: attempt %d of %q does not belong to its event or has no time", what, a.Attempt, e.ID)
		}
		retried = retried || a.Attempt > 1
		finish = append(finish, finishRow{ID: e.ID, Status: e.Status, Attempt: a.Attempt,
			NextAttemptAt: t.d.timeArg(e.NextAttemptAt), DeliveredAt: t.d.timeArg(e.DeliveredAt), UpdatedAt: t.d.timeArg(e.UpdatedAt),
			AttemptedAt: t.d.timeArg(a.AttemptedAt), URL: a.URL, ResponseStatus: a.ResponseStatus, Error: a.Error,
			DurationUs: a.Duration.Microseconds()})
	}
	list, err := json.Marshal(finish)
	if err != nil {
		return nil, err
	}
	rows := t.d.jsonRows("id", "text", "status", "text", "attempt", "integer", "next_attempt_at", "time",
		"delivered_at", "time", "updated_at", "time", "attempted_at", "time", "url", "text",
		"response_status", "integer", "error", "text", "duration_us", "bigint")
	// The event's row holds its last attempt; a retry's finish first
	// moves the attempt before it into webhook_attempts (migration 0015).
	// A first attempt, nearly every one, writes nothing but its event.
	if retried {
		if _, err := t.exec(ctx, `INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, response_status, error, duration_us)
			SELECT e.id, e.last_attempt, e.last_attempt_at, e.last_url, e.last_response_status, e.last_attempt_error, e.last_duration_us
			FROM webhook_events e JOIN `+rows+` ON e.id = v.id
			WHERE e.lease = ? AND e.lease <> '' AND e.attempts = v.attempt - 1 AND e.last_attempt > 0
			ON CONFLICT DO NOTHING`, string(list), lease); err != nil {
			return nil, t.fail(what, err)
		}
	}
	// One statement for every event of the round whatever their number:
	// each statement costs a round trip (and, unprepared, a parse), and a
	// round finishes dozens.
	changed, err := t.query(ctx, `UPDATE webhook_events SET status = v.status, attempts = v.attempt,
		next_attempt_at = v.next_attempt_at, last_status = v.response_status, last_error = v.error,
		delivered_at = v.delivered_at, updated_at = v.updated_at, lease = '', lease_until = NULL,
		last_attempt = v.attempt, last_attempt_at = v.attempted_at, last_url = v.url,
		last_response_status = v.response_status, last_attempt_error = v.error, last_duration_us = v.duration_us
		FROM `+rows+`
		WHERE webhook_events.id = v.id AND webhook_events.lease = ? AND webhook_events.lease <> ''
		AND webhook_events.attempts = v.attempt - 1
		RETURNING webhook_events.id`, string(list), lease)
	if err != nil {
		return nil, t.fail(what, err)
	}
	ids, err := collect(changed, func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	})
	if err != nil {
		return nil, t.fail(what, err)
	}
	won := make(map[string]bool, len(ids))
	for _, id := range ids {
		won[id] = true
	}
	var lost []string
	for i := range outcomes {
		e, a := &outcomes[i].Event, &outcomes[i].Attempt
		if !won[a.EventID] {
			lost = append(lost, a.EventID)
			continue
		}
		e.Attempts, e.Lease, e.LastStatus, e.LastError = a.Attempt, "", a.ResponseStatus, a.Error
	}
	return lost, nil
}

func (t *tx) ListWebhookAttempts(ctx context.Context, eventID string) ([]store.WebhookAttempt, error) {
	what := fmt.Sprintf("webhook attempts of %q", eventID)
	// The attempts in webhook_attempts, and the one the event's row keeps
	// (unless it is in the table already: a finish that lost its lease
	// moved it, and the winner's finish records the same attempt, once).
	rows, err := t.query(ctx, `SELECT event_id, attempt, attempted_at, url, response_status, error, duration_us
		FROM webhook_attempts WHERE event_id = ?
		UNION ALL
		SELECT e.id, e.last_attempt, e.last_attempt_at, e.last_url, e.last_response_status, e.last_attempt_error, e.last_duration_us
		FROM webhook_events e WHERE e.id = ? AND e.last_attempt > 0
		AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.event_id = e.id AND a.attempt = e.last_attempt)
		ORDER BY 2`, eventID, eventID)
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
		`UPDATE webhook_events SET status = 'PENDING', next_attempt_at = ?, give_up_at = ?, lease = '', lease_until = NULL, updated_at = ?
		 WHERE id = ?`, t.d.timeArg(at), t.d.timeArg(giveUpAt), t.d.timeArg(at), id)
}
