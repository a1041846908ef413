package payments

import (
	"bytes"
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"paywallet/service/ids"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// The delivery worker. Each round claims the due head event of up to
// webhookBatch resources (store.WebhookTx.ClaimWebhookEvents, leased to
// this worker so no other instance sends it meanwhile) and the pending
// events queued behind each head (ClaimWebhookFollowers), POSTs each
// resource's events one after the other while the resources go
// concurrently, and records the outcomes in the next round's transaction
// (FinishWebhookAttempts: one statement for the whole round, two when it
// holds retries). A 2xx is a delivery; anything else (another status, a timeout, a
// refused connection, a redirect) is retried after WebhookRetryBase
// doubled per failure up to WebhookRetryMax, each wait drawn from its upper
// half (jitter), until WebhookRetryFor after the event was recorded (or
// replayed); then it is FAILED. A resource's next event waits for the
// previous one to be DELIVERED or FAILED.
//
// The HTTP calls run outside any store transaction and on the worker's own
// goroutine, with the client's timeout (10 s), so a slow receiver never
// holds a database connection or a request.

const (
	webhookBatch = 16
	// webhookRun bounds the followers one round takes behind its heads.
	webhookRun = 256
	// maxResponseKept bounds the receiver's answer kept with an attempt
	// and returned by the test webhook.
	maxResponseKept  = 4 << 10
	webhookUserAgent = "paywallet-webhooks/1"
)

// webhookLease is how long a claim holds an event: longer than one
// delivery can take.
func (s *Service) webhookLease() time.Duration {
	if t := s.cfg.WebhookClient.Timeout; t > 0 {
		return 2*t + 10*time.Second
	}
	return time.Minute
}

// runWebhookWorker delivers events until ctx ends: at once when a change
// on this instance recorded some, and every WebhookPollInterval.
func (s *Service) runWebhookWorker(ctx context.Context) {
	tick := time.NewTicker(s.cfg.WebhookPollInterval)
	defer tick.Stop()
	for {
		if _, err := s.deliver(ctx, true); err != nil && ctx.Err() == nil {
			s.log.Error("webhook delivery worker failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.hooks.wake:
			// Let the changes that commit meanwhile join this round:
			// one round is two commits however many events it carries.
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.cfg.WebhookGather):
			}
		}
	}
}

// DeliverWebhooks sends every event that is due now and reports how many
// were delivered (2xx). Events that become due because an earlier event of
// their resource was just delivered are sent in the same call.
//
// Each round is one store transaction that records the outcomes of the
// previous round's deliveries and claims the next batch, committed lazily
// (workerTx), so on SQLite the outbox costs the API little write time: no
// fsync of its own, a handful of statements.
func (s *Service) DeliverWebhooks(ctx context.Context) (int, error) { return s.deliver(ctx, false) }

// deliver is DeliverWebhooks. With pace, a round that follows a round
// that was not full starts WebhookGather after that one started, so that
// under a steady stream of changes each round carries what came meanwhile
// instead of one event (and one commit) each.
//
// A round claims the due head event of up to webhookBatch resources and,
// behind each head, the run of that resource's later pending events
// (ClaimWebhookFollowers, up to webhookRun in all). Each resource's run is
// sent in order, one event after the other, the runs of different
// resources at once; a run stops at the first event that is to be retried
// (the rest are released, due again behind it) or when the round has used
// half its lease. Without runs a resource that changes often (a wallet's
// balance) got one event per round and fell behind without end.
func (s *Service) deliver(ctx context.Context, pace bool) (int, error) {
	delivered := 0
	var outcomes []store.WebhookOutcome
	var unsent []string
	var lease string
	var started time.Time
	for round := 0; ; round++ {
		if pace && round > 0 && len(outcomes) < webhookBatch {
			if wait := time.Until(started.Add(s.cfg.WebhookGather)); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return delivered, nil
				case <-t.C:
				}
			}
		}
		started = time.Now()
		last := round == 100
		next := newLease()
		now := s.now()
		var batch []store.WebhookEvent
		var endpoint string
		err := s.workerTx(ctx, func(tx store.Tx) error {
			batch = nil
			lost, err := tx.FinishWebhookAttempts(ctx, outcomes, lease)
			if err != nil {
				return err
			}
			for _, id := range lost {
				s.log.Warn("webhook attempt finished after its lease ended", "id", id)
			}
			if err := tx.ReleaseWebhookEvents(ctx, unsent, lease, now); err != nil {
				return err
			}
			if last {
				return nil
			}
			until := now.Add(s.webhookLease())
			heads, err := tx.ClaimWebhookEvents(ctx, now, until, next, webhookBatch)
			if err != nil || len(heads) == 0 {
				return err
			}
			followers, err := tx.ClaimWebhookFollowers(ctx, heads, now, until, next, webhookRun)
			if err != nil {
				return err
			}
			batch = append(heads, followers...)
			c, err := s.emitConfig(ctx, tx)
			endpoint = c.WebhookEndpoint
			return err
		})
		if err != nil || len(batch) == 0 {
			return delivered, err
		}
		lease = next
		runs := webhookRuns(batch)
		results := make([][]store.WebhookOutcome, len(runs))
		stopAt := started.Add(s.webhookLease() / 2)
		var wg sync.WaitGroup
		for i, run := range runs {
			wg.Go(func() {
				for j := range run {
					if ctx.Err() != nil || (j > 0 && time.Now().After(stopAt)) {
						return
					}
					o := s.attempt(ctx, &run[j], endpoint)
					results[i] = append(results[i], o)
					if o.Event.Status == store.WebhookPending {
						return // retried later; the rest of the run waits behind it
					}
				}
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			// Shutting down: the leases end and the events are sent again.
			return delivered, nil
		}
		outcomes, unsent = outcomes[:0], unsent[:0]
		for i, run := range runs {
			outcomes = append(outcomes, results[i]...)
			for _, e := range run[len(results[i]):] {
				unsent = append(unsent, e.ID)
			}
		}
		for _, o := range outcomes {
			if o.Event.Status == store.WebhookDelivered {
				delivered++
			}
		}
	}
}

// workerTx runs a round's transaction with a lazy commit where the store
// offers one (store.LazyStore): losing a round's claims or outcomes to a
// crash only means the events are sent again, and on SQLite an fsync per
// round would hold the one writer connection the API waits for. The round
// emits no events, so it needs no outboxStore.
func (s *Service) workerTx(ctx context.Context, fn func(store.Tx) error) error {
	if l, ok := s.cfg.Store.(store.LazyStore); ok {
		return l.TxLazy(ctx, fn)
	}
	return s.store.Tx(ctx, fn)
}

// webhookRuns groups a claim (heads, then followers ordered by resource
// and sequence) into one run per resource, head first.
func webhookRuns(batch []store.WebhookEvent) [][]store.WebhookEvent {
	at := map[string]int{}
	var runs [][]store.WebhookEvent
	for _, e := range batch {
		i, ok := at[e.ResourceID]
		if !ok {
			i = len(runs)
			at[e.ResourceID] = i
			runs = append(runs, nil)
		}
		runs[i] = append(runs[i], e)
	}
	for _, run := range runs {
		slices.SortFunc(run, func(a, b store.WebhookEvent) int { return cmp.Compare(a.Sequence, b.Sequence) })
	}
	return runs
}

func newLease() string {
	var b [12]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// post sends one signed delivery and returns the receiver's status (0 when
// it did not answer), the start of its answer, and why it failed.
func (s *Service) post(ctx context.Context, endpoint, id string, body []byte) (status int, answer string, err error) {
	h, err := s.hooks.signer.Sign(id, body, s.now())
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set(webhooksig.CompatHeader, h.Compat)
	req.Header.Set(webhooksig.Header, h.Signature)
	resp, err := s.cfg.WebhookClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseKept))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(kept), nil
}

// attempt delivers e once and returns what to record.
func (s *Service) attempt(ctx context.Context, e *store.WebhookEvent, endpoint string) store.WebhookOutcome {
	start := time.Now()
	a := store.WebhookAttempt{EventID: e.ID, Attempt: e.Attempts + 1, AttemptedAt: s.now(), URL: endpoint}
	var status int
	var answer string
	var err error
	if endpoint == "" {
		err = errors.New("no webhook endpoint is configured")
	} else {
		status, answer, err = s.post(ctx, endpoint, e.ID, eventBody(e))
	}
	a.Duration = time.Since(start)
	a.ResponseStatus = status
	ok := err == nil && status >= 200 && status < 300
	switch {
	case err != nil:
		a.Error = err.Error()
	case !ok:
		a.Error = "HTTP " + strconv.Itoa(status)
		if answer != "" {
			a.Error += ": " + truncate(answer, 200)
		}
	}
	now := s.now()
	next := *e
	next.UpdatedAt, next.LastStatus, next.LastError = now, status, a.Error
	switch {
	case ok:
		next.Status, next.DeliveredAt = store.WebhookDelivered, now
	case !now.Before(e.GiveUpAt):
		next.Status = store.WebhookFailed
		s.log.Warn("webhook delivery failed for good", "id", e.ID, "type", e.Type, "attempts", a.Attempt, "err", a.Error)
	default:
		next.NextAttemptAt = now.Add(s.retryAfter(a.Attempt))
		if next.NextAttemptAt.After(e.GiveUpAt) {
			next.NextAttemptAt = e.GiveUpAt
		}
	}
	return store.WebhookOutcome{Event: next, Attempt: a}
}

// retryAfter is the wait after the n-th failed attempt: WebhookRetryBase ×
// 2^(n-1), at most WebhookRetryMax, drawn from the upper half.
func (s *Service) retryAfter(n int) time.Duration {
	d := s.cfg.WebhookRetryMax
	if n-1 < 40 {
		if b := s.cfg.WebhookRetryBase << (n - 1); b > 0 && b < d {
			d = b
		}
	}
	return d/2 + rand.N(d/2+1)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ---- the test webhook

// TestWebhookResponse is the reference's TestWebhookResponse.
type TestWebhookResponse struct {
	URL            string `json:"url,omitempty"`
	ResponseStatus int    `json:"response_status"`
	ResponseBody   string `json:"response_body,omitempty"`
}

// TestWebhook sends a TEST event to the configured endpoint now, outside
// the outbox (POST /sandbox/webhooks/test, sandbox only), and answers the
// receiver's status and body when it answered 2xx; WEBHOOK_DELIVERY_ERROR
// (the same fields under details) otherwise, WEBHOOK_ENDPOINT_NOT_SET
// without an endpoint, and FORBIDDEN in production mode.
func (s *Service) TestWebhook(ctx context.Context) (TestWebhookResponse, error) {
	if s.mode != ModeSandbox {
		return TestWebhookResponse{}, ErrSandboxOnly
	}
	c, err := read(ctx, s, func(tx store.Tx) (platformConfig, error) { return s.readConfig(ctx, tx) })
	if err != nil {
		return TestWebhookResponse{}, err
	}
	if c.WebhookEndpoint == "" {
		return TestWebhookResponse{}, errorf("WEBHOOK_ENDPOINT_NOT_SET", "no webhookEndpoint is configured; set one with PATCH /config")
	}
	id := ids.New("Webhook")
	event, err := encodeEnvelope(webhookEnvelope{ID: id, Type: webhooksig.Test, Timestamp: timestamp(s.now())})
	if err != nil {
		return TestWebhookResponse{}, err
	}
	status, answer, err := s.post(ctx, c.WebhookEndpoint, id, event)
	out := TestWebhookResponse{URL: c.WebhookEndpoint, ResponseStatus: status, ResponseBody: answer}
	if err != nil || status < 200 || status > 299 {
		msg := "the webhook endpoint answered " + strconv.Itoa(status)
		details := map[string]any{"url": out.URL, "response_status": status, "response_body": answer}
		if err != nil {
			msg = "the webhook endpoint did not answer: " + err.Error()
			details["error"] = err.Error()
		}
		return TestWebhookResponse{}, &Error{Code: "WEBHOOK_DELIVERY_ERROR", Message: msg, Details: details}
	}
	return out, nil
}

// ---- deliveries (our extension)

// WebhookDelivery is an event of the outbox with its attempts, as GET
// /webhooks/deliveries shows it.
type WebhookDelivery struct {
	ID                 string           `json:"id"`
	Type               string           `json:"type"`
	ResourceID         string           `json:"resourceId"`
	Sequence           int64            `json:"sequence"`
	Status             string           `json:"status"`
	AttemptCount       int              `json:"attemptCount"`
	NextAttemptAt      string           `json:"nextAttemptAt,omitempty"`
	GiveUpAt           string           `json:"giveUpAt,omitempty"`
	DeliveredAt        string           `json:"deliveredAt,omitempty"`
	LastResponseStatus int              `json:"lastResponseStatus,omitempty"`
	LastError          string           `json:"lastError,omitempty"`
	CreatedAt          string           `json:"createdAt"`
	UpdatedAt          string           `json:"updatedAt"`
	Attempts           []WebhookAttempt `json:"attempts"`
	Event              json.RawMessage  `json:"event"`
}

type WebhookAttempt struct {
	Attempt        int    `json:"attempt"`
	AttemptedAt    string `json:"attemptedAt"`
	URL            string `json:"url"`
	ResponseStatus int    `json:"responseStatus,omitempty"`
	Error          string `json:"error,omitempty"`
	DurationMs     int64  `json:"durationMs"`
}

func deliveryJSON(e *store.WebhookEvent, attempts []store.WebhookAttempt) WebhookDelivery {
	d := WebhookDelivery{ID: e.ID, Type: e.Type, ResourceID: e.ResourceID, Sequence: e.Sequence, Status: e.Status,
		AttemptCount: e.Attempts, LastResponseStatus: e.LastStatus, LastError: e.LastError,
		CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.UpdatedAt), Event: json.RawMessage(eventBody(e)),
		Attempts: make([]WebhookAttempt, 0, len(attempts))}
	if e.Status == store.WebhookPending {
		d.NextAttemptAt, d.GiveUpAt = timestamp(e.NextAttemptAt), timestamp(e.GiveUpAt)
	}
	if !e.DeliveredAt.IsZero() {
		d.DeliveredAt = timestamp(e.DeliveredAt)
	}
	for _, a := range attempts {
		d.Attempts = append(d.Attempts, WebhookAttempt{Attempt: a.Attempt, AttemptedAt: timestamp(a.AttemptedAt), URL: a.URL,
			ResponseStatus: a.ResponseStatus, Error: a.Error, DurationMs: a.Duration.Milliseconds()})
	}
	return d
}

var deliveryStatuses = []string{store.WebhookPending, store.WebhookDelivered, store.WebhookFailed}

// WebhookDeliveryFilter is the query of ListWebhookDeliveries.
type WebhookDeliveryFilter struct {
	Status     string `query:"status"` // PENDING, DELIVERED or FAILED
	ResourceID string `query:"resourceId"`
	Page       PageRequest
}

// ListWebhookDeliveries is a page of the outbox (GET /webhooks/deliveries):
// newest first, with each event's attempts; filters status and resourceId,
// limit and cursor as every list.
func (s *Service) ListWebhookDeliveries(ctx context.Context, req WebhookDeliveryFilter) (wire.List[WebhookDelivery], error) {
	var fe fieldErrors
	f := store.WebhookEventFilter{Status: req.Status, ResourceID: req.ResourceID}
	f.Limit, f.Cursor = req.Page.check("Webhook", &fe)
	if f.Status != "" && f.Status != store.WebhookPending && f.Status != store.WebhookDelivered && f.Status != store.WebhookFailed {
		fe.addConstraint("status", "is not a delivery status", wire.FieldConstraint{Enum: deliveryStatuses})
	}
	if len(f.ResourceID) > 200 {
		fe.add("resourceId", "is not a resource id")
	}
	if e := fe.err(); e != nil {
		return wire.List[WebhookDelivery]{}, e
	}
	return listPageTx(ctx, s, func(tx store.Tx) (store.Page[store.WebhookEvent], error) { return tx.ListWebhookEvents(ctx, f) },
		func(tx store.Tx, e *store.WebhookEvent) (WebhookDelivery, error) {
			attempts, err := tx.ListWebhookAttempts(ctx, e.ID)
			if err != nil {
				return WebhookDelivery{}, err
			}
			return deliveryJSON(e, attempts), nil
		})
}

// ReplayWebhookDelivery sends an event of the outbox again (POST
// /webhooks/deliveries/{id}/replay): the event (any status) goes out now,
// with the same id and body, and is retried for another WebhookRetryFor.
// It goes out after the earlier pending events of its resource and holds
// the later ones back until it is delivered. It answers the delivery.
func (s *Service) ReplayWebhookDelivery(ctx context.Context, id string) (WebhookDelivery, error) {
	notFound := errorf(CodeNotFound, "no webhook delivery with this id")
	if !ids.Valid("Webhook", id) {
		return WebhookDelivery{}, notFound
	}
	out, err := commit(ctx, s, "", nil, func(tx store.Tx) (WebhookDelivery, error) {
		now := s.now()
		err := tx.ReplayWebhookEvent(ctx, id, now, now.Add(s.cfg.WebhookRetryFor))
		if errors.Is(err, store.ErrNotFound) {
			return WebhookDelivery{}, notFound
		}
		if err != nil {
			return WebhookDelivery{}, err
		}
		e, err := tx.GetWebhookEvent(ctx, id)
		if err != nil {
			return WebhookDelivery{}, err
		}
		attempts, err := tx.ListWebhookAttempts(ctx, id)
		if err != nil {
			return WebhookDelivery{}, err
		}
		return deliveryJSON(e, attempts), nil
	})
	if err == nil {
		s.wakeWebhooks()
	}
	return out, err
}
