package sqlstore

import (
	"context"
	"fmt"
	"time"

	"paywallet/service/store"
)

func (t *tx) ReplayWebhookEvent(ctx context.Context, endpointID string, seq int64, at, giveUpAt time.Time) error {
	what := fmt.Sprintf("replay event %d to %q", seq, endpointID)
	var resource string
	var cursor int64
	if err := t.queryRow(ctx, `SELECT e.resource_id, w.cursor_seq FROM events e, webhook_endpoints w WHERE e.seq = ? AND w.id = ?`,
		seq, endpointID).Scan(&resource, &cursor); err != nil {
		return t.fail(what, err)
	}
	if seq > cursor {
		return nil // not sent yet: it goes in its turn
	}
	// An event the endpoint retries already keeps that retry (and its
	// attempts so far).
	if _, err := t.exec(ctx, `INSERT INTO webhook_retries (endpoint_id, event_seq, resource_id, attempts, next_attempt_at, give_up_at)
		VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT DO NOTHING`,
		endpointID, seq, resource, t.d.timeArg(at), t.d.timeArg(giveUpAt)); err != nil {
		return t.fail(what, err)
	}
	return nil
}

var _ store.WebhookTx = (*tx)(nil)
