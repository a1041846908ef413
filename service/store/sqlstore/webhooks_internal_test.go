package sqlstore

import (
	"path/filepath"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/service/store/pgtest"
)

// TestAttemptsRecordedBeforeMigration0015: an event whose attempts were
// all written to webhook_attempts before its row kept its last attempt
// (last_attempt_at NULL) lists them once, and its next attempt adds one
// without moving or repeating the earlier ones.
func TestAttemptsRecordedBeforeMigration0015(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (*DB, error)
	}{
		{"sqlite", func(t *testing.T) (*DB, error) {
			return OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "old.db"))
		}},
		{"postgres", func(t *testing.T) (*DB, error) {
			return OpenPostgres(t.Context(), pgtest.Start(t).NewDatabase(t))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := tc.open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := t.Context()
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			e := &store.WebhookEvent{ID: "Webhook:0194f3e2-0000-7000-8000-000000000001", Type: "OUTGOING_PAYMENT.PENDING",
				ResourceID: "Transaction:old", Body: []byte(`{}`), Status: store.WebhookPending,
				NextAttemptAt: now, GiveUpAt: now.Add(72 * time.Hour), CreatedAt: now, UpdatedAt: now}
			run := func(fn func(t *tx) error) {
				t.Helper()
				if err := db.Tx(ctx, func(s store.Tx) error { return fn(s.(*tx)) }); err != nil {
					t.Fatal(err)
				}
			}
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
