package store

import (
	"context"
	"time"
)

// WebhookTx is the webhook outbox: events written in the same transaction
// as the change they report, and the record of their deliveries. It is part
// of [Tx].
//
// An event is PENDING until a delivery succeeds (DELIVERED) or its retries
// ran out (FAILED). Workers on several instances take events with
// [WebhookTx.ClaimWebhookEvents], which gives each due event to one worker
// at a time (a lease), and report the outcome with
// [WebhookTx.FinishWebhookAttempt], which only the lease holder can do.
type WebhookTx interface {
	// NextWebhookSequence is one more than the highest sequence of the
	// resource's events (1 for its first).
	NextWebhookSequence(ctx context.Context, resourceID string) (int64, error)
	// CreateWebhookEvent stores a new event. With Sequence 0 the store
	// gives it the resource's next sequence (as NextWebhookSequence would,
	// in the same statement) and sets e.Sequence. A taken id is
	// ErrConflict. A taken (ResourceID, Sequence) means a concurrent
	// transaction wrote an event of the same resource first: the store runs
	// the transaction again (as on a serialization failure), where the
	// next sequence then counts that event.
	CreateWebhookEvent(ctx context.Context, e *WebhookEvent) error
	// CreateWebhookEvents stores the events one transaction recorded, as
	// CreateWebhookEvent would one after the other (in that order, so a
	// resource's later event gets the later sequence), in one statement
	// where the store can: an execute records two events, and each
	// statement is a round trip and a parse inside the API's transaction.
	CreateWebhookEvents(ctx context.Context, es []*WebhookEvent) error
	GetWebhookEvent(ctx context.Context, id string) (*WebhookEvent, error)
	// ListWebhookEvents pages by id, newest first.
	ListWebhookEvents(ctx context.Context, f WebhookEventFilter) (Page[WebhookEvent], error)
	// ClaimWebhookEvents takes up to limit PENDING events whose
	// NextAttemptAt is not after now and that are the lowest PENDING
	// sequence of their resource (so a resource's events go out in
	// order), oldest due first. Each claimed event gets Lease = lease and
	// LeaseUntil = until, so no other claim takes it before until
	// (NextAttemptAt stays as it was); the
	// events are returned as updated, in the order they were recorded (by
	// id). On PostgreSQL rows another transaction is claiming are passed
	// over (SKIP LOCKED).
	ClaimWebhookEvents(ctx context.Context, now, until time.Time, lease string, limit int) ([]WebhookEvent, error)
	// ClaimWebhookFollowers extends a claim: it leases (as
	// ClaimWebhookEvents does) up to limit PENDING events, due by now, of
	// the resources of heads (events this lease claimed) that follow their
	// head, and returns them ordered by resource and sequence, so that for
	// each resource they are a run after its head. No other claim can take
	// them meanwhile, since their head is leased and pending: the worker
	// then sends a hot resource's events one after another in one round
	// instead of one event per round.
	ClaimWebhookFollowers(ctx context.Context, heads []WebhookEvent, now, until time.Time, lease string, limit int) ([]WebhookEvent, error)
	// ReleaseWebhookEvents ends lease on the events of ids it still holds
	// without recording an attempt, due again at `at` (the followers a
	// worker did not send because an earlier event of their resource
	// failed, or the round ran out of time).
	ReleaseWebhookEvents(ctx context.Context, ids []string, lease string, at time.Time) error
	// FinishWebhookAttempt records attempt a (a.Attempt must be the event's
	// Attempts + 1) and writes Status, Attempts (= a.Attempt),
	// NextAttemptAt, DeliveredAt and UpdatedAt of e, and LastStatus and
	// LastError (a's ResponseStatus and Error), clearing its lease, if the
	// event still holds lease. It reports whether it did (false: the lease
	// ended and another worker claimed the event; nothing changed).
	FinishWebhookAttempt(ctx context.Context, e *WebhookEvent, a *WebhookAttempt, lease string) (bool, error)
	// FinishWebhookAttempts is FinishWebhookAttempt for several events at
	// once (a worker's round), in one statement for the events whatever
	// their number (and, when some were retries, one more that keeps their
	// earlier attempts). It returns the ids of the events whose lease had
	// ended (nothing changed for them).
	FinishWebhookAttempts(ctx context.Context, outcomes []WebhookOutcome, lease string) (lost []string, err error)
	// ListWebhookAttempts returns the event's attempts, first first.
	ListWebhookAttempts(ctx context.Context, eventID string) ([]WebhookAttempt, error)
	// ReplayWebhookEvent makes the event PENDING again, due at `at`, to be
	// given up at giveUpAt, without a lease. ErrNotFound for a missing id.
	ReplayWebhookEvent(ctx context.Context, id string, at, giveUpAt time.Time) error
}

// Webhook event states.
const (
	WebhookPending   = "PENDING"
	WebhookDelivered = "DELIVERED"
	WebhookFailed    = "FAILED"
)

// WebhookEvent is one event of the outbox.
type WebhookEvent struct {
	ID         string // Webhook:<uuid>
	Type       string // e.g. OUTGOING_PAYMENT.COMPLETED
	ResourceID string // the id of data: Transaction:…, InternalAccount:…
	Sequence   int64  // 1, 2, … per ResourceID
	// Body is the event as the service recorded it; the store does not
	// read it. (The service stores the envelope without its sequence,
	// which is known only once the event is stored, and adds it when it
	// sends the event.)
	Body          []byte
	Status        string // WebhookPending, WebhookDelivered, WebhookFailed
	Attempts      int
	NextAttemptAt time.Time
	GiveUpAt      time.Time // after a failed attempt past this, FAILED
	Lease         string    // the claiming worker's token; "" when none
	// LeaseUntil is when Lease ends, as the claim that took it returns
	// it; other reads leave it zero.
	LeaseUntil  time.Time
	LastStatus  int // HTTP status of the last attempt; 0 for none
	LastError   string
	DeliveredAt time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WebhookEventFilter selects events; empty fields do not filter.
type WebhookEventFilter struct {
	Status     string
	ResourceID string
	Limit      int
	Cursor     string // id after which (older than which) the page starts
}

// WebhookOutcome is an attempt to record and the event as it is to be
// stored after it (see [WebhookTx.FinishWebhookAttempts]).
type WebhookOutcome struct {
	Event   WebhookEvent
	Attempt WebhookAttempt
}

// WebhookAttempt is one delivery attempt.
type WebhookAttempt struct {
	EventID        string
	Attempt        int // 1, 2, …
	AttemptedAt    time.Time
	URL            string
	ResponseStatus int    // 0 when there was no HTTP answer
	Error          string // why it failed; "" for a 2xx
	Duration       time.Duration
}
