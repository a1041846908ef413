package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"paywallet/service/store"
)

// ---- the event log (store.WebhookTx, stage 1)

// logRow is a row of event_log that RecordEvents keeps for the
// transaction's next statement (PostgreSQL).
type logRow struct {
	part      int
	createdAt time.Time
	events    []store.NewEvent
}

// maxLogParts bounds the log rows of one PostgreSQL transaction: part is
// a smallint.
const maxLogParts = 32767

// RecordEvents keeps the events for the transaction's log row: one row
// for every call until a statement carries it (PostgreSQL, see
// withPending) or the transaction commits (flushEvents), so that an
// operation that records several events as it goes still writes one row,
// and no round trip of its own when a statement follows.
func (t *tx) RecordEvents(ctx context.Context, events []store.NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	what := fmt.Sprintf("record %d events", len(events))
	for i, e := range events {
		// The empty resource id names the catalog's head in
		// event_resources; a blank id or type would be caught only by
		// the catalog, too late to refuse.
		if e.ID == "" || e.Type == "" || e.ResourceID == "" || e.CreatedAt.IsZero() {
			return fmt.Errorf("store: %s: event %d has no id, type, resource or time", what, i)
		}
	}
	if n := len(t.pending); n > 0 {
		t.pending[n-1].events = append(t.pending[n-1].events, events...)
		return nil
	}
	if t.parts == maxLogParts {
		return fmt.Errorf("store: %s: more than %d event rows in one transaction", what, maxLogParts)
	}
	t.pending = append(t.pending, logRow{part: t.parts, createdAt: events[0].CreatedAt,
		events: append([]store.NewEvent(nil), events...)})
	t.parts++
	return nil
}

// logInsert is the INSERT of the pending log rows and its arguments.
func (t *tx) logInsert() (string, []any) {
	var q strings.Builder
	withPart := t.d.eventLog.withNext // PostgreSQL's rows share a pos per transaction
	if withPart {
		q.WriteString(`INSERT INTO event_log (part, created_at, events) VALUES `)
	} else {
		q.WriteString(`INSERT INTO event_log (created_at, events) VALUES `)
	}
	args := make([]any, 0, 3*len(t.pending))
	for i, r := range t.pending {
		if i > 0 {
			q.WriteString(", ")
		}
		if withPart {
			q.WriteString("(?, ?, ?)")
			args = append(args, r.part)
		} else {
			q.WriteString("(?, ?)")
		}
		args = append(args, t.d.timeArg(r.createdAt), encodeLog(r.events))
	}
	return q.String(), args
}

// withPending returns q with the pending log rows' INSERT as a
// data-modifying WITH in front of it, and args with the INSERT's
// arguments first, when rows are pending and q is a statement that can
// carry it (SELECT, INSERT, UPDATE, DELETE, or one that starts with WITH
// already: the INSERT joins its list). PostgreSQL runs a data-modifying
// WITH exactly once whether or not the statement reads it, and the
// statement's own result (rows, RowsAffected) stays its own.
func (t *tx) withPending(q string, args []any) (string, []any, bool) {
	if len(t.pending) == 0 || !t.d.eventLog.withNext {
		return q, args, false
	}
	body := strings.TrimLeft(q, " \t\r\n")
	word := body
	if i := strings.IndexAny(body, " \t\r\n("); i >= 0 {
		word = body[:i]
	}
	ins, insArgs := t.logInsert()
	cte := "logged_events AS (" + ins + ")"
	switch strings.ToUpper(word) {
	case "SELECT", "INSERT", "UPDATE", "DELETE":
		q = "WITH " + cte + " " + body
	case "WITH":
		rest := strings.TrimLeft(body[len(word):], " \t\r\n")
		head := "WITH "
		if len(rest) > len("RECURSIVE") && strings.EqualFold(rest[:len("RECURSIVE")], "RECURSIVE") &&
			strings.ContainsRune(" \t\r\n", rune(rest[len("RECURSIVE")])) {
			head = "WITH RECURSIVE "
			rest = strings.TrimLeft(rest[len("RECURSIVE"):], " \t\r\n")
		}
		q = head + cte + ", " + rest
	default:
		return q, args, false
	}
	return q, append(insArgs, args...), true
}

// flushEvents writes the log rows no statement carried, alone; Store.Tx
// calls it right before COMMIT.
func (t *tx) flushEvents(ctx context.Context) error {
	if len(t.pending) == 0 {
		return nil
	}
	q, args := t.logInsert()
	var err error
	if s := t.prepared(ctx, q); s != nil {
		// SQLite: one row, the same text every time.
		_, err = s.ExecContext(ctx, args...)
	} else {
		_, err = t.send(q).ExecContext(ctx, t.d.rebind(q), args...)
	}
	if err != nil {
		return t.fail("record events", err)
	}
	t.pending = nil
	return nil
}

// ---- the catalog (stage 2)

const eventCols = `seq, id, type, resource_id, sequence, body, created_at`

// eventColsE is eventCols qualified for a join with events AS e.
const eventColsE = `e.seq, e.id, e.type, e.resource_id, e.sequence, e.body, e.created_at`

func scanEvent(s scanner) (store.Event, error) {
	var e store.Event
	err := s.Scan(&e.Seq, &e.ID, &e.Type, &e.ResourceID, &e.Sequence, exactBytesCol{&e.Body}, timeCol{&e.CreatedAt})
	return e, err
}

// headResource is the resource id of the event_resources row that holds
// the catalog's head (migration 0017); no event has it.
const headResource = ""

// CatalogEvents runs in the worker's lazy transaction: READ COMMITTED on
// PostgreSQL, every statement with a snapshot of its own. It is safe
// there because the advisory lock (taken first, before any read) makes
// cataloguers take turns and nothing else writes the catalog's head and
// sequences, and because the rows it reads are final: below xmin no
// transaction is running, so the rows it deletes afterwards are exactly
// those it read (the prefix up to the last one).
//
// The order is the order of pos, the writing transaction's id on
// PostgreSQL (see migration 0017): for two transactions that wrote the
// same row, or where one saw the other's writes, that is the order they
// committed in, since a serializable transaction's id comes after its
// snapshot, and PostgreSQL aborts the later-snapshot one of two that
// write one row concurrently. Unrelated transactions may come in the
// order they started writing.
func (t *tx) CatalogEvents(ctx context.Context, limit int) (int, error) {
	const what = "catalog events"
	if limit < 1 {
		return 0, nil
	}
	if l := t.d.eventLog.lock; l != "" {
		var mine bool
		var isolation string
		if err := t.queryRow(ctx, l).Scan(&mine, &isolation); err != nil {
			return 0, t.fail(what, err)
		}
		if isolation != "read committed" {
			// A snapshot older than the turn (see eventLog.lock): refused
			// rather than numbered wrong.
			return 0, fmt.Errorf("store: %s: in a %s transaction; call it in a lazy one (Store.TxLazy)", what, isolation)
		}
		if !mine {
			return 0, nil
		}
	}
	type row struct {
		pos    int64
		part   int
		events []logEvent
	}
	// Every row holds an event at least: limit rows are enough.
	rows, err := t.query(ctx, t.d.eventLog.read, limit)
	if err != nil {
		return 0, t.fail(what, err)
	}
	// Whole rows, the first one even when it holds more than limit. The
	// query reads up to limit rows, but a row holds one or more events:
	// the rows after the last one taken are not read (each would be
	// copied and decoded, and read again by the next call).
	var taken []row
	n := 0
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var r row
			var b []byte
			if err := rows.Scan(&r.pos, &r.part, bytesCol{&b}); err != nil {
				return err
			}
			var err error
			if r.events, err = decodeLog(b); err != nil {
				return fmt.Errorf("event log row %d/%d: %w", r.pos, r.part, err)
			}
			if len(taken) > 0 && n+len(r.events) > limit {
				return nil
			}
			taken = append(taken, r)
			if n += len(r.events); n >= limit {
				return nil
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return 0, t.fail(what, err)
	}
	if len(taken) == 0 {
		return 0, nil
	}
	var evs []logEvent
	resources := []idRow{{headResource}}
	seen := map[string]bool{headResource: true}
	idList := make([]idRow, 0, n)
	for _, r := range taken {
		for _, e := range r.events {
			evs = append(evs, e)
			idList = append(idList, idRow{e.ID})
			if !seen[e.ResourceID] {
				seen[e.ResourceID] = true
				resources = append(resources, idRow{e.ResourceID})
			}
		}
	}
	// The resources' sequences so far, and the head.
	seqs := make(map[string]int64, len(resources))
	list, err := json.Marshal(resources)
	if err != nil {
		return 0, err
	}
	rs, err := t.query(ctx, `SELECT resource_id, sequence FROM event_resources
		WHERE resource_id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`)`, string(list))
	if err != nil {
		return 0, t.fail(what, err)
	}
	if _, err := collect(rs, func(s scanner) (struct{}, error) {
		var id string
		var seq int64
		err := s.Scan(&id, &seq)
		seqs[id] = seq
		return struct{}{}, err
	}); err != nil {
		return 0, t.fail(what, err)
	}
	// An id the catalog has already (the service never records one twice)
	// would fail the insert, and the log would be stuck behind it for
	// good: it is passed over instead.
	list, err = json.Marshal(idList)
	if err != nil {
		return 0, err
	}
	ds, err := t.query(ctx, `SELECT id FROM events WHERE id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`)`, string(list))
	if err != nil {
		return 0, t.fail(what, err)
	}
	dup := map[string]bool{}
	if _, err := collect(ds, func(s scanner) (struct{}, error) {
		var id string
		err := s.Scan(&id)
		dup[id] = true
		return struct{}{}, err
	}); err != nil {
		return 0, t.fail(what, err)
	}
	type catalogued struct {
		seq, sequence       int64
		id, typ, resourceID string
		body                []byte
		createdAt           any
	}
	out := make([]catalogued, 0, len(evs))
	for _, e := range evs {
		if dup[e.ID] {
			continue
		}
		dup[e.ID] = true
		seqs[headResource]++
		seqs[e.ResourceID]++
		out = append(out, catalogued{seq: seqs[headResource], id: e.ID, typ: e.Type, resourceID: e.ResourceID,
			sequence: seqs[e.ResourceID], body: blob(e.Body), createdAt: t.d.timeArg(logTime(e.CreatedAt))})
	}
	if len(out) > 0 {
		// Rows of arguments, the bodies as they are: a JSON list would
		// hex-encode every body and have the database parse it back, the
		// catalogue's largest cost per event.
		const chunk = 500 // 3,500 arguments a statement, within both databases' limits
		for start := 0; start < len(out); start += chunk {
			rows := out[start:min(start+chunk, len(out))]
			var q strings.Builder
			q.WriteString(`INSERT INTO events (` + eventCols + `) VALUES `)
			args := make([]any, 0, 7*len(rows))
			for i, r := range rows {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?, ?, ?, ?, ?)")
				args = append(args, r.seq, r.id, r.typ, r.resourceID, r.sequence, r.body, r.createdAt)
			}
			if _, err := t.exec(ctx, q.String(), args...); err != nil {
				return 0, t.fail(what, err)
			}
		}
		type sequenceRow struct {
			ID       string `json:"id"`
			Sequence int64  `json:"sequence"`
		}
		upd := make([]sequenceRow, 0, len(resources))
		for _, r := range resources {
			upd = append(upd, sequenceRow{r.ID, seqs[r.ID]})
		}
		list, err = json.Marshal(upd)
		if err != nil {
			return 0, err
		}
		// WHERE true: SQLite would read ON CONFLICT as a join's ON.
		if _, err := t.exec(ctx, `INSERT INTO event_resources (resource_id, sequence)
			SELECT v.id, v.sequence FROM `+t.d.jsonRows("id", "text", "sequence", "bigint")+` WHERE true
			ON CONFLICT (resource_id) DO UPDATE SET sequence = excluded.sequence`, string(list)); err != nil {
			return 0, t.fail(what, err)
		}
	}
	last := taken[len(taken)-1]
	if _, err := t.exec(ctx, t.d.eventLog.moved, last.pos, last.pos, last.part); err != nil {
		return 0, t.fail(what, err)
	}
	return len(evs), nil
}

func (t *tx) EventsHead(ctx context.Context) (int64, error) {
	var head int64
	err := t.queryRow(ctx, `SELECT sequence FROM event_resources WHERE resource_id = ?`, headResource).Scan(&head)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, t.fail("events head", err)
	}
	return head, nil
}

func (t *tx) GetEvent(ctx context.Context, id string) (*store.Event, error) {
	e, err := scanEvent(t.queryRow(ctx, `SELECT `+eventCols+` FROM events WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("event %q", id), err)
	}
	return &e, nil
}

// parseSeqCursor reads a cursor of a list keyed by an integer (nil: none).
// One that is not a decimal number names no row: ErrNotFound.
func parseSeqCursor(what, cursor string) (any, error) {
	if cursor == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: %s: cursor %q", store.ErrNotFound, what, cursor)
	}
	return n, nil
}

// in is the condition that col is one of values, with its arguments.
func in(col string, values []string) (string, []any) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return col + " IN (?" + strings.Repeat(", ?", len(values)-1) + ")", args
}

func (t *tx) ListEvents(ctx context.Context, f store.EventFilter) (store.Page[store.Event], error) {
	const what = "list events"
	cursor, err := parseSeqCursor(what, f.Cursor)
	if err != nil {
		return store.Page[store.Event]{}, err
	}
	var w filter
	if len(f.Types) > 0 {
		c, args := in("type", f.Types)
		w.conds, w.args = append(w.conds, c), append(w.args, args...)
	}
	w.eq("resource_id", f.ResourceID)
	w.createdBetween(t.d, f.From, f.To)
	w.desc = true
	return listPageBy(ctx, t, what, "events", eventCols, "seq", w, f.Limit, cursor,
		scanEvent, func(e *store.Event) string { return strconv.FormatInt(e.Seq, 10) })
}

func (t *tx) DeleteEventsBefore(ctx context.Context, before time.Time, limit int) (int, error) {
	const what = "delete events"
	if limit < 1 {
		return 0, nil
	}
	rows, err := t.query(ctx, `SELECT seq FROM events WHERE created_at < ? ORDER BY created_at, seq LIMIT ?`,
		t.d.timeArg(before), limit)
	if err != nil {
		return 0, t.fail(what, err)
	}
	seqs, err := collect(rows, func(s scanner) (seqRow, error) {
		var r seqRow
		return r, s.Scan(&r.Seq)
	})
	if err != nil {
		return 0, t.fail(what, err)
	}
	if len(seqs) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(seqs)
	if err != nil {
		return 0, err
	}
	// The event_resources rows stay: a resource's next event continues its
	// count.
	for _, table := range []string{"webhook_attempts", "webhook_retries"} {
		if _, err := t.exec(ctx, `DELETE FROM `+table+` WHERE event_seq IN (SELECT v.seq FROM `+t.d.jsonRows("seq", "bigint")+`)`,
			string(list)); err != nil {
			return 0, t.fail(what, err)
		}
	}
	if _, err := t.exec(ctx, `DELETE FROM events WHERE seq IN (SELECT v.seq FROM `+t.d.jsonRows("seq", "bigint")+`)`,
		string(list)); err != nil {
		return 0, t.fail(what, err)
	}
	return len(seqs), nil
}

// seqRow is a row of one Seq, for jsonRows.
type seqRow struct {
	Seq int64 `json:"seq"`
}

// idRow is a row of one id, for jsonRows.
type idRow struct {
	ID string `json:"id"`
}

// ---- endpoints (stage 3)

const endpointCols = `id, url, description, types, payload, is_default, enabled, disabled_at, disabled_reason,
	created_at, updated_at, cursor_seq, next_attempt_at, failing_since, failed_rounds, last_success_at, last_failure_at,
	last_error, lease, lease_until`

// endpointSelect reads endpoints with the number of their retries.
const endpointSelect = `SELECT ` + endpointCols + `,
	(SELECT count(*) FROM webhook_retries r WHERE r.endpoint_id = webhook_endpoints.id) FROM webhook_endpoints`

func scanEndpoint(s scanner) (store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	var types string
	err := s.Scan(&e.ID, &e.URL, &e.Description, &types, &e.Payload, &e.Default, &e.Enabled, timeCol{&e.DisabledAt},
		&e.DisabledReason, timeCol{&e.CreatedAt}, timeCol{&e.UpdatedAt}, &e.Cursor, timeCol{&e.NextAttemptAt},
		timeCol{&e.FailingSince}, &e.FailedRounds, timeCol{&e.LastSuccessAt}, timeCol{&e.LastFailureAt}, &e.LastError,
		&e.Lease, timeCol{&e.LeaseUntil}, &e.PendingRetries)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(types), &e.Types); err != nil {
		return e, fmt.Errorf("types of endpoint %q: %w", e.ID, err)
	}
	if len(e.Types) == 0 {
		e.Types = nil
	}
	return e, nil
}

// typesArg encodes an endpoint's types for its column: a JSON array,
// never null.
func typesArg(types []string) (string, error) {
	if len(types) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(types)
	return string(b), err
}

func (t *tx) CreateWebhookEndpoint(ctx context.Context, e *store.WebhookEndpoint) error {
	what := fmt.Sprintf("create webhook endpoint %q", e.ID)
	types, err := typesArg(e.Types)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return t.insert(ctx, what, `INSERT INTO webhook_endpoints (`+endpointCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.URL, e.Description, types, e.Payload, e.Default, e.Enabled, t.d.timeArg(e.DisabledAt), e.DisabledReason,
		t.d.timeArg(e.CreatedAt), t.d.timeArg(e.UpdatedAt), e.Cursor, t.d.timeArg(e.NextAttemptAt), t.d.timeArg(e.FailingSince),
		e.FailedRounds, t.d.timeArg(e.LastSuccessAt), t.d.timeArg(e.LastFailureAt), e.LastError, e.Lease, t.d.timeArg(e.LeaseUntil))
}

func (t *tx) GetWebhookEndpoint(ctx context.Context, id string) (*store.WebhookEndpoint, error) {
	e, err := scanEndpoint(t.queryRow(ctx, endpointSelect+` WHERE id = ?`, id))
	if err != nil {
		return nil, t.fail(fmt.Sprintf("webhook endpoint %q", id), err)
	}
	return &e, nil
}

func (t *tx) ListWebhookEndpoints(ctx context.Context) ([]store.WebhookEndpoint, error) {
	const what = "list webhook endpoints"
	rows, err := t.query(ctx, endpointSelect+` ORDER BY created_at, id`)
	if err != nil {
		return nil, t.fail(what, err)
	}
	es, err := collect(rows, scanEndpoint)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return es, nil
}

func (t *tx) UpdateWebhookEndpoint(ctx context.Context, e *store.WebhookEndpoint, prevUpdatedAt time.Time) (bool, error) {
	what := fmt.Sprintf("update webhook endpoint %q", e.ID)
	types, err := typesArg(e.Types)
	if err != nil {
		return false, fmt.Errorf("store: %s: %w", what, err)
	}
	return t.compareAndSet(ctx, what, "webhook_endpoints", e.ID, prevUpdatedAt,
		`UPDATE webhook_endpoints SET url = ?, description = ?, types = ?, payload = ?, enabled = ?, disabled_at = ?,
		 disabled_reason = ?, failing_since = ?, next_attempt_at = ?, failed_rounds = ?, updated_at = ? WHERE id = ? AND updated_at = ?`,
		e.URL, e.Description, types, e.Payload, e.Enabled, t.d.timeArg(e.DisabledAt), e.DisabledReason,
		t.d.timeArg(e.FailingSince), t.d.timeArg(e.NextAttemptAt), e.FailedRounds, t.d.timeArg(e.UpdatedAt), e.ID, t.d.timeArg(prevUpdatedAt))
}

func (t *tx) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	what := fmt.Sprintf("delete webhook endpoint %q", id)
	for _, q := range []string{
		`DELETE FROM webhook_attempts WHERE endpoint_id = ?`,
		`DELETE FROM webhook_retries WHERE endpoint_id = ?`,
	} {
		if _, err := t.exec(ctx, q, id); err != nil {
			return t.fail(what, err)
		}
	}
	return t.updateOne(ctx, what, `DELETE FROM webhook_endpoints WHERE id = ?`, id)
}

// ClaimWebhookEndpoints takes the endpoints whose last lease ended longest
// ago first (never leased: first of all), so that a small limit still
// comes round to every endpoint. lease_until stays after a lease ends for
// that.
func (t *tx) ClaimWebhookEndpoints(ctx context.Context, head int64, now, until time.Time, lease string, limit int) ([]store.WebhookEndpoint, error) {
	const what = "claim webhook endpoints"
	if limit < 1 {
		return []store.WebhookEndpoint{}, nil
	}
	if lease == "" || !until.After(now) {
		return nil, fmt.Errorf("store: %s: a lease token and an end after now are required", what)
	}
	nowArg := t.d.timeArg(now)
	rows, err := t.query(ctx, `UPDATE webhook_endpoints SET lease = ?, lease_until = ?
		WHERE id IN (SELECT w.id FROM webhook_endpoints w
			WHERE w.enabled AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= ?)
			AND (w.lease = '' OR w.lease_until IS NULL OR w.lease_until <= ?)
			AND (w.cursor_seq < ? OR EXISTS (SELECT 1 FROM webhook_retries r
				WHERE r.endpoint_id = w.id AND r.next_attempt_at <= ?))
			ORDER BY w.lease_until IS NOT NULL, w.lease_until, w.id LIMIT ?`+t.d.skipLocked+`)
		RETURNING id`, lease, t.d.timeArg(until), nowArg, nowArg, head, nowArg, limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	ids, err := collect(rows, func(s scanner) (idRow, error) {
		var r idRow
		return r, s.Scan(&r.ID)
	})
	if err != nil {
		return nil, t.fail(what, err)
	}
	if len(ids) == 0 {
		return []store.WebhookEndpoint{}, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err = t.query(ctx, endpointSelect+` WHERE id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`) ORDER BY id`, string(list))
	if err != nil {
		return nil, t.fail(what, err)
	}
	es, err := collect(rows, scanEndpoint)
	if err != nil {
		return nil, t.fail(what, err)
	}
	return es, nil
}

const retryCols = `r.endpoint_id, r.event_seq, r.resource_id, r.attempts, r.next_attempt_at, r.give_up_at`

func (t *tx) WebhookWork(ctx context.Context, e *store.WebhookEndpoint, head int64, now time.Time, limit int) (*store.WebhookWork, error) {
	what := fmt.Sprintf("webhook work of %q", e.ID)
	w := &store.WebhookWork{Events: []store.Event{}, Retries: []store.WebhookRetry{}, Waiting: map[string]bool{}, Through: head}
	if limit < 1 {
		w.Through = e.Cursor
		return w, nil
	}
	if e.Cursor < head {
		q := `SELECT ` + eventCols + ` FROM events WHERE seq > ? AND seq <= ?`
		args := []any{e.Cursor, head}
		if len(e.Types) > 0 {
			c, targs := in("type", e.Types)
			q += " AND " + c
			args = append(args, targs...)
		}
		rows, err := t.query(ctx, q+` ORDER BY seq LIMIT ?`, append(args, limit)...)
		if err != nil {
			return nil, t.fail(what, err)
		}
		if w.Events, err = collect(rows, scanEvent); err != nil {
			return nil, t.fail(what, err)
		}
		if len(w.Events) == limit {
			w.Through = w.Events[limit-1].Seq
		}
	} else {
		w.Through = e.Cursor
	}
	// A resource's retries go in order, and only once its oldest is due:
	// a later one of the resource may have been added with an earlier due
	// time (it waited behind the oldest).
	nowArg := t.d.timeArg(now)
	const oldest = `NOT EXISTS (SELECT 1 FROM webhook_retries p
		WHERE p.endpoint_id = o.endpoint_id AND p.resource_id = o.resource_id AND p.event_seq < o.event_seq)`
	rows, err := t.query(ctx, `SELECT `+retryCols+`, `+eventColsE+`
		FROM webhook_retries r JOIN events e ON e.seq = r.event_seq
		WHERE r.endpoint_id = ? AND r.resource_id IN (SELECT o.resource_id FROM webhook_retries o
			WHERE o.endpoint_id = ? AND o.next_attempt_at <= ? AND `+oldest+`)
		ORDER BY r.event_seq LIMIT ?`, e.ID, e.ID, nowArg, limit)
	if err != nil {
		return nil, t.fail(what, err)
	}
	w.Retries, err = collect(rows, func(s scanner) (store.WebhookRetry, error) {
		var r store.WebhookRetry
		var ev store.Event
		err := s.Scan(&r.EndpointID, &r.EventSeq, &r.ResourceID, &r.Attempts, timeCol{&r.NextAttemptAt}, timeCol{&r.GiveUpAt},
			&ev.Seq, &ev.ID, &ev.Type, &ev.ResourceID, &ev.Sequence, exactBytesCol{&ev.Body}, timeCol{&ev.CreatedAt})
		r.Event = &ev
		return r, err
	})
	if err != nil {
		return nil, t.fail(what, err)
	}
	if len(w.Events) == 0 {
		return w, nil
	}
	var resources []idRow
	seen := map[string]bool{}
	for _, ev := range w.Events {
		if !seen[ev.ResourceID] {
			seen[ev.ResourceID] = true
			resources = append(resources, idRow{ev.ResourceID})
		}
	}
	list, err := json.Marshal(resources)
	if err != nil {
		return nil, err
	}
	// Waiting too: a resource whose retries limit cut (the ones left are
	// after the last one returned, in Seq order); its new events must not
	// overtake them either.
	cut := int64(1<<63 - 1)
	if len(w.Retries) == limit {
		cut = w.Retries[limit-1].EventSeq
	}
	rows, err = t.query(ctx, `SELECT DISTINCT o.resource_id FROM webhook_retries o
		WHERE o.endpoint_id = ? AND ((o.next_attempt_at > ? AND `+oldest+`) OR o.event_seq > ?)
		AND o.resource_id IN (SELECT v.id FROM `+t.d.jsonRows("id", "text")+`)`, e.ID, nowArg, cut, string(list))
	if err != nil {
		return nil, t.fail(what, err)
	}
	waiting, err := collect(rows, func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	})
	if err != nil {
		return nil, t.fail(what, err)
	}
	for _, id := range waiting {
		w.Waiting[id] = true
	}
	return w, nil
}

// retryRow is a retry as jsonRows reads it.
type retryRow struct {
	EventSeq      int64  `json:"event_seq"`
	ResourceID    string `json:"resource_id"`
	Attempts      int    `json:"attempts"`
	NextAttemptAt any    `json:"next_attempt_at"`
	GiveUpAt      any    `json:"give_up_at"`
}

// FinishWebhookRound writes the endpoint first: the UPDATE that checks
// the lease also locks the row (PostgreSQL), so no claim can take the
// endpoint until this transaction ends, and a lost lease changes nothing.
// Disabling the endpoint also sets UpdatedAt (to DisabledAt): enabled is
// a setting, and a concurrent UpdateWebhookEndpoint read before must not
// turn it back on unawares.
func (t *tx) FinishWebhookRound(ctx context.Context, r *store.WebhookRound, lease string) (bool, error) {
	what := fmt.Sprintf("finish webhook round of %q", r.EndpointID)
	if lease == "" {
		return false, fmt.Errorf("store: %s: a lease token is required", what)
	}
	set := `cursor_seq = CASE WHEN cursor_seq < ? THEN ? ELSE cursor_seq END, next_attempt_at = ?, failing_since = ?,
		failed_rounds = ?, last_success_at = ?, last_failure_at = ?, last_error = ?, lease = ''`
	args := []any{r.Through, r.Through, t.d.timeArg(r.NextAttemptAt), t.d.timeArg(r.FailingSince), r.FailedRounds,
		t.d.timeArg(r.LastSuccessAt), t.d.timeArg(r.LastFailureAt), r.LastError}
	if r.Disable {
		if r.DisabledAt.IsZero() {
			return false, fmt.Errorf("store: %s: disabled without a time", what)
		}
		set += `, enabled = ?, disabled_at = ?, disabled_reason = ?, updated_at = ?`
		args = append(args, false, t.d.timeArg(r.DisabledAt), r.DisabledReason, t.d.timeArg(r.DisabledAt))
	}
	res, err := t.exec(ctx, `UPDATE webhook_endpoints SET `+set+` WHERE id = ? AND lease = ?`, append(args, r.EndpointID, lease)...)
	if err != nil {
		return false, t.fail(what, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return false, t.fail(what, err)
		}
		return false, nil
	}
	retries := func(rs []store.WebhookRetry) (string, error) {
		rows := make([]retryRow, len(rs))
		for i, x := range rs {
			rows[i] = retryRow{x.EventSeq, x.ResourceID, x.Attempts, t.d.timeArg(x.NextAttemptAt), t.d.timeArg(x.GiveUpAt)}
		}
		b, err := json.Marshal(rows)
		return string(b), err
	}
	retryRows := t.d.jsonRows("event_seq", "bigint", "resource_id", "text", "attempts", "integer",
		"next_attempt_at", "time", "give_up_at", "time")
	if len(r.NewRetries) > 0 {
		list, err := retries(r.NewRetries)
		if err != nil {
			return false, err
		}
		// WHERE true: SQLite would read ON CONFLICT as a join's ON.
		if _, err := t.exec(ctx, `INSERT INTO webhook_retries (endpoint_id, event_seq, resource_id, attempts, next_attempt_at, give_up_at)
			SELECT ?, v.event_seq, v.resource_id, v.attempts, v.next_attempt_at, v.give_up_at FROM `+retryRows+`
			WHERE EXISTS (SELECT 1 FROM events e WHERE e.seq = v.event_seq)
			ON CONFLICT DO NOTHING`, r.EndpointID, list); err != nil {
			return false, t.fail(what, err)
		}
	}
	if len(r.Retried) > 0 {
		list, err := retries(r.Retried)
		if err != nil {
			return false, err
		}
		if _, err := t.exec(ctx, `UPDATE webhook_retries SET attempts = v.attempts, next_attempt_at = v.next_attempt_at
			FROM `+retryRows+` WHERE webhook_retries.endpoint_id = ? AND webhook_retries.event_seq = v.event_seq`,
			list, r.EndpointID); err != nil {
			return false, t.fail(what, err)
		}
	}
	if len(r.Done) > 0 {
		seqs := make([]seqRow, len(r.Done))
		for i, s := range r.Done {
			seqs[i] = seqRow{s}
		}
		list, err := json.Marshal(seqs)
		if err != nil {
			return false, err
		}
		if _, err := t.exec(ctx, `DELETE FROM webhook_retries WHERE endpoint_id = ?
			AND event_seq IN (SELECT v.seq FROM `+t.d.jsonRows("seq", "bigint")+`)`, r.EndpointID, string(list)); err != nil {
			return false, t.fail(what, err)
		}
	}
	if len(r.Attempts) > 0 {
		type attemptRow struct {
			EventSeq       int64  `json:"event_seq"`
			EventID        string `json:"event_id"`
			Attempt        int    `json:"attempt"`
			AttemptedAt    any    `json:"attempted_at"`
			URL            string `json:"url"`
			ResponseStatus int    `json:"response_status"`
			Error          string `json:"error"`
			DurationUs     int64  `json:"duration_us"`
			Final          bool   `json:"final"`
		}
		rows := make([]attemptRow, len(r.Attempts))
		for i, a := range r.Attempts {
			if a.AttemptedAt.IsZero() || a.Attempt < 1 {
				return false, fmt.Errorf("store: %s: attempt %d of event %d has no time or number", what, i, a.EventSeq)
			}
			rows[i] = attemptRow{a.EventSeq, a.EventID, a.Attempt, t.d.timeArg(a.AttemptedAt), a.URL, a.ResponseStatus,
				a.Error, a.Duration.Microseconds(), a.Final}
		}
		list, err := json.Marshal(rows)
		if err != nil {
			return false, err
		}
		if _, err := t.exec(ctx, `INSERT INTO webhook_attempts (endpoint_id, event_seq, event_id, attempt, attempted_at, url,
			response_status, error, duration_us, final)
			SELECT ?, v.event_seq, v.event_id, v.attempt, v.attempted_at, v.url, v.response_status, v.error, v.duration_us, v.final
			FROM `+t.d.jsonRows("event_seq", "bigint", "event_id", "text", "attempt", "integer", "attempted_at", "time",
			"url", "text", "response_status", "integer", "error", "text", "duration_us", "bigint", "final", "boolean")+`
			ORDER BY v.attempted_at`, r.EndpointID, string(list)); err != nil {
			return false, t.fail(what, err)
		}
	}
	return true, nil
}

func (t *tx) ReleaseWebhookEndpoint(ctx context.Context, id, lease string) error {
	if lease == "" {
		return fmt.Errorf("store: release webhook endpoint %q: a lease token is required", id)
	}
	if _, err := t.exec(ctx, `UPDATE webhook_endpoints SET lease = '' WHERE id = ? AND lease = ?`, id, lease); err != nil {
		return t.fail(fmt.Sprintf("release webhook endpoint %q", id), err)
	}
	return nil
}

func (t *tx) ReplayWebhookEvents(ctx context.Context, endpointID string, from, to time.Time, types []string,
	at, giveUpAt time.Time, limit int) (int, bool, error) {
	what := fmt.Sprintf("replay events to %q", endpointID)
	var one int
	if err := t.queryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ?`, endpointID).Scan(&one); err != nil {
		return 0, false, t.fail(what, err)
	}
	if limit < 1 {
		return 0, false, nil
	}
	// Only events the endpoint's cursor has passed: a later one is sent
	// in its turn anyway, and made a retry now it would overtake the
	// earlier events of its resource still ahead of the cursor.
	q := `SELECT seq FROM events WHERE created_at >= ? AND created_at < ?
		AND seq <= (SELECT cursor_seq FROM webhook_endpoints WHERE id = ?)`
	args := []any{t.d.timeArg(from), t.d.timeArg(to), endpointID}
	if len(types) > 0 {
		c, targs := in("type", types)
		q += " AND " + c
		args = append(args, targs...)
	}
	rows, err := t.query(ctx, q+` ORDER BY created_at, seq LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return 0, false, t.fail(what, err)
	}
	seqs, err := collect(rows, func(s scanner) (seqRow, error) {
		var r seqRow
		return r, s.Scan(&r.Seq)
	})
	if err != nil {
		return 0, false, t.fail(what, err)
	}
	more := len(seqs) > limit
	if more {
		seqs = seqs[:limit]
	}
	if len(seqs) == 0 {
		return 0, false, nil
	}
	list, err := json.Marshal(seqs)
	if err != nil {
		return 0, false, err
	}
	res, err := t.exec(ctx, `INSERT INTO webhook_retries (endpoint_id, event_seq, resource_id, attempts, next_attempt_at, give_up_at)
		SELECT ?, e.seq, e.resource_id, 0, ?, ? FROM events e
		WHERE e.seq IN (SELECT v.seq FROM `+t.d.jsonRows("seq", "bigint")+`)
		ON CONFLICT DO NOTHING`, endpointID, t.d.timeArg(at), t.d.timeArg(giveUpAt), string(list))
	if err != nil {
		return 0, false, t.fail(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, false, t.fail(what, err)
	}
	return int(n), more, nil
}

const attemptCols = `id, endpoint_id, event_seq, event_id, attempt, attempted_at, url, response_status, error, duration_us, final`

// keyedAttempt is an attempt with its row's id, the list's cursor.
type keyedAttempt struct {
	id int64
	a  store.WebhookAttempt
}

func (t *tx) ListWebhookAttempts(ctx context.Context, f store.WebhookAttemptFilter) (store.Page[store.WebhookAttempt], error) {
	const what = "list webhook attempts"
	cursor, err := parseSeqCursor(what, f.Cursor)
	if err != nil {
		return store.Page[store.WebhookAttempt]{}, err
	}
	var w filter
	w.eq("endpoint_id", f.EndpointID)
	if f.EventID != "" {
		// By the event's Seq, which the attempts' index has.
		w.conds = append(w.conds, "event_seq IN (SELECT seq FROM events WHERE id = ?)")
		w.args = append(w.args, f.EventID)
	}
	if f.Failed {
		w.conds = append(w.conds, "error <> ''")
	}
	w.desc = true
	p, err := listPageBy(ctx, t, what, "webhook_attempts", attemptCols, "id", w, f.Limit, cursor,
		func(s scanner) (keyedAttempt, error) {
			var k keyedAttempt
			var us int64
			err := s.Scan(&k.id, &k.a.EndpointID, &k.a.EventSeq, &k.a.EventID, &k.a.Attempt, timeCol{&k.a.AttemptedAt},
				&k.a.URL, &k.a.ResponseStatus, &k.a.Error, &us, &k.a.Final)
			k.a.Duration = time.Duration(us) * time.Microsecond
			return k, err
		}, func(k *keyedAttempt) string { return strconv.FormatInt(k.id, 10) })
	if err != nil {
		return store.Page[store.WebhookAttempt]{}, err
	}
	out := store.Page[store.WebhookAttempt]{Items: make([]store.WebhookAttempt, len(p.Items)), HasMore: p.HasMore,
		NextCursor: p.NextCursor, TotalCount: p.TotalCount}
	for i, k := range p.Items {
		out.Items[i] = k.a
	}
	return out, nil
}
