package store

import (
	"context"
	"time"
)

// WebhookTx is the service's events and their delivery to the platform's
// webhook endpoints. It is part of [Tx]. Three stages, each with its own
// tables, so that the API's transactions only ever append:
//
//  1. The log. An API transaction appends its events with
//     [WebhookTx.RecordEvents]: one row per transaction (per run of calls
//     between two statements), a primary key only, never updated. On PostgreSQL the row rides on the transaction's next
//     statement (no round trip of its own) where there is one.
//  2. The catalog. [WebhookTx.CatalogEvents] (one worker at a time, in a
//     lazy transaction) moves the log's rows, in the order their
//     transactions committed, into the events table: each event gets Seq,
//     its place in one order of all events, and Sequence, 1, 2, 3, … per
//     resource, kept per resource even after its old events are dropped.
//     The log rows it moved are deleted. Events are read from here
//     ([WebhookTx.GetEvent], [WebhookTx.ListEvents]) and dropped by time
//     ([WebhookTx.DeleteEventsBefore]).
//  3. Delivery. Each endpoint holds a cursor (the Seq through which it has
//     handled events) and its own retries. A worker leases an endpoint
//     ([WebhookTx.ClaimWebhookEndpoints]), reads its work
//     ([WebhookTx.WebhookWork]), delivers, and records the round
//     ([WebhookTx.FinishWebhookRound]) only while it still holds the lease.
type WebhookTx interface {
	// RecordEvents appends events, in this order, to the log row of this
	// transaction: calls with no statement between them join one row. The
	// store keeps the row for the transaction's next statement to carry
	// where it can (PostgreSQL), else writes it when the transaction
	// commits; not at all if it rolls back. An empty list writes nothing.
	RecordEvents(ctx context.Context, events []NewEvent) error

	// CatalogEvents moves up to limit events of the log's oldest rows
	// (whole rows; a row of more than limit events still moves whole) into
	// the catalog, in the order the transactions that wrote them
	// committed, and deletes those rows. Only rows no running transaction
	// can precede are moved (on PostgreSQL: written by transactions below
	// the snapshot's xmin, which any writing transaction of the cluster,
	// in any database, holds back while it runs). On PostgreSQL the order
	// is that of the writing transactions' ids: for two that wrote the
	// same row, or where a serializable one saw the other's writes, the
	// order they committed in; unrelated ones may come in the order they
	// started writing. It returns the number of events moved: 0 when the
	// log holds nothing final, or when another transaction is cataloguing
	// now (they take turns; the caller tries again later). Call it in a
	// lazy transaction (store.LazyStore), as the worker does.
	CatalogEvents(ctx context.Context, limit int) (int, error)
	// EventsHead is the highest Seq in the catalog (0: none yet, ever).
	EventsHead(ctx context.Context) (int64, error)
	// GetEvent reads a catalogued event by its id (ErrNotFound).
	GetEvent(ctx context.Context, id string) (*Event, error)
	// ListEvents pages the catalog newest first (by Seq).
	ListEvents(ctx context.Context, f EventFilter) (Page[Event], error)
	// DeleteEventsBefore drops up to limit of the oldest events created
	// before t, with the delivery attempts recorded for them, and reports
	// how many it dropped (call it again while it returns limit). The
	// per-resource sequences stay.
	DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error)

	// CreateWebhookEndpoint stores a new endpoint (ErrConflict: the id,
	// or a second Default endpoint).
	CreateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint) error
	// GetWebhookEndpoint reads an endpoint (ErrNotFound).
	GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error)
	// ListWebhookEndpoints returns every endpoint, oldest first.
	ListWebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error)
	// UpdateWebhookEndpoint writes the settings of e (URL, Description,
	// Types, Payload, Enabled, DisabledAt, DisabledReason, FailingSince
	// and UpdatedAt) if the stored endpoint's UpdatedAt is still
	// prevUpdatedAt, and reports whether it did. Its delivery state
	// (Cursor, retries, lease) is the worker's and stays, except that
	// FailingSince, NextAttemptAt and FailedRounds are set to e's
	// (re-enabling an endpoint starts its failure window afresh).
	// ErrNotFound for a missing id.
	UpdateWebhookEndpoint(ctx context.Context, e *WebhookEndpoint, prevUpdatedAt time.Time) (bool, error)
	// DeleteWebhookEndpoint removes an endpoint with its retries and
	// attempts (ErrNotFound).
	DeleteWebhookEndpoint(ctx context.Context, id string) error

	// ClaimWebhookEndpoints leases up to limit enabled endpoints that have
	// work due at now (events after their cursor up to head, or a retry
	// due by now), whose NextAttemptAt is not after now, and that no
	// lease holds at now: each gets Lease = lease and LeaseUntil = until
	// and is returned as updated. On PostgreSQL endpoints another claim
	// is taking are passed over (SKIP LOCKED).
	ClaimWebhookEndpoints(ctx context.Context, head int64, now, until time.Time, lease string, limit int) ([]WebhookEndpoint, error)
	// WebhookWork reads what the endpoint (held by e.Lease) has to send
	// now: up to limit catalogued events after e.Cursor and up to head of
	// the types e wants (all when e.Types is empty), oldest first; for
	// each resource whose oldest retry of e is due by now, that
	// resource's retries of e in EventSeq order, with their events (up to
	// limit retries in all, a prefix in EventSeq order); and the
	// resources, among those of the new events, whose oldest retry of e
	// is not due, or whose retries the limit cut (their new events wait
	// behind them). Through is the Seq the cursor may move to once the
	// events are handled: the last event's when limit events came back,
	// head otherwise.
	WebhookWork(ctx context.Context, e *WebhookEndpoint, head int64, now time.Time, limit int) (*WebhookWork, error)
	// FinishWebhookRound records a delivery round of endpoint r.EndpointID
	// if lease still holds it, and reports whether it did (false: the
	// lease ended and another worker may have the endpoint; nothing
	// changed). In one go: the cursor moves to r.Through (never back),
	// the endpoint's delivery state is written, r.NewRetries are added
	// (one already there for the same event stays as it is), r.Retried
	// are rewritten (Attempts, NextAttemptAt), r.Done retries are removed,
	// r.Attempts are appended, and the lease ends.
	FinishWebhookRound(ctx context.Context, r *WebhookRound, lease string) (bool, error)
	// ReleaseWebhookEndpoint ends lease on the endpoint without recording
	// anything (a worker shutting down mid-round).
	ReleaseWebhookEndpoint(ctx context.Context, id, lease string) error
	// ReplayWebhookEvents adds a retry of the endpoint, due at `at` with
	// attempts 0 and given up at giveUpAt, for each catalogued event its
	// cursor has passed (a later one is sent in its turn anyway) created
	// in [from, to) whose type is in types (all when empty), up
	// to limit of the oldest; an event with a retry of the endpoint
	// already keeps it. It reports how many it added and whether the
	// range held more than limit.
	ReplayWebhookEvents(ctx context.Context, endpointID string, from, to time.Time, types []string, at, giveUpAt time.Time, limit int) (added int, more bool, err error)
	// ReplayWebhookEvent adds a retry of the endpoint for the catalogued
	// event seq, due at `at` with attempts 0 and given up at giveUpAt; an
	// event with a retry of the endpoint already keeps it, and one its
	// cursor has not passed is left to come in its turn. ErrNotFound
	// when the event is not (or no longer) catalogued, or the endpoint
	// does not exist.
	ReplayWebhookEvent(ctx context.Context, endpointID string, seq int64, at, giveUpAt time.Time) error
	// ListWebhookAttempts pages the recorded delivery attempts newest
	// first.
	ListWebhookAttempts(ctx context.Context, f WebhookAttemptFilter) (Page[WebhookAttempt], error)
}

// NewEvent is an event as an API transaction records it.
type NewEvent struct {
	ID         string // Webhook:<uuid>
	Type       string // e.g. OUTGOING_PAYMENT.COMPLETED
	ResourceID string // the id of data: Transaction:…, InternalAccount:…
	// Body is the envelope as the service sends it, without "sequence"
	// (known only once the event is catalogued); the store does not read
	// it.
	Body      []byte
	CreatedAt time.Time
}

// Event is a catalogued event.
type Event struct {
	Seq        int64 // 1, 2, 3, … over all events, in commit order
	ID         string
	Type       string
	ResourceID string
	Sequence   int64 // 1, 2, 3, … per ResourceID
	Body       []byte
	CreatedAt  time.Time
}

// EventFilter selects catalogued events; empty fields do not filter.
type EventFilter struct {
	Types      []string // any of these
	ResourceID string
	From, To   time.Time // CreatedAt in [From, To)
	Limit      int
	Cursor     string // the Seq (decimal) after which, older, the page starts
}

// Webhook endpoint payload styles.
const (
	PayloadSnapshot = "snapshot" // the resource as the API shows it
	PayloadThin     = "thin"     // ids, type and sequence; the receiver fetches the resource
)

// WebhookEndpoint is where events are delivered, and how far they have
// been.
type WebhookEndpoint struct {
	ID          string // WebhookEndpoint:<uuid>
	URL         string
	Description string
	Types       []string // the event types it wants; empty: all
	Payload     string   // PayloadSnapshot or PayloadThin
	// Default is the reference API's webhookEndpoint (GET/PATCH /config):
	// at most one endpoint is.
	Default bool
	Enabled bool
	// DisabledAt and DisabledReason say when and why an endpoint stopped
	// being delivered to (the platform, or its failures); zero when
	// enabled.
	DisabledAt     time.Time
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time

	// Delivery state, the worker's.
	Cursor int64 // the Seq through which events were handled
	// NextAttemptAt pauses the whole endpoint until then (every delivery
	// of its last round failed); zero: not paused.
	NextAttemptAt time.Time
	// FailingSince is when deliveries to it started failing without a
	// success since; zero while they succeed.
	FailingSince   time.Time
	FailedRounds   int // rounds in a row where every delivery failed
	LastSuccessAt  time.Time
	LastFailureAt  time.Time
	LastError      string
	Lease          string
	LeaseUntil     time.Time
	PendingRetries int // retries it holds, as reads report them
}

// WebhookRetry is an event an endpoint is to be sent again (or waits
// behind an earlier event of its resource).
type WebhookRetry struct {
	EndpointID    string
	EventSeq      int64
	ResourceID    string
	Attempts      int // attempts so far
	NextAttemptAt time.Time
	GiveUpAt      time.Time
	Event         *Event // as WebhookWork reads it
}

// WebhookWork is an endpoint's work for one round; see
// [WebhookTx.WebhookWork].
type WebhookWork struct {
	Events  []Event
	Retries []WebhookRetry
	// Waiting are resources with a retry of the endpoint that is not due
	// yet: their new events join the retries behind it.
	Waiting map[string]bool
	Through int64
}

// WebhookRound is what one delivery round to an endpoint changed; see
// [WebhookTx.FinishWebhookRound].
type WebhookRound struct {
	EndpointID string
	Through    int64
	// The endpoint's delivery state after the round.
	NextAttemptAt  time.Time
	FailingSince   time.Time
	FailedRounds   int
	LastSuccessAt  time.Time
	LastFailureAt  time.Time
	LastError      string
	Disable        bool // the failure window ran out: disable it now
	DisabledAt     time.Time
	DisabledReason string

	NewRetries []WebhookRetry
	Retried    []WebhookRetry // rewritten: Attempts, NextAttemptAt
	Done       []int64        // EventSeq of retries that ended
	Attempts   []WebhookAttempt
}

// WebhookAttempt is one delivery attempt of an event to an endpoint.
type WebhookAttempt struct {
	EndpointID     string
	EventSeq       int64
	EventID        string
	Attempt        int // 1, 2, … for this event and endpoint
	AttemptedAt    time.Time
	URL            string
	ResponseStatus int    // 0 when there was no HTTP answer
	Error          string // why it failed; "" for a 2xx
	Duration       time.Duration
	Final          bool // the last attempt: delivered, or given up
}

// WebhookAttemptFilter selects attempts; empty fields do not filter.
type WebhookAttemptFilter struct {
	EndpointID string
	EventID    string
	Failed     bool // only attempts that failed
	Limit      int
	Cursor     string
}
