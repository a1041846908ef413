package payments

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"paywallet/service/mail"
	"paywallet/service/store"
)

// The worker: one loop per instance (RunWorkers). Each round is one store
// transaction, committed lazily (workerTx), that
//
//  1. records the outcomes of the previous round (FinishWebhookRound, per
//     endpoint, under the lease it was sent with),
//  2. catalogues the event log (CatalogEvents: one instance at a time, in
//     commit order),
//  3. leases the endpoints that have work (ClaimWebhookEndpoints; on
//     PostgreSQL another instance's claims are passed over) and reads it.
//
// Then the deliveries go out with no transaction open: for each endpoint
// its events per resource in order (retries first), the resources
// concurrently, up to webhookParallel requests at once. A 2xx is a
// delivery; anything else (another status, a timeout, a refused
// connection, a redirect) makes the event a retry of that endpoint after
// WebhookRetryBase doubled per failure up to WebhookRetryMax, with
// jitter, until WebhookRetryFor has passed, and the resource's later
// events wait behind it. An endpoint whose every delivery of a round
// failed is paused with the same backoff and then probed with one
// delivery before the rest; one that has failed for WebhookDisableAfter
// without a success is disabled and the operator is e-mailed.

const (
	// catalogBatch bounds the events one CatalogEvents call moves, and
	// catalogRounds the calls of one worker round.
	catalogBatch  = 1000
	catalogRounds = 4
	// webhookRun bounds the events (new and retries) one round takes for
	// an endpoint.
	webhookRun = 256
	// webhookParallel bounds one endpoint's deliveries in flight.
	webhookParallel = 16
	// maxResponseKept bounds the receiver's answer kept with an attempt
	// and returned by the test webhook.
	maxResponseKept  = 4 << 10
	webhookUserAgent = "paywallet-webhooks/2"
)

// webhookLease is how long a claim holds an endpoint: longer than a round
// can take (a round stops sending at half of it).
func (s *Service) webhookLease() time.Duration {
	if t := s.cfg.WebhookClient.Timeout; t > 0 {
		return 2*t + 10*time.Second
	}
	return time.Minute
}

// runWebhookWorker delivers events until ctx ends: at once when a change
// on this instance recorded some, and every WebhookPollInterval; it drops
// events older than EventRetention at start and every hour.
func (s *Service) runWebhookWorker(ctx context.Context) {
	tick := time.NewTicker(s.cfg.WebhookPollInterval)
	defer tick.Stop()
	sweep := time.NewTicker(time.Hour)
	defer sweep.Stop()
	// Once at start as well: an instance restarted more often than
	// hourly would otherwise never drop anything.
	if _, err := s.DropOldEvents(ctx); err != nil && ctx.Err() == nil {
		s.logWorker(ctx, "event retention sweep failed", err)
	}
	for {
		if _, err := s.deliver(ctx, true); err != nil && ctx.Err() == nil {
			s.logWorker(ctx, "webhook worker failed", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-sweep.C:
			if _, err := s.DropOldEvents(ctx); err != nil && ctx.Err() == nil {
				s.logWorker(ctx, "event retention sweep failed", err)
			}
		case <-s.hooks.wake:
			// Let the changes that commit meanwhile join this round:
			// one round is one commit however many events it carries.
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.cfg.WebhookGather):
			}
		}
	}
}

// DeliverWebhooks catalogues the event log and sends every delivery that
// is due now, and reports how many were delivered (2xx). Events that
// become due because an earlier event of their resource was just
// delivered are sent in the same call.
func (s *Service) DeliverWebhooks(ctx context.Context) (int, error) { return s.deliver(ctx, false) }

// job is an endpoint's work in a round.
type job struct {
	ep   store.WebhookEndpoint
	work *store.WebhookWork
	head int64 // the event log's head when the round read it (metrics)
}

// deliver is DeliverWebhooks. With pace, a round follows the previous one
// by at least WebhookGather, so that under a steady stream of changes a
// round carries what came meanwhile instead of one event (and one commit)
// each.
func (s *Service) deliver(ctx context.Context, pace bool) (int, error) {
	delivered := 0
	var finished []*store.WebhookRound
	var lease string
	var started time.Time
	for round := 0; ; round++ {
		if pace && round > 0 {
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
		var jobs []job
		var disabled []*store.WebhookRound
		var exist map[string]bool // the endpoints, when the round looked (metrics)
		err := s.workerTx(ctx, func(tx store.Tx) error {
			jobs, disabled, exist = nil, nil, nil
			for _, r := range finished {
				won, err := tx.FinishWebhookRound(ctx, r, lease)
				if err != nil {
					return err
				}
				if !won {
					s.log.WarnContext(ctx, "webhook round finished after its lease ended", "endpoint", r.EndpointID)
				} else if r.Disable {
					disabled = append(disabled, r)
				}
			}
			if last {
				return nil
			}
			if s.metrics.endpointCheckDue(now) {
				eps, err := tx.ListWebhookEndpoints(ctx)
				if err != nil {
					return err
				}
				exist = make(map[string]bool, len(eps))
				for _, ep := range eps {
					exist[ep.ID] = true
				}
			}
			// A round catalogues at most catalogRounds batches: a
			// flood of events is delivered as it comes rather than
			// after all of it is catalogued. (A batch takes whole log
			// rows, so a short one does not mean the log is empty;
			// 0 means it is, or another instance catalogues now.)
			for range catalogRounds {
				n, err := tx.CatalogEvents(ctx, catalogBatch)
				if err != nil {
					return err
				}
				if n == 0 {
					break
				}
			}
			head, err := tx.EventsHead(ctx)
			if err != nil {
				return err
			}
			eps, err := tx.ClaimWebhookEndpoints(ctx, head, now, now.Add(s.webhookLease()), next, maxWebhookEndpoints)
			if err != nil {
				return err
			}
			for i := range eps {
				w, err := tx.WebhookWork(ctx, &eps[i], head, now, webhookRun)
				if err != nil {
					return err
				}
				jobs = append(jobs, job{eps[i], w, head})
			}
			return nil
		})
		if err != nil {
			return delivered, err
		}
		for _, r := range disabled {
			s.mailDisabled(ctx, r)
		}
		if exist != nil {
			s.metrics.keepEndpoints(exist, now)
		}
		if len(jobs) == 0 {
			if round == 0 {
				s.metrics.webhooksCaughtUp()
			}
			return delivered, nil
		}
		lease = next
		finished = make([]*store.WebhookRound, len(jobs))
		counts := make([]int, len(jobs))
		stopAt := started.Add(s.webhookLease() / 2)
		sigs := &roundSignatures{}
		var wg sync.WaitGroup
		for i := range jobs {
			wg.Go(func() { finished[i], counts[i] = s.deliverTo(ctx, &jobs[i].ep, jobs[i].work, stopAt, sigs) })
		}
		wg.Wait()
		if ctx.Err() != nil {
			// Shutting down: the leases end and the round is sent again.
			return delivered, nil
		}
		for _, n := range counts {
			delivered += n
		}
		for i := range jobs {
			s.observeRound(&jobs[i], finished[i])
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
	return s.cfg.Store.Tx(ctx, fn)
}

func newLease() string {
	var b [12]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// delivery is one event of a round, new or a retry.
type delivery struct {
	ev    *store.Event
	retry *store.WebhookRetry // nil for a new event
}

// outcome is what one attempt gave.
type outcome struct {
	attempt store.WebhookAttempt
	ok      bool
}

// deliverTo sends an endpoint's work of one round and returns the round to
// record and how many events it delivered.
func (s *Service) deliverTo(ctx context.Context, ep *store.WebhookEndpoint, w *store.WebhookWork, stopAt time.Time, sigs *roundSignatures) (*store.WebhookRound, int) {
	now := s.now()
	r := &store.WebhookRound{EndpointID: ep.ID, Through: w.Through, NextAttemptAt: ep.NextAttemptAt,
		FailingSince: ep.FailingSince, FailedRounds: ep.FailedRounds, LastSuccessAt: ep.LastSuccessAt,
		LastFailureAt: ep.LastFailureAt, LastError: ep.LastError}
	giveUp := now.Add(s.cfg.WebhookRetryFor)
	wait := func(ev *store.Event) {
		r.NewRetries = append(r.NewRetries, store.WebhookRetry{EndpointID: ep.ID, EventSeq: ev.Seq,
			ResourceID: ev.ResourceID, NextAttemptAt: now, GiveUpAt: giveUp})
	}

	// One run per resource: its due retries, then its new events.
	var runs [][]delivery
	at := map[string]int{}
	add := func(d delivery) {
		i, ok := at[d.ev.ResourceID]
		if !ok {
			i = len(runs)
			at[d.ev.ResourceID] = i
			runs = append(runs, nil)
		}
		runs[i] = append(runs[i], d)
	}
	retrying := make(map[int64]bool, len(w.Retries))
	for i := range w.Retries {
		add(delivery{ev: w.Retries[i].Event, retry: &w.Retries[i]})
		retrying[w.Retries[i].EventSeq] = true
	}
	for i := range w.Events {
		ev := &w.Events[i]
		switch {
		case retrying[ev.Seq]:
			// A probe that failed made it a retry; the cursor had not
			// passed it.
		case w.Waiting[ev.ResourceID]:
			wait(ev)
		default:
			add(delivery{ev: ev})
		}
	}
	if len(runs) == 0 {
		return r, 0
	}

	// A failing endpoint gets one delivery first; the rest only if it
	// succeeds. Until then its cursor stays where it is, and the events
	// read this round are read again next time.
	sent := make([][]outcome, len(runs))
	if ep.FailedRounds > 0 {
		o := s.attempt(ctx, ep, runs[0][0], sigs)
		sent[0] = append(sent[0], o)
		if !o.ok {
			r.Through, r.NewRetries = ep.Cursor, nil
			s.settle(r, ep, [][]delivery{runs[0][:1]}, sent[:1], now, giveUp)
			return r, 0
		}
	}

	// Every attempt but the round's very first checks the time: a round
	// that ran past half its lease stops, its unsent events becoming
	// retries, before another instance may take the endpoint (a receiver
	// that hangs until the client's timeout would otherwise make one round
	// outlast the lease, and two instances send the same events).
	var wg sync.WaitGroup
	slots := make(chan struct{}, webhookParallel)
	for i, run := range runs {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			for j := len(sent[i]); j < len(run); j++ {
				if j > 0 && !sent[i][j-1].ok {
					return // the rest waits behind the failed one
				}
				if ctx.Err() != nil || (i+j > 0 && time.Now().After(stopAt)) {
					return
				}
				sent[i] = append(sent[i], s.attempt(ctx, ep, run[j], sigs))
			}
		})
	}
	wg.Wait()
	return r, s.settle(r, ep, runs, sent, now, giveUp)
}

// settle turns a round's outcomes into what to record: attempts, retries
// added, rewritten and ended, and the endpoint's state. It returns the
// number of deliveries.
func (s *Service) settle(r *store.WebhookRound, ep *store.WebhookEndpoint, runs [][]delivery, sent [][]outcome, now, giveUp time.Time) int {
	ok, failed := 0, 0
	for i, run := range runs {
		for j, d := range run {
			if j >= len(sent[i]) {
				// Not sent: behind a failure, or out of time.
				if d.retry == nil {
					r.NewRetries = append(r.NewRetries, store.WebhookRetry{EndpointID: ep.ID, EventSeq: d.ev.Seq,
						ResourceID: d.ev.ResourceID, NextAttemptAt: now, GiveUpAt: giveUp})
				}
				continue
			}
			o := sent[i][j]
			a := o.attempt
			switch {
			case o.ok:
				ok++
				s.metrics.delivered(d.ev.CreatedAt, now)
				a.Final = true
				if d.retry != nil {
					r.Done = append(r.Done, d.retry.EventSeq)
				}
			case d.retry != nil && !now.Before(d.retry.GiveUpAt):
				failed++
				s.metrics.failedAttempt(true)
				a.Final = true
				r.Done = append(r.Done, d.retry.EventSeq)
				s.log.Warn("webhook delivery given up", "endpoint", ep.ID, "event", d.ev.ID, "type", d.ev.Type,
					"attempts", a.Attempt, "err", a.Error)
			default:
				failed++
				s.metrics.failedAttempt(false)
				next := now.Add(s.retryAfter(a.Attempt))
				if d.retry != nil {
					rr := *d.retry
					rr.Event = nil
					rr.Attempts, rr.NextAttemptAt = a.Attempt, earlier(next, rr.GiveUpAt)
					r.Retried = append(r.Retried, rr)
				} else {
					r.NewRetries = append(r.NewRetries, store.WebhookRetry{EndpointID: ep.ID, EventSeq: d.ev.Seq,
						ResourceID: d.ev.ResourceID, Attempts: a.Attempt, NextAttemptAt: earlier(next, giveUp), GiveUpAt: giveUp})
				}
			}
			r.Attempts = append(r.Attempts, a)
			if !o.ok {
				r.LastFailureAt, r.LastError = a.AttemptedAt, a.Error
			}
		}
	}
	switch {
	case ok > 0:
		r.LastSuccessAt, r.FailingSince, r.FailedRounds, r.NextAttemptAt = now, time.Time{}, 0, time.Time{}
	case failed > 0:
		r.FailedRounds++
		if r.FailingSince.IsZero() {
			r.FailingSince = now
		}
		r.NextAttemptAt = now.Add(s.retryAfter(r.FailedRounds))
		// A probe that failed is due again when the pause ends.
		for i := range r.NewRetries {
			r.NewRetries[i].NextAttemptAt = r.NextAttemptAt
		}
		for i := range r.Retried {
			if r.Retried[i].NextAttemptAt.Before(r.NextAttemptAt) {
				r.Retried[i].NextAttemptAt = r.NextAttemptAt
			}
		}
		if now.Sub(r.FailingSince) >= s.cfg.WebhookDisableAfter {
			r.Disable, r.DisabledAt = true, now
			r.DisabledReason = fmt.Sprintf("every delivery since %s failed (the last: %s); disabled after %s",
				timestamp(r.FailingSince), r.LastError, retentionWords(s.cfg.WebhookDisableAfter))
		}
	}
	return ok
}

// attempt delivers d to ep once, signed with sigs.
func (s *Service) attempt(ctx context.Context, ep *store.WebhookEndpoint, d delivery, sigs *roundSignatures) outcome {
	start := time.Now()
	a := store.WebhookAttempt{EndpointID: ep.ID, EventSeq: d.ev.Seq, EventID: d.ev.ID, Attempt: 1,
		AttemptedAt: s.now(), URL: ep.URL}
	if d.retry != nil {
		a.Attempt = d.retry.Attempts + 1
	}
	body := eventBody(d.ev)
	var err error
	if ep.Payload == store.PayloadThin {
		body, err = thinBody(d.ev)
	}
	var status int
	var answer string
	if err == nil {
		status, answer, err = s.post(ctx, ep.URL, body, func(h http.Header) error {
			return s.signShared(ctx, h, sigs, ep.Payload, d.ev.ID, body)
		})
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
	return outcome{attempt: a, ok: ok}
}

// post sends one delivery, its headers signed by sign, and returns the
// receiver's status (0 when it did not answer), the start of its answer,
// and why it failed.
func (s *Service) post(ctx context.Context, endpoint string, body []byte, sign func(http.Header) error) (status int, answer string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if err := sign(req.Header); err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	resp, err := s.cfg.WebhookClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseKept))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(kept), nil
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

// earlier is the earlier of two times.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mailDisabled tells the operator that the worker disabled an endpoint.
// Without an operator address it is logged only.
func (s *Service) mailDisabled(ctx context.Context, r *store.WebhookRound) {
	s.log.ErrorContext(ctx, "webhook endpoint disabled", "endpoint", r.EndpointID, "reason", r.DisabledReason)
	if s.cfg.OperatorEmail == "" {
		return
	}
	msg := mail.Message{
		From:    s.cfg.MailFrom,
		To:      s.cfg.OperatorEmail,
		Subject: "Webhook endpoint " + r.EndpointID + " was disabled",
		Text: "The payments service stopped delivering events to webhook endpoint " + r.EndpointID + ".\n\n" +
			"Why: " + r.DisabledReason + ".\n\n" +
			"Its events are kept for " + retentionWords(s.cfg.EventRetention) + ". When the receiver works again,\n" +
			"enable the endpoint (PATCH /webhooks/endpoints/" + r.EndpointID + " {\"enabled\": true}): it resumes\n" +
			"where it stopped. GET /events lists what it missed; POST /webhooks/endpoints/{id}/replay sends a range again.\n",
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mailTimeout)
	defer cancel()
	if err := s.mailer.Send(mctx, msg); err != nil {
		s.log.ErrorContext(ctx, "the e-mail about a disabled webhook endpoint was not sent", "endpoint", r.EndpointID, "err", err)
	}
}

// retentionWords says a duration in days or hours, as e-mails and errors
// do.
func retentionWords(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	case d >= 2*time.Hour && d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	}
	return d.String()
}

// DropOldEvents drops the events older than EventRetention (and what
// their deliveries recorded), in batches, and reports how many.
func (s *Service) DropOldEvents(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.EventRetention)
	total := 0
	for {
		var n int
		err := s.workerTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteEventsBefore(ctx, cutoff, catalogBatch)
			return err
		})
		total += n
		if err != nil || n < catalogBatch {
			return total, err
		}
		if ctx.Err() != nil {
			return total, errors.Join(ctx.Err())
		}
	}
}

// observeRound sets the metrics of an endpoint after this instance's
// round to it: the events still behind its cursor (the head the round
// read, less where the round left the cursor) plus its retries, and the
// age of the oldest event of the round's work left undelivered.
func (s *Service) observeRound(j *job, r *store.WebhookRound) {
	if r == nil {
		return
	}
	done := map[int64]bool{}
	for _, a := range r.Attempts {
		if a.Final {
			done[a.EventSeq] = true
		}
	}
	var oldest time.Time
	pending := int64(len(r.NewRetries))
	for i := range j.work.Retries {
		if !done[j.work.Retries[i].EventSeq] {
			pending++
			if ev := j.work.Retries[i].Event; ev != nil && (oldest.IsZero() || ev.CreatedAt.Before(oldest)) {
				oldest = ev.CreatedAt
			}
		}
	}
	for i := range j.work.Events {
		if ev := &j.work.Events[i]; !done[ev.Seq] && (oldest.IsZero() || ev.CreatedAt.Before(oldest)) {
			oldest = ev.CreatedAt
		}
	}
	lag := 0.0
	if !oldest.IsZero() {
		lag = max(s.now().Sub(oldest).Seconds(), 0)
	}
	s.metrics.webhookEndpointRound(j.ep.ID, max(j.head-r.Through, 0)+pending, lag)
}
