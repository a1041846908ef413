package payments

import (
	"context"
	"errors"
	"testing"

	"paywallet/service/store"
	"paywallet/shared/webhooksig"
)

// TestEventRollsBack: an event recorded in a transaction that then fails is
// never delivered, nor even listed.
func TestEventRollsBack(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := svc.store.Tx(ctx, func(tx store.Tx) error {
		if err := svc.emit(ctx, tx, webhooksig.InternalAccountStatusUpdated, "InternalAccount:x", map[string]string{"id": "InternalAccount:x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// Catalogued, a committed event would be listed now.
	if _, err := svc.DeliverWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	events, err := read(ctx, svc, func(tx store.Tx) (int, error) {
		page, err := tx.ListEvents(ctx, store.EventFilter{Limit: 100})
		return len(page.Items), err
	})
	if err != nil || events != 0 {
		t.Fatalf("%d events stored after the rollback (%v); want none", events, err)
	}
}

// TestOneLogRowPerTransaction: an operation's events, however many, are
// one row of the event log, written after its work (so that on PostgreSQL
// the row rides on its idempotency record's statement).
func TestOneLogRowPerTransaction(t *testing.T) {
	svc := newTestService(t)
	ctx := context.Background()
	var calls [][]store.NewEvent
	err := svc.store.Tx(ctx, func(tx store.Tx) error {
		rec := &recordingTx{Tx: tx, calls: &calls}
		o := &outboxTx{Tx: rec}
		for _, id := range []string{"InternalAccount:a", "InternalAccount:b", "InternalAccount:a"} {
			if err := svc.emit(ctx, o, webhooksig.InternalAccountBalanceUpdated, id, map[string]string{"id": id}); err != nil {
				return err
			}
		}
		if len(calls) != 0 {
			t.Fatalf("events written before the operation's work was done: %d", len(calls))
		}
		return o.flush(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || len(calls[0]) != 3 || calls[0][0].ResourceID != "InternalAccount:a" || calls[0][2].ResourceID != "InternalAccount:a" {
		t.Fatalf("RecordEvents calls %+v, want one with the three events in order", calls)
	}
}

// recordingTx notes each RecordEvents call.
type recordingTx struct {
	store.Tx
	calls *[][]store.NewEvent
}

func (r *recordingTx) RecordEvents(ctx context.Context, es []store.NewEvent) error {
	*r.calls = append(*r.calls, es)
	return r.Tx.RecordEvents(ctx, es)
}
