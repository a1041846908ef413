package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"paywallet/service/store"
)

// ---- store.WebhookTx

func newWebhookEvent(resourceID string, seq int64, created time.Time) *store.WebhookEvent {
	id := newID("Webhook")
	return &store.WebhookEvent{
		ID: id, Type: "OUTGOING_PAYMENT.PENDING", ResourceID: resourceID, Sequence: seq,
		Body:   []byte(`{"id":"` + id + `","type":"OUTGOING_PAYMENT.PENDING","data":{"note":"Zoë"}}`),
		Status: store.WebhookPending, NextAttemptAt: created, GiveUpAt: created.Add(72 * time.Hour),
		CreatedAt: created, UpdatedAt: created,
	}
}

// appendEvent writes an event of the resource with the next sequence, as
// the service does.
func (f *fixture) appendEvent(resourceID string, created time.Time) *store.WebhookEvent {
	f.Helper()
	var e *store.WebhookEvent
	f.tx(func(tx store.Tx) error {
		seq, err := tx.NextWebhookSequence(f.ctx, resourceID)
		if err != nil {
			return err
		}
		e = newWebhookEvent(resourceID, seq, created)
		return tx.CreateWebhookEvent(f.ctx, e)
	})
	return e
}

func (f *fixture) webhookEvent(id string) store.WebhookEvent {
	f.Helper()
	var e *store.WebhookEvent
	f.tx(func(tx store.Tx) error {
		var err error
		e, err = tx.GetWebhookEvent(f.ctx, id)
		return err
	})
	return *e
}

func (f *fixture) claim(now, until time.Time, lease string, limit int) []store.WebhookEvent {
	f.Helper()
	var got []store.WebhookEvent
	f.tx(func(tx store.Tx) error {
		var err error
		got, err = tx.ClaimWebhookEvents(f.ctx, now, until, lease, limit)
		return err
	})
	return got
}

func eventIDs(es []store.WebhookEvent) []string {
	return ids(es, func(e *store.WebhookEvent) string { return e.ID })
}

func testWebhookEventRoundTrip(f *fixture) {
	r := newID("Transaction")
	var seq int64
	f.tx(func(tx store.Tx) error {
		var err error
		seq, err = tx.NextWebhookSequence(f.ctx, r)
		return err
	})
	if seq != 1 {
		f.Fatalf("first sequence %d", seq)
	}
	e := newWebhookEvent(r, 1, at(0))
	e.Attempts, e.LastStatus, e.LastError, e.Lease = 2, 503, "Service Unavailable", "lease-1"
	e.DeliveredAt = at(time.Minute)
	f.tx(func(tx store.Tx) error { return tx.CreateWebhookEvent(f.ctx, e) })
	same(f, "GetWebhookEvent", f.webhookEvent(e.ID), *e)
	second := f.appendEvent(r, at(time.Second))
	if second.Sequence != 2 {
		f.Fatalf("second sequence %d", second.Sequence)
	}
	if other := f.appendEvent(newID("InternalAccount"), at(0)); other.Sequence != 1 {
		f.Fatalf("another resource's first sequence %d", other.Sequence)
	}
	// Sequence 0: the store assigns the next one and reports it.
	for _, want := range []int64{3, 4} {
		e := newWebhookEvent(r, 0, at(2*time.Second))
		f.tx(func(tx store.Tx) error { return tx.CreateWebhookEvent(f.ctx, e) })
		if e.Sequence != want || f.webhookEvent(e.ID).Sequence != want {
			f.Fatalf("assigned sequence %d (stored %d), want %d", e.Sequence, f.webhookEvent(e.ID).Sequence, want)
		}
	}
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		dup := newWebhookEvent(newID("Transaction"), 1, at(0))
		dup.ID = e.ID
		return tx.CreateWebhookEvent(f.ctx, dup)
	})
	wantErr(f, "duplicate id", err, store.ErrConflict)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetWebhookEvent(f.ctx, newID("Webhook"))
		return err
	})
	wantErr(f, "missing event", err, store.ErrNotFound)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.ReplayWebhookEvent(f.ctx, newID("Webhook"), at(0), at(time.Hour))
	})
	wantErr(f, "replay of a missing event", err, store.ErrNotFound)
}

// testWebhookEventsBatch: CreateWebhookEvents gives each event its
// resource's next sequence as CreateWebhookEvent one after the other would,
// whether the events share a resource or not, stores them as given, and
// refuses a taken id with ErrConflict, writing none of the batch.
func testWebhookEventsBatch(f *fixture) {
	r, a, b := newID("Transaction"), newID("InternalAccount"), newID("Transaction")
	f.appendEvent(r, at(0)) // r is at 1, a and b have none
	create := func(es ...*store.WebhookEvent) error {
		return f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateWebhookEvents(f.ctx, es) })
	}
	distinct := []*store.WebhookEvent{newWebhookEvent(r, 0, at(time.Second)), newWebhookEvent(a, 0, at(time.Second)), newWebhookEvent(b, 0, at(time.Second))}
	if err := create(distinct...); err != nil {
		f.Fatal(err)
	}
	for i, want := range []int64{2, 1, 1} {
		e := distinct[i]
		if got := f.webhookEvent(e.ID); e.Sequence != want || got.Sequence != want {
			f.Fatalf("event %d: sequence %d (stored %d), want %d", i, e.Sequence, got.Sequence, want)
		}
		same(f, "batch event", f.webhookEvent(e.ID), *e)
	}
	shared := []*store.WebhookEvent{newWebhookEvent(a, 0, at(time.Minute)), newWebhookEvent(r, 0, at(time.Minute)), newWebhookEvent(a, 0, at(time.Minute))}
	if err := create(shared...); err != nil {
		f.Fatal(err)
	}
	for i, want := range []int64{2, 3, 3} {
		if e := shared[i]; e.Sequence != want || f.webhookEvent(e.ID).Sequence != want {
			f.Fatalf("shared-resource event %d: sequence %d, want %d", i, e.Sequence, want)
		}
	}
	fresh := newWebhookEvent(newID("Transaction"), 0, at(time.Hour))
	dup := newWebhookEvent(newID("Transaction"), 0, at(time.Hour))
	dup.ID = distinct[0].ID
	wantErr(f, "a batch with a taken id", create(fresh, dup), store.ErrConflict)
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetWebhookEvent(f.ctx, fresh.ID)
		return err
	})
	wantErr(f, "the rest of a refused batch", err, store.ErrNotFound)
}

// testWebhookRollback: an event written in a transaction that rolls back
// is not there, and does not use up its sequence.
func testWebhookRollback(f *fixture) {
	r := newID("Transaction")
	var e *store.WebhookEvent
	boom := errors.New("boom")
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		e = newWebhookEvent(r, 1, at(0))
		if err := tx.CreateWebhookEvent(f.ctx, e); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		f.Fatal(err)
	}
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.GetWebhookEvent(f.ctx, e.ID)
		return err
	})
	wantErr(f, "rolled-back event", err, store.ErrNotFound)
	if got := f.claim(at(time.Hour), at(2*time.Hour), "l", 10); len(got) != 0 {
		f.Fatalf("claimed %v", eventIDs(got))
	}
	if next := f.appendEvent(r, at(0)); next.Sequence != 1 {
		f.Fatalf("sequence after rollback %d", next.Sequence)
	}
}

// testWebhookSequenceRace: transactions appending events of one resource
// at once all commit, with the sequences 1..n.
func testWebhookSequenceRace(f *fixture) {
	r := newID("InternalAccount")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- f.s.Tx(f.ctx, func(tx store.Tx) error {
				if i%2 == 0 { // the store assigns the sequence
					return tx.CreateWebhookEvent(f.ctx, newWebhookEvent(r, 0, at(0)))
				}
				seq, err := tx.NextWebhookSequence(f.ctx, r)
				if err != nil {
					return err
				}
				return tx.CreateWebhookEvent(f.ctx, newWebhookEvent(r, seq, at(0)))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			f.Fatal(err)
		}
	}
	var page store.Page[store.WebhookEvent]
	f.tx(func(tx store.Tx) error {
		var err error
		page, err = tx.ListWebhookEvents(f.ctx, store.WebhookEventFilter{ResourceID: r, Limit: 100})
		return err
	})
	var seqs []int64
	for _, e := range page.Items {
		seqs = append(seqs, e.Sequence)
	}
	slices.Sort(seqs)
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(seqs, want) {
		f.Fatalf("sequences %v, want %v", seqs, want)
	}
}

// testWebhookClaim: a claim takes due events that head their resource,
// oldest due first, leases them until the given time, and only the lease
// holder finishes an attempt. A resource's next event becomes due once the
// one before it is DELIVERED or FAILED.
func testWebhookClaim(f *fixture) {
	a, b, c := newID("Transaction"), newID("Transaction"), newID("Transaction")
	a1 := f.appendEvent(a, at(0))
	a2 := f.appendEvent(a, at(0))
	b1 := f.appendEvent(b, at(time.Second))
	c1 := f.appendEvent(c, at(time.Hour)) // not due yet
	now := at(time.Minute)
	got := f.claim(now, now.Add(time.Minute), "lease-1", 10)
	if want := []string{a1.ID, b1.ID}; !slices.Equal(eventIDs(got), want) {
		f.Fatalf("claimed %v, want %v (a2 waits for a1, c1 is not due)", eventIDs(got), want)
	}
	for _, e := range got {
		if e.Lease != "lease-1" || !e.LeaseUntil.Equal(now.Add(time.Minute)) || e.NextAttemptAt.After(now) {
			f.Fatalf("claimed event %+v (want lease-1 until %v, due as it was)", e, now.Add(time.Minute))
		}
	}
	if again := f.claim(now, now.Add(time.Minute), "lease-2", 10); len(again) != 0 {
		f.Fatalf("claimed while leased: %v", eventIDs(again))
	}
	if limited := f.claim(now.Add(time.Hour), now.Add(2*time.Hour), "lease-3", 1); !slices.Equal(eventIDs(limited), []string{a1.ID}) {
		f.Fatalf("after the lease, limit 1: %v", eventIDs(limited))
	}
	// a1 is now held by lease-3: lease-1 can no longer finish it.
	finish := func(e store.WebhookEvent, lease, status string, attempt int, when time.Time) bool {
		f.Helper()
		var won bool
		f.tx(func(tx store.Tx) error {
			e.Status, e.UpdatedAt, e.NextAttemptAt = status, when, when.Add(time.Minute)
			e.LastStatus, e.LastError = 500, "Internal Server Error"
			if status == store.WebhookDelivered {
				e.LastStatus, e.LastError, e.DeliveredAt = 200, "", when
			}
			var err error
			won, err = tx.FinishWebhookAttempt(f.ctx, &e, &store.WebhookAttempt{EventID: e.ID, Attempt: attempt,
				AttemptedAt: when, URL: "https://example.com/hook", ResponseStatus: e.LastStatus, Error: e.LastError,
				Duration: 1500 * time.Microsecond}, lease)
			return err
		})
		return won
	}
	if finish(got[0], "lease-1", store.WebhookDelivered, 1, now) {
		f.Fatal("a lease that ended finished an attempt")
	}
	if !finish(got[0], "lease-3", store.WebhookPending, 1, now.Add(time.Hour)) {
		f.Fatal("the lease holder could not finish its attempt")
	}
	if finish(got[0], "lease-3", store.WebhookPending, 2, now.Add(time.Hour)) {
		f.Fatal("a finished lease finished a second attempt")
	}
	ev := f.webhookEvent(a1.ID)
	if ev.Attempts != 1 || ev.Lease != "" || ev.Status != store.WebhookPending || ev.LastStatus != 500 ||
		!ev.NextAttemptAt.Equal(now.Add(time.Hour+time.Minute)) {
		f.Fatalf("after a failed attempt: %+v", ev)
	}
	// Due again a minute later; b1's lease-1 has ended too.
	later := now.Add(time.Hour + time.Minute)
	got = f.claim(later, later.Add(time.Minute), "lease-4", 10)
	if want := []string{b1.ID, a1.ID, c1.ID}; !slices.ContainsFunc(got, func(e store.WebhookEvent) bool { return e.ID == a1.ID }) ||
		slices.ContainsFunc(got, func(e store.WebhookEvent) bool { return e.ID == a2.ID }) || len(got) != len(want) {
		f.Fatalf("claimed %v, want %v", eventIDs(got), want)
	}
	for _, e := range got {
		if !finish(e, "lease-4", store.WebhookDelivered, e.Attempts+1, later) {
			f.Fatalf("finish %s", e.ID)
		}
	}
	// a1 delivered: a2 is next.
	got = f.claim(later.Add(time.Minute), later.Add(2*time.Minute), "lease-5", 10)
	if !slices.Equal(eventIDs(got), []string{a2.ID}) {
		f.Fatalf("after a1: %v", eventIDs(got))
	}
	var attempts []store.WebhookAttempt
	f.tx(func(tx store.Tx) error {
		var err error
		attempts, err = tx.ListWebhookAttempts(f.ctx, a1.ID)
		return err
	})
	if len(attempts) != 2 || attempts[0].ResponseStatus != 500 || attempts[1].ResponseStatus != 200 ||
		attempts[0].Duration != 1500*time.Microsecond || attempts[1].URL != "https://example.com/hook" {
		f.Fatalf("attempts %+v", attempts)
	}
	if ev := f.webhookEvent(a1.ID); ev.Status != store.WebhookDelivered || !ev.DeliveredAt.Equal(later) || ev.Attempts != 2 {
		f.Fatalf("delivered event %+v", ev)
	}
	// A FAILED event does not hold its resource back; a replayed one does again.
	if !finish(got[0], "lease-5", store.WebhookFailed, 1, later.Add(time.Minute)) {
		f.Fatal("finish a2")
	}
	a3 := f.appendEvent(a, later)
	got = f.claim(later.Add(2*time.Minute), later.Add(3*time.Minute), "lease-6", 10)
	if !slices.Equal(eventIDs(got), []string{a3.ID}) {
		f.Fatalf("after a2 failed: %v", eventIDs(got))
	}
	replayAt := later.Add(10 * time.Minute)
	f.tx(func(tx store.Tx) error {
		return tx.ReplayWebhookEvent(f.ctx, a2.ID, replayAt, replayAt.Add(72*time.Hour))
	})
	ev = f.webhookEvent(a2.ID)
	if ev.Status != store.WebhookPending || !ev.NextAttemptAt.Equal(replayAt) || !ev.GiveUpAt.Equal(replayAt.Add(72*time.Hour)) || ev.Lease != "" {
		f.Fatalf("replayed %+v", ev)
	}
	got = f.claim(replayAt.Add(time.Hour), replayAt.Add(2*time.Hour), "lease-7", 10)
	if !slices.Equal(eventIDs(got), []string{a2.ID}) {
		f.Fatalf("after the replay: %v (a3 waits for a2)", eventIDs(got))
	}
}

// testWebhookClaimRace: workers claiming at once never get the same event.
func testWebhookClaimRace(f *fixture) {
	const n = 30
	want := map[string]bool{}
	for range n {
		want[f.appendEvent(newID("Transaction"), at(0)).ID] = true
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			lease := fmt.Sprintf("worker-%d", w)
			for range 20 {
				var got []store.WebhookEvent
				err := f.s.Tx(f.ctx, func(tx store.Tx) error {
					var err error
					got, err = tx.ClaimWebhookEvents(f.ctx, at(time.Minute), at(time.Hour), lease, 3)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, e := range got {
					if other, dup := seen[e.ID]; dup {
						mu.Unlock()
						errs <- fmt.Errorf("%s claimed by %s and %s", e.ID, other, lease)
						return
					}
					seen[e.ID] = lease
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.Fatal(err)
	}
	if len(seen) != n {
		f.Fatalf("claimed %d of %d events", len(seen), n)
	}
}

func testWebhookList(f *fixture) {
	var all []string
	for i := range 5 {
		e := f.appendEvent(newID("Transaction"), at(time.Duration(i)*time.Second))
		all = append(all, e.ID)
	}
	// Deliver the second and the fourth.
	got := f.claim(at(time.Minute), at(2*time.Minute), "l", 10)
	for _, e := range got {
		if e.ID != all[1] && e.ID != all[3] {
			continue
		}
		f.tx(func(tx store.Tx) error {
			e.Status, e.UpdatedAt, e.DeliveredAt = store.WebhookDelivered, at(time.Minute), at(time.Minute)
			_, err := tx.FinishWebhookAttempt(f.ctx, &e, &store.WebhookAttempt{EventID: e.ID, Attempt: 1, AttemptedAt: at(time.Minute)}, "l")
			return err
		})
	}
	list := func(filt store.WebhookEventFilter) store.Page[store.WebhookEvent] {
		var p store.Page[store.WebhookEvent]
		f.tx(func(tx store.Tx) error {
			var err error
			p, err = tx.ListWebhookEvents(f.ctx, filt)
			return err
		})
		return p
	}
	p := list(store.WebhookEventFilter{Limit: 2})
	if !slices.Equal(eventIDs(p.Items), []string{all[4], all[3]}) || !p.HasMore || p.NextCursor != all[3] || p.TotalCount != 5 {
		f.Fatalf("first page %v %+v", eventIDs(p.Items), p)
	}
	p = list(store.WebhookEventFilter{Limit: 2, Cursor: p.NextCursor})
	if !slices.Equal(eventIDs(p.Items), []string{all[2], all[1]}) || !p.HasMore {
		f.Fatalf("second page %v", eventIDs(p.Items))
	}
	p = list(store.WebhookEventFilter{Status: store.WebhookDelivered})
	if !slices.Equal(eventIDs(p.Items), []string{all[3], all[1]}) || p.HasMore || p.TotalCount != 2 {
		f.Fatalf("delivered %v", eventIDs(p.Items))
	}
	p = list(store.WebhookEventFilter{Status: store.WebhookPending, Limit: 100})
	if !slices.Equal(eventIDs(p.Items), []string{all[4], all[2], all[0]}) || p.TotalCount != 3 {
		f.Fatalf("pending %v", eventIDs(p.Items))
	}
}

// testWebhookRuns: behind the heads it claimed, a lease takes the later
// pending events of the same resources (a prefix of each run, in sequence
// order), which no other claim can take; FinishWebhookAttempts records a
// round at once and reports what the lease no longer held; released
// events are due again without an attempt.
func testWebhookRuns(f *fixture) {
	a, b, c := newID("Transaction"), newID("InternalAccount"), newID("Transaction")
	var as, bs []*store.WebhookEvent
	for range 4 {
		as = append(as, f.appendEvent(a, at(0)))
	}
	for range 3 {
		bs = append(bs, f.appendEvent(b, at(0)))
	}
	c1 := f.appendEvent(c, at(0))
	now := at(time.Minute)
	until := now.Add(time.Minute)
	heads := f.claim(now, until, "lease-1", 2) // a1 and b1, oldest due first
	if want := []string{as[0].ID, bs[0].ID}; !slices.Equal(eventIDs(heads), want) {
		f.Fatalf("heads %v, want %v", eventIDs(heads), want)
	}
	followers := func(heads []store.WebhookEvent, lease string, limit int) []store.WebhookEvent {
		f.Helper()
		var got []store.WebhookEvent
		f.tx(func(tx store.Tx) error {
			var err error
			got, err = tx.ClaimWebhookFollowers(f.ctx, heads, now, until, lease, limit)
			return err
		})
		return got
	}
	// Limit 4 of the 5 followers: a resource's run is cut at its end.
	got := followers(heads, "lease-1", 4)
	first, second := as[1:], bs[1:]
	if a > b {
		first, second = bs[1:], as[1:]
	}
	want := []string{first[0].ID, first[1].ID}
	if len(first) == 3 {
		want = append(want, first[2].ID, second[0].ID)
	} else {
		want = append(want, second[0].ID, second[1].ID)
	}
	if !slices.Equal(eventIDs(got), want) {
		f.Fatalf("followers %v, want %v (by resource, then sequence)", eventIDs(got), want)
	}
	for _, e := range got {
		if e.Lease != "lease-1" || !e.LeaseUntil.Equal(until) || e.NextAttemptAt.After(now) {
			f.Fatalf("follower %+v", e)
		}
	}
	if again := f.claim(now, until, "lease-2", 10); !slices.Equal(eventIDs(again), []string{c1.ID}) {
		f.Fatalf("another claim took %v, want only %s", eventIDs(again), c1.ID)
	}
	var err error
	f.tx(func(tx store.Tx) error {
		_, err = tx.ClaimWebhookFollowers(f.ctx, heads, now, until, "lease-2", 10)
		return nil
	})
	if err == nil {
		f.Fatal("followers of heads another lease holds were claimed")
	}
	// Finish a1 (delivered), a2 (delivered) and c1 (held by lease-2, so
	// lost) in one call; release a3.
	var a2 store.WebhookEvent
	for _, e := range got {
		if e.ID == as[1].ID {
			a2 = e
		}
	}
	outcome := func(e store.WebhookEvent) store.WebhookOutcome {
		e.Status, e.UpdatedAt, e.DeliveredAt, e.LastStatus = store.WebhookDelivered, now, now, 204
		return store.WebhookOutcome{Event: e, Attempt: store.WebhookAttempt{EventID: e.ID, Attempt: e.Attempts + 1,
			AttemptedAt: now, URL: "https://example.com/hook", ResponseStatus: 204, Duration: time.Millisecond}}
	}
	var lost []string
	f.tx(func(tx store.Tx) error {
		var err error
		lost, err = tx.FinishWebhookAttempts(f.ctx, []store.WebhookOutcome{outcome(heads[0]), outcome(a2), outcome(*c1)}, "lease-1")
		if err != nil {
			return err
		}
		return tx.ReleaseWebhookEvents(f.ctx, []string{as[2].ID, c1.ID}, "lease-1", now)
	})
	if !slices.Equal(lost, []string{c1.ID}) {
		f.Fatalf("lost %v, want %v", lost, []string{c1.ID})
	}
	for _, e := range []*store.WebhookEvent{as[0], as[1]} {
		ev := f.webhookEvent(e.ID)
		if ev.Status != store.WebhookDelivered || ev.Attempts != 1 || ev.Lease != "" || ev.LastStatus != 204 || !ev.DeliveredAt.Equal(now) {
			f.Fatalf("finished %+v", ev)
		}
		var attempts []store.WebhookAttempt
		f.tx(func(tx store.Tx) error {
			var err error
			attempts, err = tx.ListWebhookAttempts(f.ctx, e.ID)
			return err
		})
		if len(attempts) != 1 || attempts[0].ResponseStatus != 204 || attempts[0].Duration != time.Millisecond ||
			!attempts[0].AttemptedAt.Equal(now) || attempts[0].URL != "https://example.com/hook" {
			f.Fatalf("attempts of %s: %+v", e.ID, attempts)
		}
	}
	if ev := f.webhookEvent(c1.ID); ev.Status != store.WebhookPending || ev.Lease != "lease-2" {
		f.Fatalf("another lease's event changed: %+v", ev)
	}
	if ev := f.webhookEvent(as[2].ID); ev.Lease != "" || !ev.NextAttemptAt.Equal(now) || ev.Attempts != 0 {
		f.Fatalf("released %+v", ev)
	}
	// a3 now heads a, due at once; a4 still holds lease-1 until it ends.
	if got := f.claim(now, until, "lease-3", 10); !slices.Equal(eventIDs(got), []string{as[2].ID}) {
		f.Fatalf("after the round: %v, want %v", eventIDs(got), []string{as[2].ID})
	}
}

// testWebhookRetriedAttempts: an event retried through rounds
// (FinishWebhookAttempts) lists every attempt once, in order, each with
// its own answer, address and duration, whether it was the last one (kept
// with the event) or an earlier one; a round whose lease ended records
// nothing, and neither does a second finish of the same attempt.
func testWebhookRetriedAttempts(f *fixture) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := f.appendEvent("Transaction:retried", now)
	type try struct {
		status int
		err    string
		url    string
		took   time.Duration
		final  string
	}
	tries := []try{
		{503, "HTTP 503", "https://one.example.com/hook", 2 * time.Millisecond, store.WebhookPending},
		{0, "dial tcp: connection refused", "https://two.example.com/hook", 3 * time.Millisecond, store.WebhookPending},
		{204, "", "https://two.example.com/hook", 4 * time.Millisecond, store.WebhookDelivered},
	}
	list := func() []store.WebhookAttempt {
		f.Helper()
		var got []store.WebhookAttempt
		f.tx(func(tx store.Tx) error {
			var err error
			got, err = tx.ListWebhookAttempts(f.ctx, ev.ID)
			return err
		})
		return got
	}
	for i, tr := range tries {
		at := now.Add(time.Duration(i) * time.Hour)
		lease := fmt.Sprintf("lease-%d", i)
		got := f.claim(at, at.Add(time.Minute), lease, 10)
		if len(got) != 1 || got[0].ID != ev.ID || got[0].Attempts != i {
			f.Fatalf("round %d claimed %+v", i+1, got)
		}
		e := got[0]
		e.Status, e.UpdatedAt, e.NextAttemptAt, e.LastStatus, e.LastError = tr.final, at, at.Add(time.Hour), tr.status, tr.err
		if tr.final == store.WebhookDelivered {
			e.DeliveredAt = at
		}
		o := store.WebhookOutcome{Event: e, Attempt: store.WebhookAttempt{EventID: e.ID, Attempt: i + 1,
			AttemptedAt: at, URL: tr.url, ResponseStatus: tr.status, Error: tr.err, Duration: tr.took}}
		for k, l := range []string{lease, "lease-other", lease} { // the holder, a stranger, the holder again
			var lost []string
			f.tx(func(tx store.Tx) error {
				var err error
				lost, err = tx.FinishWebhookAttempts(f.ctx, []store.WebhookOutcome{o}, l)
				return err
			})
			if want := min(k, 1); len(lost) != want {
				f.Fatalf("round %d, finish %d under %s: lost %v, want %d lost", i+1, k+1, l, lost, want)
			}
		}
		attempts := list()
		if len(attempts) != i+1 {
			f.Fatalf("after round %d: %d attempts %+v", i+1, len(attempts), attempts)
		}
		for j, a := range attempts {
			w := tries[j]
			if a.EventID != ev.ID || a.Attempt != j+1 || a.ResponseStatus != w.status || a.Error != w.err || a.URL != w.url ||
				a.Duration != w.took || !a.AttemptedAt.Equal(now.Add(time.Duration(j)*time.Hour)) {
				f.Fatalf("after round %d, attempt %d is %+v, want %+v", i+1, j+1, a, w)
			}
		}
		if got := f.webhookEvent(ev.ID); got.Status != tr.final || got.Attempts != i+1 || got.LastStatus != tr.status || got.LastError != tr.err || got.Lease != "" {
			f.Fatalf("after round %d the event is %+v", i+1, got)
		}
	}
}
