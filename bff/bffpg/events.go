package bffpg

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"paywallet/bff"
)

// Events is a bff.EventLog shared by the BFF instances on one database:
// the service's webhooks are recorded in the table bff_webhook_events
//
//	key         text PRIMARY KEY  -- the webhook id: recorded once
//	type        text NOT NULL
//	customer_id text NOT NULL     -- "" for none
//	body        bytea NOT NULL    -- the envelope, compact JSON
//	received_at timestamptz NOT NULL
//	expires_at  timestamptz NOT NULL  -- received_at + bff.WebhookSeenFor
//
// and each new one is announced with NOTIFY on the channel
// bff_webhook_events, whose payload is the webhook id only. Every
// instance LISTENs on a connection of its own and reads the event by its
// id. The row is the one record of the webhook either way (it is also
// what makes a repeated delivery a repeat), and NOTIFY payloads are
// limited to 8000 bytes, which a webhook body may exceed; an id always
// fits, and one code path serves every size. The INSERT and the NOTIFY
// are one statement, so a notification is sent exactly when the row is
// committed, and only for a new row.
//
// A listener that loses its connection reconnects (backing off up to
// five seconds) and then reads the events received since it lost it, less
// a margin; the BFF drops the ones it already passed on.
type Events struct{ s *Store }

var _ bff.EventLog = (*Events)(nil)

// Events returns the event log of s.
func (s *Store) Events() *Events { return &Events{s} }

const eventsChannel = "bff_webhook_events"

// Add implements bff.EventLog. An id recorded longer ago than
// bff.WebhookSeenFor (not yet swept) counts as new.
func (e *Events) Add(ctx context.Context, ev bff.Event) (bool, error) {
	ctx, cancel := e.s.bound(ctx)
	defer cancel()
	arg := e.s.clock()
	rows, err := e.s.pool.Query(ctx, `
		WITH ins AS (
			INSERT INTO bff_webhook_events (key, type, customer_id, body, received_at, expires_at)
			VALUES ($1, $2, $3, $4, coalesce($5::timestamptz, now()),
				coalesce($5::timestamptz, now()) + $6::bigint * interval '1 microsecond')
			ON CONFLICT (key) DO UPDATE SET type = EXCLUDED.type, customer_id = EXCLUDED.customer_id,
				body = EXCLUDED.body, received_at = EXCLUDED.received_at, expires_at = EXCLUDED.expires_at
			WHERE bff_webhook_events.expires_at <= coalesce($5::timestamptz, now())
			RETURNING key)
		SELECT pg_notify('`+eventsChannel+`', key) FROM ins`,
		ev.ID, ev.Type, ev.CustomerID, ev.Body, arg, micros(bff.WebhookSeenFor))
	if err != nil {
		return false, e.s.fail(ctx, "add event", err)
	}
	added := false
	for rows.Next() {
		added = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, e.s.fail(ctx, "add event", err)
	}
	return added, nil
}

// Subscribe implements bff.EventLog: a listener goroutine with a
// connection of its own, until stop is called or the Store is closed.
func (e *Events) Subscribe(deliver func(bff.Event)) (stop func()) {
	ctx, cancel := context.WithCancel(e.s.bg)
	done := make(chan struct{})
	e.s.listeners.Add(1)
	ready := make(chan struct{})
	go func() {
		defer e.s.listeners.Done()
		defer close(done)
		e.listen(ctx, deliver, ready)
	}()
	// Events added after Subscribe returns must reach deliver: wait (a
	// little) until the first LISTEN is in place.
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
	}
	return func() {
		cancel()
		<-done
	}
}

// listenCheck is how long the listener waits for a notification before it
// checks that the server still answers (within listenPing); a silent
// server costs at most their sum before the listener reconnects and
// catches up from the last moment the server was heard.
const (
	listenCheck = 10 * time.Second
	listenPing  = 3 * time.Second
)

// catchUpMargin is how far before a lost connection the listener looks
// again for events, against the instants of commit and of loss not lining
// up.
const catchUpMargin = 5 * time.Second

func (e *Events) listen(ctx context.Context, deliver func(bff.Event), ready chan struct{}) {
	var lost time.Time // when the last connection was lost; zero at first
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := e.listenOnce(ctx, deliver, &lost, ready)
		if ctx.Err() != nil {
			return
		}
		if lost.IsZero() {
			lost = time.Now()
		}
		e.s.log.Warn("bffpg: event listener: connection lost; reconnecting", slog.Any("err", err), slog.Duration("in", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listenOnce holds one connection: LISTEN, read what came since lost (when
// reconnecting), then deliver each notified event until the connection
// fails.
func (e *Events) listenOnce(ctx context.Context, deliver func(bff.Event), lost *time.Time, ready chan struct{}) error {
	// Setting up (connecting, LISTEN, catching up) is bounded like any
	// statement: the server it reaches may be one that stopped answering.
	sctx, cancel := context.WithTimeout(ctx, statementBound)
	defer cancel()
	pc, err := e.s.pool.Acquire(sctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool for good: it waits on notifications
	// and is closed, not returned, when done.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(sctx, `LISTEN `+eventsChannel); err != nil {
		return err
	}
	select {
	case <-ready:
	default:
		close(ready)
	}
	if !lost.IsZero() {
		since := time.Since(*lost) + catchUpMargin
		rows, err := conn.Query(sctx, `
			SELECT key, type, customer_id, body FROM bff_webhook_events
			WHERE received_at >= coalesce($1::timestamptz, now()) - $2::bigint * interval '1 microsecond'
			ORDER BY received_at`, e.s.clock(), micros(since))
		if err != nil {
			return err
		}
		evs, err := pgx.CollectRows(rows, scanEvent)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			deliver(ev)
		}
		*lost = time.Time{}
	}
	heard := time.Now() // when the server last answered
	for {
		wctx, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil && ctx.Err() == nil && pgconn.Timeout(err) {
			// Quiet for listenCheck: make sure the server is still
			// there. A primary cut off by a failover keeps the socket
			// open and never says a word; its successor's
			// notifications would never reach this connection.
			pctx, cancel := context.WithTimeout(ctx, listenPing)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				heard = time.Now()
				continue
			}
		}
		if err != nil {
			*lost = heard
			return err
		}
		heard = time.Now()
		rctx, cancel := context.WithTimeout(ctx, statementBound)
		ev, err := readEvent(rctx, conn, n.Payload)
		cancel()
		if errors.Is(err, pgx.ErrNoRows) {
			continue // swept meanwhile
		}
		if err != nil {
			*lost = heard
			return err
		}
		deliver(ev)
	}
}

func readEvent(ctx context.Context, conn *pgx.Conn, key string) (bff.Event, error) {
	rows, err := conn.Query(ctx, `SELECT key, type, customer_id, body FROM bff_webhook_events WHERE key = $1`, key)
	if err != nil {
		return bff.Event{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanEvent)
}

func scanEvent(row pgx.CollectableRow) (bff.Event, error) {
	var ev bff.Event
	err := row.Scan(&ev.ID, &ev.Type, &ev.CustomerID, &ev.Body)
	return ev, err
}
