package payments

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/wire"
)

// The events the platform can read (our extension, as Stripe's events
// API): every catalogued event of the last Config.EventRetention, each
// exactly as a snapshot endpoint receives it, for a platform that
// reconciles after its receiver was down, or that polls instead of
// receiving webhooks. An event is listed once the worker catalogued it,
// normally within milliseconds of its change.

// EventFilter is the query of ListEvents.
type EventFilter struct {
	Types      []string `query:"type"` // any of these; repeat the parameter
	ResourceID string   `query:"resourceId"`
	StartDate  string   `query:"startDate"` // RFC 3339, inclusive
	EndDate    string   `query:"endDate"`   // RFC 3339, exclusive
	Limit      string   `query:"limit"`
	Cursor     string   `query:"cursor"`
}

// ListEvents pages the events newest first (GET /events).
func (s *Service) ListEvents(ctx context.Context, req EventFilter) (wire.List[json.RawMessage], error) {
	var fe fieldErrors
	f := store.EventFilter{ResourceID: req.ResourceID, Cursor: req.Cursor}
	if req.Types != nil {
		f.Types = checkEventTypes(&fe, "type", req.Types, false)
	}
	if len(f.ResourceID) > 200 {
		fe.add("resourceId", "is not a resource id")
	}
	f.From = parseTimeField(&fe, "startDate", req.StartDate, false)
	f.To = parseTimeField(&fe, "endDate", req.EndDate, false)
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		fe.add("endDate", "must be after startDate")
	}
	f.Limit = seqPage(&fe, req.Limit, req.Cursor)
	if e := fe.err(); e != nil {
		return wire.List[json.RawMessage]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.Event], error) { return tx.ListEvents(ctx, f) },
		func(e *store.Event) json.RawMessage { return eventBody(e) })
}

// seqPage checks the paging of a list whose cursor is a row number (the
// events, the delivery attempts) rather than an id (PageRequest.check):
// limit 1 to 100, 20 when empty; the cursor a decimal of at least 1.
func seqPage(fe *fieldErrors, limit, cursor string) int {
	n := 20
	if limit != "" {
		var err error
		if n, err = strconv.Atoi(limit); err != nil || n < 1 || n > 100 {
			fe.add("limit", "must be an integer from 1 to 100")
		}
	}
	if cursor != "" {
		if c, err := strconv.ParseInt(cursor, 10, 64); err != nil || c < 1 {
			fe.add("cursor", "is not a cursor returned by this list")
		}
	}
	return n
}

// GetEvent is one event as a snapshot endpoint receives it (GET
// /events/{eventId}).
func (s *Service) GetEvent(ctx context.Context, id string) (json.RawMessage, error) {
	notFound := errorf(CodeNotFound, "no event with this id: events are kept for "+retentionWords(s.cfg.EventRetention))
	if !ids.Valid("Webhook", id) {
		return nil, notFound
	}
	return read(ctx, s, func(tx store.Tx) (json.RawMessage, error) {
		e, err := tx.GetEvent(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		return eventBody(e), nil
	})
}
