package payments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// Webhook endpoints (our extension; the reference has the one
// webhookEndpoint of GET/PATCH /config, which is the default endpoint
// here). Each endpoint has its URL, the event types it wants, a payload
// style, and its own delivery state: a cursor in the catalogue of events,
// its retries, and how long it has been failing. An endpoint whose
// deliveries all fail for Config.WebhookDisableAfter is disabled, and the
// operator is told by e-mail (webhookworker.go).

// maxWebhookEndpoints bounds the endpoints of the platform, as Stripe's
// sixteen: each costs a delivery of every event it wants.
const maxWebhookEndpoints = 16

// EventTypes are the event types the service records, each sent to the
// endpoints that want it; "*" in an endpoint's eventTypes means all of
// them, including types added later.
var EventTypes = []string{
	webhooksig.OutgoingPaymentPending, webhooksig.OutgoingPaymentProcessing, webhooksig.OutgoingPaymentCompleted,
	webhooksig.OutgoingPaymentFailed, webhooksig.OutgoingPaymentExpired, webhooksig.OutgoingPaymentRefundCompleted,
	"INCOMING_PAYMENT.PENDING", webhooksig.IncomingPaymentCompleted, "INCOMING_PAYMENT.FAILED",
	webhooksig.InternalAccountBalanceUpdated, webhooksig.InternalAccountStatusUpdated,
	webhooksig.ExternalAccountStatusUpdated,
	eventKYCApproved, eventKYCRejected, eventKYCPending, eventKYBApproved, eventKYBRejected, eventKYBPending,
	agentActionPendingApproval,
}

// Endpoint states as WebhookEndpoint.Status says them.
const (
	endpointActive   = "ACTIVE"   // enabled, delivering
	endpointFailing  = "FAILING"  // enabled, its deliveries fail (see failingSince)
	endpointDisabled = "DISABLED" // nothing is sent (see disabledReason)
)

// WebhookEndpoint is an endpoint as the API shows it.
type WebhookEndpoint struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Description    string   `json:"description,omitempty"`
	EventTypes     []string `json:"eventTypes"`
	PayloadStyle   string   `json:"payloadStyle"`
	Enabled        bool     `json:"enabled"`
	IsDefault      bool     `json:"isDefault"`
	Status         string   `json:"status"`
	DisabledAt     string   `json:"disabledAt,omitempty"`
	DisabledReason string   `json:"disabledReason,omitempty"`
	FailingSince   string   `json:"failingSince,omitempty"`
	LastSuccessAt  string   `json:"lastSuccessAt,omitempty"`
	LastFailureAt  string   `json:"lastFailureAt,omitempty"`
	LastError      string   `json:"lastError,omitempty"`
	// PausedUntil: every delivery of the last round failed, and the next
	// try is then (the cursor waits meanwhile).
	PausedUntil    string `json:"pausedUntil,omitempty"`
	PendingRetries int    `json:"pendingRetries"`
	CreatedAt      string `json:"createdAt"`
	UpdatedAt      string `json:"updatedAt"`
}

func endpointJSON(e *store.WebhookEndpoint) WebhookEndpoint {
	out := WebhookEndpoint{ID: e.ID, URL: e.URL, Description: e.Description, EventTypes: e.Types,
		PayloadStyle: e.Payload, Enabled: e.Enabled, IsDefault: e.Default, Status: endpointActive,
		DisabledAt: timeOrEmpty(e.DisabledAt), DisabledReason: e.DisabledReason,
		FailingSince: timeOrEmpty(e.FailingSince), LastSuccessAt: timeOrEmpty(e.LastSuccessAt),
		LastFailureAt: timeOrEmpty(e.LastFailureAt), LastError: e.LastError, PausedUntil: timeOrEmpty(e.NextAttemptAt),
		PendingRetries: e.PendingRetries, CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.UpdatedAt)}
	if len(out.EventTypes) == 0 {
		out.EventTypes = []string{"*"}
	}
	switch {
	case !e.Enabled:
		out.Status = endpointDisabled
	case !e.FailingSince.IsZero():
		out.Status = endpointFailing
	}
	return out
}

// defaultEndpoint is the reference's webhookEndpoint, nil when none is set.
func defaultEndpoint(ctx context.Context, tx store.Tx) (*store.WebhookEndpoint, error) {
	all, err := tx.ListWebhookEndpoints(ctx)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Default {
			return &all[i], nil
		}
	}
	return nil, nil
}

// newEndpoint is an enabled endpoint that starts with the events recorded
// after it: its cursor is the catalogue's head, or from when not nil and
// below the head (an upgrade's endpoint takes the events the old outbox
// had not delivered).
func (s *Service) newEndpoint(ctx context.Context, tx store.Tx, e *store.WebhookEndpoint, from *int64) error {
	all, err := tx.ListWebhookEndpoints(ctx)
	if err != nil {
		return err
	}
	if len(all) >= maxWebhookEndpoints {
		return errorf(CodeInvalidInput, fmt.Sprintf("the platform has %d webhook endpoints already, the most it can have; delete one first", maxWebhookEndpoints))
	}
	head, err := tx.EventsHead(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	e.Cursor = head
	if from != nil && *from >= 0 && *from < head {
		e.Cursor = *from
	}
	e.ID, e.CreatedAt, e.UpdatedAt = ids.New("WebhookEndpoint"), now, now
	if e.Payload == "" {
		e.Payload = store.PayloadSnapshot
	}
	if !e.Enabled {
		e.DisabledAt, e.DisabledReason = now, "created disabled"
	}
	return tx.CreateWebhookEndpoint(ctx, e)
}

// setDefaultEndpoint points the default endpoint at url: it creates the
// endpoint (every event type, snapshots) when there is none, changes its
// URL and enables it otherwise, and deletes it for "". It reports whether
// anything changed.
func (s *Service) setDefaultEndpoint(ctx context.Context, tx store.Tx, url string) (bool, error) {
	return s.setDefaultEndpointFrom(ctx, tx, url, nil)
}

// setDefaultEndpointFrom is setDefaultEndpoint with the cursor a created
// endpoint starts from (nil: the head).
func (s *Service) setDefaultEndpointFrom(ctx context.Context, tx store.Tx, url string, from *int64) (bool, error) {
	d, err := defaultEndpoint(ctx, tx)
	if err != nil {
		return false, err
	}
	switch {
	case url == "" && d == nil:
		return false, nil
	case url == "":
		// Its series go now; should the transaction not commit, the
		// endpoint's next round shows them again.
		s.metrics.forgetEndpoint(d.ID)
		return true, tx.DeleteWebhookEndpoint(ctx, d.ID)
	case d == nil:
		return true, s.newEndpoint(ctx, tx, &store.WebhookEndpoint{URL: url, Default: true, Enabled: true,
			Payload: store.PayloadSnapshot}, from)
	case d.URL == url && d.Enabled:
		return false, nil
	}
	prev := d.UpdatedAt
	d.URL, d.UpdatedAt = url, s.now()
	enable(d)
	return true, updateEndpoint(ctx, tx, d, prev)
}

// enable turns d on with a fresh failure window.
func enable(d *store.WebhookEndpoint) {
	d.Enabled, d.DisabledAt, d.DisabledReason = true, time.Time{}, ""
	d.FailingSince, d.NextAttemptAt, d.FailedRounds = time.Time{}, time.Time{}, 0
}

func updateEndpoint(ctx context.Context, tx store.Tx, e *store.WebhookEndpoint, prev time.Time) error {
	won, err := tx.UpdateWebhookEndpoint(ctx, e, prev)
	if err != nil {
		return err
	}
	if !won {
		return errConflictRetry
	}
	return nil
}

// errConflictRetry is a write that lost to a concurrent one on the same
// row: the client may send the request again.
var errConflictRetry = errorf(CodeConflict, "the webhook endpoint changed while it was updated; send the request again")

// ---- the operations

// CreateWebhookEndpointRequest is the body of POST /webhooks/endpoints.
type CreateWebhookEndpointRequest struct {
	URL          string   `json:"url"`
	Description  string   `json:"description"`
	EventTypes   []string `json:"eventTypes"`   // ["*"] (all) when absent
	PayloadStyle string   `json:"payloadStyle"` // snapshot (the default) or thin
	Enabled      *bool    `json:"enabled"`      // true when absent
}

// UpdateWebhookEndpointRequest is the body of PATCH
// /webhooks/endpoints/{id}: the fields to change.
type UpdateWebhookEndpointRequest struct {
	URL          *string   `json:"url"`
	Description  *string   `json:"description"`
	EventTypes   *[]string `json:"eventTypes"`
	PayloadStyle *string   `json:"payloadStyle"`
	Enabled      *bool     `json:"enabled"`
}

// checkEndpointFields checks the settings a create or an update sets
// (nil: not set) and returns the event types as the store keeps them.
func checkEndpointFields(fe *fieldErrors, url, description *string, types *[]string, style *string) []string {
	if url != nil {
		if *url == "" {
			fe.add("url", "is required: the absolute http or https URL to deliver to")
		} else if why := validWebhookURL(*url); why != "" {
			fe.addConstraint("url", why, wire.FieldConstraint{Format: "url"})
		}
	}
	if description != nil && len(*description) > 500 {
		fe.add("description", "must be at most 500 characters")
	}
	if style != nil && *style != store.PayloadSnapshot && *style != store.PayloadThin {
		fe.addConstraint("payloadStyle", "must be snapshot (the resource as the API shows it) or thin (its id only)",
			wire.FieldConstraint{Enum: []string{store.PayloadSnapshot, store.PayloadThin}})
	}
	if types == nil {
		return nil
	}
	return checkEventTypes(fe, "eventTypes", *types, true)
}

// checkEventTypes checks a list of event types; with star, ["*"] (all) is
// allowed and returned as nil.
func checkEventTypes(fe *fieldErrors, field string, types []string, star bool) []string {
	if star && len(types) == 0 {
		fe.add(field, `must name at least one event type, or be ["*"] for all`)
		return nil
	}
	if star && slices.Contains(types, "*") {
		if len(types) > 1 {
			fe.add(field, `"*" (every type) cannot be combined with other types`)
		}
		return nil
	}
	seen := map[string]bool{}
	for i, t := range types {
		switch {
		case !slices.Contains(EventTypes, t):
			fe.addConstraint(fmt.Sprintf("%s[%d]", field, i), "is not an event type this service sends",
				wire.FieldConstraint{Enum: EventTypes})
		case seen[t]:
			fe.add(fmt.Sprintf("%s[%d]", field, i), "is listed twice")
		}
		seen[t] = true
	}
	return slices.Clone(types)
}

// CreateWebhookEndpoint adds an endpoint (POST /webhooks/endpoints). It
// receives the events recorded from now on.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, req CreateWebhookEndpointRequest) (WebhookEndpoint, error) {
	var fe fieldErrors
	if req.EventTypes == nil {
		req.EventTypes = []string{"*"}
	}
	if req.PayloadStyle == "" {
		req.PayloadStyle = store.PayloadSnapshot
	}
	types := checkEndpointFields(&fe, &req.URL, &req.Description, &req.EventTypes, &req.PayloadStyle)
	if e := fe.err(); e != nil {
		return WebhookEndpoint{}, e
	}
	e := store.WebhookEndpoint{URL: req.URL, Description: req.Description, Types: types,
		Payload: req.PayloadStyle, Enabled: req.Enabled == nil || *req.Enabled}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (WebhookEndpoint, error) {
		if err := s.newEndpoint(ctx, tx, &e, nil); err != nil {
			return WebhookEndpoint{}, err
		}
		return endpointJSON(&e), nil
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}

var errNoEndpoint = errorf(CodeNotFound, "no webhook endpoint with this id")

// getEndpoint reads the endpoint id names, or errNoEndpoint.
func getEndpoint(ctx context.Context, tx store.Tx, id string) (*store.WebhookEndpoint, error) {
	if !ids.Valid("WebhookEndpoint", id) {
		return nil, errNoEndpoint
	}
	e, err := tx.GetWebhookEndpoint(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoEndpoint
	}
	return e, err
}

// GetWebhookEndpoint is one endpoint with its delivery state (GET
// /webhooks/endpoints/{id}).
func (s *Service) GetWebhookEndpoint(ctx context.Context, id string) (WebhookEndpoint, error) {
	return read(ctx, s, func(tx store.Tx) (WebhookEndpoint, error) {
		e, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		return endpointJSON(e), nil
	})
}

// ListWebhookEndpoints is every endpoint, oldest first (GET
// /webhooks/endpoints): at most maxWebhookEndpoints, so one page.
func (s *Service) ListWebhookEndpoints(ctx context.Context) (wire.List[WebhookEndpoint], error) {
	return read(ctx, s, func(tx store.Tx) (wire.List[WebhookEndpoint], error) {
		all, err := tx.ListWebhookEndpoints(ctx)
		if err != nil {
			return wire.List[WebhookEndpoint]{}, err
		}
		out := wire.List[WebhookEndpoint]{Data: make([]WebhookEndpoint, 0, len(all)), TotalCount: new(int)}
		for i := range all {
			out.Data = append(out.Data, endpointJSON(&all[i]))
		}
		*out.TotalCount = len(all)
		return out, nil
	})
}

// UpdateWebhookEndpoint changes an endpoint's settings (PATCH
// /webhooks/endpoints/{id}). Enabling a disabled endpoint resumes its
// deliveries where they stopped (events older than the retention are
// gone) with a fresh failure window; disabling it stops them.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, id string, req UpdateWebhookEndpointRequest) (WebhookEndpoint, error) {
	var fe fieldErrors
	types := checkEndpointFields(&fe, req.URL, req.Description, req.EventTypes, req.PayloadStyle)
	if e := fe.err(); e != nil {
		return WebhookEndpoint{}, e
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (WebhookEndpoint, error) {
		e, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		prev := e.UpdatedAt
		if req.URL != nil {
			e.URL = *req.URL
		}
		if req.Description != nil {
			e.Description = *req.Description
		}
		if req.EventTypes != nil {
			e.Types = types
		}
		if req.PayloadStyle != nil {
			e.Payload = *req.PayloadStyle
		}
		now := s.now()
		switch {
		case req.Enabled == nil:
		case *req.Enabled && !e.Enabled:
			enable(e)
		case !*req.Enabled && e.Enabled:
			e.Enabled, e.DisabledAt, e.DisabledReason = false, now, "disabled by the platform"
		}
		e.UpdatedAt = now
		if err := updateEndpoint(ctx, tx, e, prev); err != nil {
			return WebhookEndpoint{}, err
		}
		return endpointJSON(e), nil
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}

// DeleteWebhookEndpoint removes an endpoint and its pending retries
// (DELETE /webhooks/endpoints/{id}); for the default endpoint it is PATCH
// /config with webhookEndpoint null.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	_, err := commit(ctx, s, "", nil, func(tx store.Tx) (struct{}, error) {
		if _, err := getEndpoint(ctx, tx, id); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, tx.DeleteWebhookEndpoint(ctx, id)
	})
	if err == nil {
		s.metrics.forgetEndpoint(id)
	}
	return err
}

// maxReplay bounds the events one replay sends again.
const maxReplay = 10000

// ReplayRequest is the body of POST /webhooks/endpoints/{id}/replay.
type ReplayRequest struct {
	From       string   `json:"from"` // RFC 3339, inclusive
	To         string   `json:"to"`   // RFC 3339, exclusive; now when absent
	EventTypes []string `json:"eventTypes"`
}

// ReplayResult is the answer of a replay.
type ReplayResult struct {
	EndpointID string `json:"endpointId"`
	Replayed   int    `json:"replayed"`
}

// ReplayWebhookEvents sends the endpoint again every catalogued event
// created in [from, to) of the given types (those it receives when
// absent), after the
// earlier pending events of each resource and in order per resource, each
// retried for another WebhookRetryFor (POST
// /webhooks/endpoints/{id}/replay). A range of more than maxReplay events
// is refused, nothing replayed.
func (s *Service) ReplayWebhookEvents(ctx context.Context, id string, req ReplayRequest) (ReplayResult, error) {
	var fe fieldErrors
	now := s.now()
	from := parseTimeField(&fe, "from", req.From, true)
	to := now
	if req.To != "" {
		to = parseTimeField(&fe, "to", req.To, false)
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		fe.add("to", "must be after from")
	}
	var types []string
	if req.EventTypes != nil {
		types = checkEventTypes(&fe, "eventTypes", req.EventTypes, true)
	}
	if e := fe.err(); e != nil {
		return ReplayResult{}, e
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (ReplayResult, error) {
		ep, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return ReplayResult{}, err
		}
		if req.EventTypes == nil {
			types = ep.Types // what it receives
		}
		n, more, err := tx.ReplayWebhookEvents(ctx, id, from, to, types, now, now.Add(s.cfg.WebhookRetryFor), maxReplay)
		if err != nil {
			return ReplayResult{}, err
		}
		if more {
			return ReplayResult{}, errorf(CodeInvalidInput, fmt.Sprintf(
				"the range holds more than %d events; replay it in shorter ranges", maxReplay))
		}
		return ReplayResult{EndpointID: id, Replayed: n}, nil
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}

// parseTimeField reads an RFC 3339 time of the request; "" is an error
// when required, the zero time otherwise.
func parseTimeField(fe *fieldErrors, field, v string, required bool) time.Time {
	if v == "" {
		if required {
			fe.add(field, "is required: an RFC 3339 time such as 2026-12-01T00:00:00Z")
		}
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		fe.addConstraint(field, "must be an RFC 3339 time such as 2026-12-01T00:00:00Z", wire.FieldConstraint{Format: "date-time"})
		return time.Time{}
	}
	return t.UTC()
}

// ---- deliveries

// WebhookDelivery is one delivery attempt (GET /webhooks/deliveries).
type WebhookDelivery struct {
	EndpointID     string `json:"endpointId"`
	EventID        string `json:"eventId"`
	Attempt        int    `json:"attempt"`
	AttemptedAt    string `json:"attemptedAt"`
	URL            string `json:"url"`
	Status         string `json:"status"` // DELIVERED, RETRYING or FAILED (given up)
	ResponseStatus int    `json:"responseStatus,omitempty"`
	Error          string `json:"error,omitempty"`
	DurationMs     int64  `json:"durationMs"`
}

// Delivery states as WebhookDelivery.Status says them.
const (
	deliveryDelivered = "DELIVERED"
	deliveryRetrying  = "RETRYING"
	deliveryFailed    = "FAILED"
)

func deliveryJSON(a *store.WebhookAttempt) WebhookDelivery {
	d := WebhookDelivery{EndpointID: a.EndpointID, EventID: a.EventID, Attempt: a.Attempt,
		AttemptedAt: timestamp(a.AttemptedAt), URL: a.URL, ResponseStatus: a.ResponseStatus, Error: a.Error,
		DurationMs: a.Duration.Milliseconds(), Status: deliveryDelivered}
	switch {
	case a.Error != "" && a.Final:
		d.Status = deliveryFailed
	case a.Error != "":
		d.Status = deliveryRetrying
	}
	return d
}

// WebhookDeliveryFilter is the query of ListWebhookDeliveries.
type WebhookDeliveryFilter struct {
	EndpointID string `query:"endpointId"`
	EventID    string `query:"eventId"`
	Failed     string `query:"failed"` // "true": only attempts that failed
	Limit      string `query:"limit"`
	Cursor     string `query:"cursor"`
}

// ListWebhookDeliveries pages the delivery attempts newest first (GET
// /webhooks/deliveries): what was sent where, when, and what the receiver
// answered.
func (s *Service) ListWebhookDeliveries(ctx context.Context, req WebhookDeliveryFilter) (wire.List[WebhookDelivery], error) {
	var fe fieldErrors
	f := store.WebhookAttemptFilter{EndpointID: req.EndpointID, EventID: req.EventID, Cursor: req.Cursor}
	if f.EndpointID != "" && !ids.Valid("WebhookEndpoint", f.EndpointID) {
		fe.add("endpointId", "is not a webhook endpoint id")
	}
	if f.EventID != "" && !ids.Valid("Webhook", f.EventID) {
		fe.add("eventId", "is not an event id")
	}
	switch req.Failed {
	case "", "false":
	case "true":
		f.Failed = true
	default:
		fe.add("failed", "must be true or false")
	}
	f.Limit = seqPage(&fe, req.Limit, req.Cursor)
	if e := fe.err(); e != nil {
		return wire.List[WebhookDelivery]{}, e
	}
	return listPage(ctx, s, func(tx store.Tx) (store.Page[store.WebhookAttempt], error) { return tx.ListWebhookAttempts(ctx, f) },
		deliveryJSON)
}

// ResendRequest is the body of POST /webhooks/deliveries/{eventId}/replay.
type ResendRequest struct {
	// EndpointID names the endpoint to send it to; when empty, every
	// enabled endpoint that wants the event's type.
	EndpointID string `json:"endpointId"`
}

// ReplayWebhookDelivery sends one event again (POST
// /webhooks/deliveries/{eventId}/replay), same id and body, after the
// pending events of its resource, retried for another WebhookRetryFor.
// It answers the endpoints it was queued for.
func (s *Service) ReplayWebhookDelivery(ctx context.Context, eventID string, req ResendRequest) (wire.List[WebhookEndpoint], error) {
	notFound := errorf(CodeNotFound, "no event with this id: events are kept for "+retentionWords(s.cfg.EventRetention))
	if !ids.Valid("Webhook", eventID) {
		return wire.List[WebhookEndpoint]{}, notFound
	}
	if req.EndpointID != "" && !ids.Valid("WebhookEndpoint", req.EndpointID) {
		return wire.List[WebhookEndpoint]{}, invalidField("endpointId", "is not a webhook endpoint id")
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (wire.List[WebhookEndpoint], error) {
		ev, err := tx.GetEvent(ctx, eventID)
		if errors.Is(err, store.ErrNotFound) {
			return wire.List[WebhookEndpoint]{}, notFound
		}
		if err != nil {
			return wire.List[WebhookEndpoint]{}, err
		}
		var to []store.WebhookEndpoint
		if req.EndpointID != "" {
			e, err := getEndpoint(ctx, tx, req.EndpointID)
			if err != nil {
				return wire.List[WebhookEndpoint]{}, err
			}
			to = append(to, *e)
		} else {
			all, err := tx.ListWebhookEndpoints(ctx)
			if err != nil {
				return wire.List[WebhookEndpoint]{}, err
			}
			for _, e := range all {
				if e.Enabled && (len(e.Types) == 0 || slices.Contains(e.Types, ev.Type)) {
					to = append(to, e)
				}
			}
		}
		now := s.now()
		out := wire.List[WebhookEndpoint]{Data: []WebhookEndpoint{}, TotalCount: new(int)}
		for i := range to {
			if err := tx.ReplayWebhookEvent(ctx, to[i].ID, ev.Seq, now, now.Add(s.cfg.WebhookRetryFor)); err != nil {
				return wire.List[WebhookEndpoint]{}, err
			}
			out.Data = append(out.Data, endpointJSON(&to[i]))
		}
		*out.TotalCount = len(out.Data)
		return out, nil
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}
