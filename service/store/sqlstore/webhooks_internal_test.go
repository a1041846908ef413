package sqlstore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// bothStores opens a fresh database of each kind.
var bothStores = []struct {
	name string
	open func(t *testing.T) (*DB, error)
}{
	{"sqlite", func(t *testing.T) (*DB, error) {
		return OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "webhooks.db"))
	}},
	{"postgres", func(t *testing.T) (*DB, error) {
		return OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
	}},
}

// eventTime is when the fixtures' events are recorded.
var eventTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// eventFixture opens a database with open (closed at the test's end) and
// returns a pending event of resource, not yet stored, and run, which runs
// fn in a transaction and fails the test on an error.
func eventFixture(t *testing.T, open func(*testing.T) (*DB, error), resource string) (*store.WebhookEvent, func(fn func(x *tx) error)) {
	t.Helper()
	db, err := open(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &store.WebhookEvent{ID: ids.New("Webhook"), Type: "OUTGOING_PAYMENT.PENDING",
		ResourceID: resource, Body: []byte(`{}`), Status: store.WebhookPending,
		NextAttemptAt: eventTime, GiveUpAt: eventTime.Add(72 * time.Hour), CreatedAt: eventTime, UpdatedAt: eventTime}
	run := func(fn func(x *tx) error) {
		t.Helper()
		if err := db.Tx(t.Context(), func(s store.Tx) error { return fn(s.(*tx)) }); err != nil {
			t.Fatal(err)
		}
	}
	return e, run
}

// TestAttemptsRecordedBeforeMigration0015: an event whose attempts were
// all written to webhook_attempts before its row kept its last attempt
// (last_attempt_at NULL) lists them once, and its next attempt adds one
// without moving or repeating the earlier ones.
func TestAttemptsRecordedBeforeMigration0015(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx, now := t.Context(), eventTime
			e, run := eventFixture(t, tc.open, "Transaction:old")
			list := func() []store.WebhookAttempt {
				t.Helper()
				var got []store.WebhookAttempt
				run(func(x *tx) (err error) { got, err = x.ListWebhookAttempts(ctx, e.ID); return err })
				return got
			}
			// As the service wrote a failed first attempt before 0015.
			run(func(x *tx) error {
				if err := x.CreateWebhookEvent(ctx, e); err != nil {
					return err
				}
				if _, err := x.exec(ctx, `INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, response_status, error, duration_us)
					VALUES (?, 1, ?, 'https://old.example.com/hook', 500, 'HTTP 500', 1000)`, e.ID, x.d.timeArg(now)); err != nil {
					return err
				}
				_, err := x.exec(ctx, `UPDATE webhook_events SET attempts = 1, last_status = 500, last_error = 'HTTP 500' WHERE id = ?`, e.ID)
				return err
			})
			if got := list(); len(got) != 1 || got[0].Attempt != 1 || got[0].ResponseStatus != 500 || got[0].URL != "https://old.example.com/hook" {
				t.Fatalf("before the next attempt: %+v", got)
			}
			later := now.Add(time.Hour)
			var claimed []store.WebhookEvent
			run(func(x *tx) (err error) {
				claimed, err = x.ClaimWebhookEvents(ctx, later, later.Add(time.Minute), "lease-1", 1)
				return err
			})
			if len(claimed) != 1 {
				t.Fatalf("claimed %+v", claimed)
			}
			c := claimed[0]
			c.Status, c.DeliveredAt, c.UpdatedAt = store.WebhookDelivered, later, later
			run(func(x *tx) error {
				lost, err := x.FinishWebhookAttempts(ctx, []store.WebhookOutcome{{Event: c, Attempt: store.WebhookAttempt{EventID: c.ID,
					Attempt: 2, AttemptedAt: later, URL: "https://new.example.com/hook", ResponseStatus: 204, Duration: time.Millisecond}}}, "lease-1")
				if err == nil && len(lost) != 0 {
					t.Errorf("lost %v", lost)
				}
				return err
			})
			got := list()
			if len(got) != 2 || got[0].Attempt != 1 || got[0].ResponseStatus != 500 || got[1].Attempt != 2 ||
				got[1].ResponseStatus != 204 || got[1].URL != "https://new.example.com/hook" || !got[1].AttemptedAt.Equal(later) {
				t.Fatalf("after the next attempt: %+v", got)
			}
		})
	}
}

// TestAttemptsDuringRollingUpgrade: a binary of before migration 0015,
// still running beside this one, finishes an attempt its way (the attempts
// count and the answer on the row, the attempt in webhook_attempts) between
// two attempts of this binary: every attempt lists once, with its own
// number and data.
func TestAttemptsDuringRollingUpgrade(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx, now := t.Context(), eventTime
			e, run := eventFixture(t, tc.open, "Transaction:upgrade")
			run(func(x *tx) error { return x.CreateWebhookEvent(ctx, e) })
			// finish claims the event at hour n and records attempt n+1
			// this binary's way, failed (503) or, last, delivered.
			finish := func(n int, status int) {
				t.Helper()
				at := now.Add(time.Duration(n) * time.Hour)
				lease := fmt.Sprintf("lease-%d", n)
				var got []store.WebhookEvent
				run(func(x *tx) (err error) {
					got, err = x.ClaimWebhookEvents(ctx, at, at.Add(time.Minute), lease, 1)
					return err
				})
				if len(got) != 1 || got[0].Attempts != n {
					t.Fatalf("claim %d: %+v", n, got)
				}
				c := got[0]
				c.Status, c.UpdatedAt, c.NextAttemptAt = store.WebhookPending, at, at.Add(time.Hour)
				if status == 204 {
					c.Status, c.DeliveredAt = store.WebhookDelivered, at
				}
				run(func(x *tx) error {
					_, err := x.FinishWebhookAttempts(ctx, []store.WebhookOutcome{{Event: c, Attempt: store.WebhookAttempt{EventID: c.ID,
						Attempt: n + 1, AttemptedAt: at, URL: fmt.Sprintf("https://new.example.com/%d", n+1), ResponseStatus: status,
						Duration: time.Duration(n+1) * time.Millisecond}}}, lease)
					return err
				})
			}
			finish(0, 503)
			// Attempt 2 by the older binary (its finish statements of before 0015).
			run(func(x *tx) error {
				if _, err := x.exec(ctx, `UPDATE webhook_events SET attempts = 2, last_status = 500, last_error = 'HTTP 500', updated_at = ? WHERE id = ?`,
					x.d.timeArg(now.Add(90*time.Minute)), e.ID); err != nil {
					return err
				}
				_, err := x.exec(ctx, `INSERT INTO webhook_attempts (event_id, attempt, attempted_at, url, response_status, error, duration_us)
					VALUES (?, 2, ?, 'https://old.example.com/2', 500, 'HTTP 500', 2000)`, e.ID, x.d.timeArg(now.Add(90*time.Minute)))
				return err
			})
			finish(2, 204)
			var got []store.WebhookAttempt
			run(func(x *tx) (err error) { got, err = x.ListWebhookAttempts(ctx, e.ID); return err })
			want := []struct {
				url    string
				status int
			}{{"https://new.example.com/1", 503}, {"https://old.example.com/2", 500}, {"https://new.example.com/3", 204}}
			if len(got) != len(want) {
				t.Fatalf("attempts %+v, want %d", got, len(want))
			}
			for i, w := range want {
				if got[i].Attempt != i+1 || got[i].URL != w.url || got[i].ResponseStatus != w.status {
					t.Errorf("attempt %d: %+v, want %+v", i+1, got[i], w)
				}
			}
		})
	}
}
