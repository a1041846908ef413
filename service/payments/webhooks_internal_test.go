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
	events, err := read(ctx, svc, func(tx store.Tx) (int, error) {
		page, err := tx.ListWebhookEvents(ctx, store.WebhookEventFilter{Limit: 100})
		return len(page.Items), err
	})
	if err != nil || events != 0 {
		t.Fatalf("%d events stored after the rollback (%v); want none", events, err)
	}
}
