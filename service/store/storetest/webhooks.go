package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"paywallet/service/store"
)

// ---- store.WebhookTx

// newEvent is an event of resource as the service records it.
func newEvent(resourceID, typ string, created time.Time) store.NewEvent {
	id := newID("Webhook")
	return store.NewEvent{ID: id, Type: typ, ResourceID: resourceID, CreatedAt: created,
		Body: []byte(`{"id":"` + id + `","type":"` + typ + `","data":{"note":"Zoë"}}`)}
}

// record records the events in a transaction of their own, with one
// RecordEvents call per group.
func (f *fixture) record(groups ...[]store.NewEvent) {
	f.Helper()
	f.tx(func(tx store.Tx) error {
		for _, g := range groups {
			if err := tx.RecordEvents(f.ctx, g); err != nil {
				return err
			}
		}
		return nil
	})
}

// lazy runs fn as the webhook worker does: in a lazy transaction where the
// store has them.
func (f *fixture) lazy(fn func(store.Tx) error) error {
	if l, ok := f.s.(store.LazyStore); ok {
		return l.TxLazy(f.ctx, fn)
	}
	return f.s.Tx(f.ctx, fn)
}

// catalogOnce runs CatalogEvents once, as the worker does.
func (f *fixture) catalogOnce(limit int) int {
	f.Helper()
	var n int
	if err := f.lazy(func(tx store.Tx) (err error) { n, err = tx.CatalogEvents(f.ctx, limit); return err }); err != nil {
		f.Fatalf("CatalogEvents: %v", err)
	}
	return n
}

// catalog runs CatalogEvents until it moves events and returns how many
// it moved (0 after two minutes). A log row may not be final at once:
// on PostgreSQL it is once every transaction older than its own has
// ended, in the whole cluster, other tests' included.
func (f *fixture) catalog(limit int) int {
	f.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if n := f.catalogOnce(limit); n > 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// catalogThrough runs CatalogEvents until the head is at least head.
func (f *fixture) catalogThrough(head int64) {
	f.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for f.head() < head {
		if time.Now().After(deadline) {
			f.Fatalf("the catalog's head is %d after two minutes, want %d", f.head(), head)
		}
		if f.catalogOnce(100) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func (f *fixture) head() int64 {
	f.Helper()
	var h int64
	f.tx(func(tx store.Tx) (err error) { h, err = tx.EventsHead(f.ctx); return err })
	return h
}

func (f *fixture) event(id string) store.Event {
	f.Helper()
	var e *store.Event
	f.tx(func(tx store.Tx) (err error) { e, err = tx.GetEvent(f.ctx, id); return err })
	return *e
}

func (f *fixture) events(filt store.EventFilter) store.Page[store.Event] {
	f.Helper()
	var p store.Page[store.Event]
	f.tx(func(tx store.Tx) (err error) { p, err = tx.ListEvents(f.ctx, filt); return err })
	return p
}

// allEvents lists the whole catalog, oldest first.
func (f *fixture) allEvents() []store.Event {
	f.Helper()
	all, err := store.AllPages(func(c string) (store.Page[store.Event], error) {
		var p store.Page[store.Event]
		err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) {
			p, err = tx.ListEvents(f.ctx, store.EventFilter{Limit: 100, Cursor: c})
			return err
		})
		return p, err
	})
	if err != nil {
		f.Fatal(err)
	}
	slices.Reverse(all)
	return all
}

func evIDs(es []store.Event) []string { return ids(es, func(e *store.Event) string { return e.ID }) }

// wantCatalogued checks that e is catalogued as recorded, with seq and
// sequence.
func (f *fixture) wantCatalogued(e store.NewEvent, seq, sequence int64) {
	f.Helper()
	same(f, "event "+e.ID, f.event(e.ID), store.Event{Seq: seq, ID: e.ID, Type: e.Type, ResourceID: e.ResourceID,
		Sequence: sequence, Body: e.Body, CreatedAt: e.CreatedAt})
}

// testEventsCatalog: a transaction's events are one row of the log
// (several calls with no statement between them join one row), moved
// whole by CatalogEvents in the order the transactions committed; the
// catalog numbers all events 1, 2, 3, … (Seq) and each resource's from 1
// (Sequence) across transactions; nothing is moved twice.
func testEventsCatalog(f *fixture) {
	r, x, y := newID("Transaction"), newID("InternalAccount"), newID("Customer")
	if f.head() != 0 || f.catalogOnce(10) != 0 {
		f.Fatal("an empty store has events")
	}
	// Four transactions, rows of 2, 1, 1 (with an empty call, which
	// writes nothing) and 1 events.
	a1, a2 := newEvent(r, "OUTGOING_PAYMENT.PENDING", at(0)), newEvent(x, "INTERNAL_ACCOUNT.BALANCE_UPDATED", at(0))
	b1 := newEvent(r, "OUTGOING_PAYMENT.COMPLETED", at(time.Second))
	c1, c2 := newEvent(r, "OUTGOING_PAYMENT.FAILED", at(2*time.Second)), newEvent(y, "CUSTOMER.UPDATED", at(2*time.Second))
	c2.Body = nil
	f.record([]store.NewEvent{a1, a2})
	f.record([]store.NewEvent{b1})
	f.record(nil, []store.NewEvent{c1})
	f.record([]store.NewEvent{c2})
	if f.head() != 0 {
		f.Fatal("recorded events are in the catalog before CatalogEvents")
	}
	// Limit 1: the first row, whole (two events).
	if n := f.catalog(1); n != 2 || f.head() != 2 {
		f.Fatalf("first catalog moved %d, head %d; want the first row's 2", n, f.head())
	}
	// Limit 2: b1's row and c1's, one event each.
	if n := f.catalog(2); n != 2 || f.head() != 4 {
		f.Fatalf("second catalog moved %d, head %d; want b1 and c1 (rows of 1)", n, f.head())
	}
	if n := f.catalog(10); n != 1 || f.head() != 5 {
		f.Fatalf("third catalog moved %d, head %d", n, f.head())
	}
	if n := f.catalogOnce(10); n != 0 {
		f.Fatalf("a drained log moved %d", n)
	}
	c2.Body = []byte{}
	f.wantCatalogued(a1, 1, 1)
	f.wantCatalogued(a2, 2, 1)
	f.wantCatalogued(b1, 3, 2)
	f.wantCatalogued(c1, 4, 3)
	f.wantCatalogued(c2, 5, 1)
	err := f.s.Tx(f.ctx, func(tx store.Tx) error { _, err := tx.GetEvent(f.ctx, newID("Webhook")); return err })
	wantErr(f, "missing event", err, store.ErrNotFound)
	// A later transaction continues both counts.
	d1 := newEvent(r, "OUTGOING_PAYMENT.REFUNDED", at(time.Minute))
	f.record([]store.NewEvent{d1})
	f.catalogThrough(6)
	f.wantCatalogued(d1, 6, 4)
	err = f.s.Tx(f.ctx, func(tx store.Tx) error {
		return tx.RecordEvents(f.ctx, []store.NewEvent{{ID: newID("Webhook"), Type: "X", CreatedAt: at(0)}})
	})
	if err == nil {
		f.Error("an event without a resource was recorded")
	}
}

// testEventsRollback: a transaction that rolls back records nothing,
// whether or not it sent a statement after RecordEvents.
func testEventsRollback(f *fixture) {
	boom := errors.New("boom")
	for _, after := range []bool{false, true} {
		err := f.s.Tx(f.ctx, func(tx store.Tx) error {
			if err := tx.RecordEvents(f.ctx, []store.NewEvent{newEvent(newID("Transaction"), "X.Y", at(0))}); err != nil {
				return err
			}
			if after {
				if _, err := tx.PutSettingIfAbsent(f.ctx, "k", []byte("v")); err != nil {
					return err
				}
			}
			return boom
		})
		if !errors.Is(err, boom) {
			f.Fatal(err)
		}
	}
	// One that commits after a statement carried its row is there once,
	// and nothing else.
	e := newEvent(newID("Transaction"), "X.Y", at(0))
	f.tx(func(tx store.Tx) error {
		if err := tx.RecordEvents(f.ctx, []store.NewEvent{e}); err != nil {
			return err
		}
		_, err := tx.PutSettingIfAbsent(f.ctx, "k2", []byte("v"))
		return err
	})
	f.catalogThrough(1)
	if n := f.catalogOnce(10); n != 0 || f.head() != 1 {
		f.Fatalf("catalogued %d more, head %d: rolled-back events", n, f.head())
	}
	f.wantCatalogued(e, 1, 1)
}

// testEventsConcurrent: transactions recording events of a few resources
// at once, while cataloguers run at once too, end up with Seq 1..n without
// a gap and each resource's events numbered 1, 2, 3, … in Seq order.
func testEventsConcurrent(f *fixture) {
	resources := []string{newID("Transaction"), newID("Transaction"), newID("InternalAccount")}
	const writers, each = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := resources[(w+i)%len(resources)]
				if err := f.s.Tx(f.ctx, func(tx store.Tx) error {
					if err := tx.RecordEvents(f.ctx, []store.NewEvent{newEvent(r, "A.B", at(0))}); err != nil {
						return err
					}
					_, err := tx.PutSettingIfAbsent(f.ctx, fmt.Sprintf("w%d-%d", w, i), []byte("x"))
					return err
				}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var cwg sync.WaitGroup
	for range 2 {
		cwg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := f.lazy(func(tx store.Tx) error { _, err := tx.CatalogEvents(f.ctx, 3); return err }); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	cwg.Wait()
	close(errs)
	for err := range errs {
		f.Fatal(err)
	}
	f.catalogThrough(writers * each)
	all := f.allEvents()
	if len(all) != writers*each || f.head() != writers*each {
		f.Fatalf("%d events catalogued, head %d, want %d", len(all), f.head(), writers*each)
	}
	next := map[string]int64{}
	for i, e := range all {
		next[e.ResourceID]++
		if e.Seq != int64(i+1) || e.Sequence != next[e.ResourceID] {
			f.Fatalf("event %d: seq %d, sequence %d of %s, want %d and %d", i, e.Seq, e.Sequence, e.ResourceID, i+1, next[e.ResourceID])
		}
	}
}

// testEventsList: newest first by Seq, filtered by types (any of),
// resource and creation time, paged by the Seq as cursor.
func testEventsList(f *fixture) {
	r, x := newID("Transaction"), newID("InternalAccount")
	var es []store.NewEvent
	for i := range 6 {
		res, typ := r, "OUTGOING_PAYMENT.PENDING"
		if i%2 == 1 {
			res, typ = x, "INTERNAL_ACCOUNT.BALANCE_UPDATED"
		}
		if i == 4 {
			typ = "OUTGOING_PAYMENT.COMPLETED"
		}
		es = append(es, newEvent(res, typ, at(time.Duration(i)*time.Minute)))
		f.record(es[i:])
	}
	f.catalogThrough(6)
	want := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, es[i].ID)
		}
		return out
	}
	p := f.events(store.EventFilter{Limit: 2})
	if !slices.Equal(evIDs(p.Items), want(5, 4)) || !p.HasMore || p.NextCursor != "5" || p.TotalCount != 6 {
		f.Fatalf("first page %v %+v", evIDs(p.Items), p)
	}
	p = f.events(store.EventFilter{Limit: 3, Cursor: p.NextCursor})
	if !slices.Equal(evIDs(p.Items), want(3, 2, 1)) || !p.HasMore || p.NextCursor != "2" {
		f.Fatalf("second page %v %+v", evIDs(p.Items), p)
	}
	p = f.events(store.EventFilter{Limit: 3, Cursor: p.NextCursor})
	if !slices.Equal(evIDs(p.Items), want(0)) || p.HasMore || p.NextCursor != "" {
		f.Fatalf("last page %v %+v", evIDs(p.Items), p)
	}
	cases := []struct {
		name string
		filt store.EventFilter
		want []string
	}{
		{"resource", store.EventFilter{ResourceID: x}, want(5, 3, 1)},
		{"one type", store.EventFilter{Types: []string{"OUTGOING_PAYMENT.COMPLETED"}}, want(4)},
		{"two types", store.EventFilter{Types: []string{"OUTGOING_PAYMENT.COMPLETED", "OUTGOING_PAYMENT.PENDING"}}, want(4, 2, 0)},
		{"from", store.EventFilter{From: at(4 * time.Minute)}, want(5, 4)},
		{"to", store.EventFilter{To: at(2 * time.Minute)}, want(1, 0)},
		{"from to", store.EventFilter{From: at(time.Minute), To: at(3 * time.Minute)}, want(2, 1)},
		{"everything", store.EventFilter{ResourceID: r, Types: []string{"OUTGOING_PAYMENT.PENDING"}, From: at(time.Minute)}, want(2)},
		{"nothing", store.EventFilter{ResourceID: newID("Transaction")}, nil},
	}
	for _, c := range cases {
		p := f.events(c.filt)
		if !slices.Equal(evIDs(p.Items), c.want) || p.TotalCount != len(c.want) || p.HasMore {
			f.Errorf("%s: %v (total %d), want %v", c.name, evIDs(p.Items), p.TotalCount, c.want)
		}
	}
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.ListEvents(f.ctx, store.EventFilter{Cursor: "Webhook:x"})
		return err
	})
	if err == nil {
		f.Error("a cursor that is not a Seq was taken")
	}
}

// ---- endpoints

func newEndpoint(types ...string) *store.WebhookEndpoint {
	return &store.WebhookEndpoint{ID: newID("WebhookEndpoint"), URL: "https://hooks.example.com/" + strconv.Itoa(len(types)),
		Description: "Zoë's hooks", Types: types, Payload: store.PayloadSnapshot, Enabled: true,
		CreatedAt: at(0), UpdatedAt: at(0)}
}

func (f *fixture) endpoint(id string) store.WebhookEndpoint {
	f.Helper()
	var e *store.WebhookEndpoint
	f.tx(func(tx store.Tx) (err error) { e, err = tx.GetWebhookEndpoint(f.ctx, id); return err })
	return *e
}

func (f *fixture) createEndpoint(e *store.WebhookEndpoint) {
	f.Helper()
	f.tx(func(tx store.Tx) error { return tx.CreateWebhookEndpoint(f.ctx, e) })
}

func (f *fixture) claimEndpoints(head int64, now, until time.Time, lease string, limit int) []store.WebhookEndpoint {
	f.Helper()
	var got []store.WebhookEndpoint
	if err := f.lazy(func(tx store.Tx) (err error) {
		got, err = tx.ClaimWebhookEndpoints(f.ctx, head, now, until, lease, limit)
		return err
	}); err != nil {
		f.Fatalf("ClaimWebhookEndpoints: %v", err)
	}
	return got
}

func (f *fixture) work(e *store.WebhookEndpoint, head int64, now time.Time, limit int) *store.WebhookWork {
	f.Helper()
	var w *store.WebhookWork
	if err := f.lazy(func(tx store.Tx) (err error) { w, err = tx.WebhookWork(f.ctx, e, head, now, limit); return err }); err != nil {
		f.Fatalf("WebhookWork: %v", err)
	}
	return w
}

func (f *fixture) finish(r *store.WebhookRound, lease string) bool {
	f.Helper()
	var ok bool
	if err := f.lazy(func(tx store.Tx) (err error) { ok, err = tx.FinishWebhookRound(f.ctx, r, lease); return err }); err != nil {
		f.Fatalf("FinishWebhookRound: %v", err)
	}
	return ok
}

func endpointIDs(es []store.WebhookEndpoint) []string {
	return ids(es, func(e *store.WebhookEndpoint) string { return e.ID })
}

// testWebhookEndpoint: endpoints round-trip every field, one at most is
// the default, updates compare UpdatedAt and leave the delivery state, and
// a deleted endpoint takes its retries and attempts along.
func testWebhookEndpoint(f *fixture) {
	e := newEndpoint("OUTGOING_PAYMENT.COMPLETED", "OUTGOING_PAYMENT.FAILED")
	e.Default, e.Payload = true, store.PayloadThin
	f.createEndpoint(e)
	same(f, "GetWebhookEndpoint", f.endpoint(e.ID), *e)
	full := newEndpoint()
	full.Enabled, full.DisabledAt, full.DisabledReason = false, at(time.Hour), "failing since yesterday"
	full.Cursor, full.NextAttemptAt, full.FailingSince, full.FailedRounds = 7, at(2*time.Hour), at(time.Minute), 3
	full.LastSuccessAt, full.LastFailureAt, full.LastError = at(time.Second), at(time.Minute), "HTTP 503"
	full.Lease, full.LeaseUntil, full.CreatedAt, full.UpdatedAt = "lease-x", at(3*time.Hour), at(time.Second), at(time.Second)
	f.createEndpoint(full)
	same(f, "every field", f.endpoint(full.ID), *full)
	second := newEndpoint()
	second.Default = true
	wantErr(f, "a second default", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateWebhookEndpoint(f.ctx, second) }), store.ErrConflict)
	dup := newEndpoint()
	dup.ID = full.ID
	wantErr(f, "a taken id", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.CreateWebhookEndpoint(f.ctx, dup) }), store.ErrConflict)
	var list []store.WebhookEndpoint
	f.tx(func(tx store.Tx) (err error) { list, err = tx.ListWebhookEndpoints(f.ctx); return err })
	if !slices.Equal(endpointIDs(list), []string{e.ID, full.ID}) {
		f.Fatalf("list %v, oldest first", endpointIDs(list))
	}
	// Update: settings and the failure window; the cursor, lease and
	// failed rounds stay.
	u := f.endpoint(full.ID)
	u.URL, u.Description, u.Types, u.Payload = "https://new.example.com/h", "renamed", []string{"A.B"}, store.PayloadThin
	u.Enabled, u.DisabledAt, u.DisabledReason, u.FailingSince, u.NextAttemptAt = true, time.Time{}, "", time.Time{}, time.Time{}
	u.UpdatedAt = at(4 * time.Hour)
	u.Cursor, u.FailedRounds, u.Lease = 99, 0, "other"
	update := func(e *store.WebhookEndpoint, prev time.Time) (bool, error) {
		var ok bool
		err := f.s.Tx(f.ctx, func(tx store.Tx) (err error) { ok, err = tx.UpdateWebhookEndpoint(f.ctx, e, prev); return err })
		return ok, err
	}
	if ok, err := update(&u, at(time.Minute)); ok || err != nil {
		f.Fatalf("update with a stale UpdatedAt: %v %v", ok, err)
	}
	if ok, err := update(&u, full.UpdatedAt); !ok || err != nil {
		f.Fatalf("update: %v %v", ok, err)
	}
	want := u // FailedRounds is e's (0): re-enabled, the failure count starts afresh
	want.Cursor, want.Lease = full.Cursor, full.Lease
	same(f, "updated", f.endpoint(full.ID), want)
	missing := newEndpoint()
	if _, err := update(missing, at(0)); !errors.Is(err, store.ErrNotFound) {
		f.Errorf("update of a missing endpoint: %v", err)
	}
	// Delete, with a retry: of an endpoint whose cursor passed the event
	// (a replay adds none ahead of the cursor).
	ev := newEvent(newID("Transaction"), "A.B", at(0))
	f.record([]store.NewEvent{ev})
	f.catalog(10)
	gone := newEndpoint()
	gone.Cursor = f.head()
	f.createEndpoint(gone)
	var added int
	f.tx(func(tx store.Tx) (err error) {
		if n, _, err := tx.ReplayWebhookEvents(f.ctx, e.ID, at(0), at(time.Hour), nil, at(time.Hour), at(72*time.Hour), 10); err != nil || n != 0 {
			return fmt.Errorf("replayed %d ahead of the cursor: %v", n, err)
		}
		added, _, err = tx.ReplayWebhookEvents(f.ctx, gone.ID, at(0), at(time.Hour), nil, at(time.Hour), at(72*time.Hour), 10)
		return err
	})
	if got := f.endpoint(gone.ID); added != 1 || got.PendingRetries != 1 {
		f.Fatalf("replayed %d, pending retries %d", added, got.PendingRetries)
	}
	for _, id := range []string{gone.ID, e.ID} {
		f.tx(func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(f.ctx, id) })
		err := f.s.Tx(f.ctx, func(tx store.Tx) error { _, err := tx.GetWebhookEndpoint(f.ctx, id); return err })
		wantErr(f, "deleted endpoint", err, store.ErrNotFound)
		wantErr(f, "delete a missing endpoint", f.s.Tx(f.ctx, func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(f.ctx, id) }), store.ErrNotFound)
	}
	// The default is free again.
	f.createEndpoint(second)
}

// testWebhookEndpointTypes: each endpoint gets exactly the events of its
// types (all with none), oldest first, and Through is head unless limit
// events came back.
func testWebhookEndpointTypes(f *fixture) {
	r := newID("Transaction")
	types := []string{"A.ONE", "B.TWO", "A.ONE", "C.THREE", "B.TWO", "A.ONE"}
	var es []store.NewEvent
	for i, typ := range types {
		es = append(es, newEvent(r, typ, at(time.Duration(i)*time.Second)))
	}
	f.record(es)
	f.catalog(100)
	head := f.head()
	a, ab, all := newEndpoint("A.ONE"), newEndpoint("A.ONE", "B.TWO"), newEndpoint()
	for _, e := range []*store.WebhookEndpoint{a, ab, all} {
		f.createEndpoint(e)
	}
	pick := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, es[i].ID)
		}
		return out
	}
	cases := []struct {
		e       *store.WebhookEndpoint
		cursor  int64
		limit   int
		want    []string
		through int64
	}{
		{a, 0, 10, pick(0, 2, 5), head},
		{ab, 0, 10, pick(0, 1, 2, 4, 5), head},
		{all, 0, 10, pick(0, 1, 2, 3, 4, 5), head},
		{ab, 0, 2, pick(0, 1), 2},
		{ab, 2, 2, pick(2, 4), 5},
		{a, 3, 2, pick(5), head},
		{a, head, 2, nil, head},
	}
	for i, c := range cases {
		e := f.endpoint(c.e.ID)
		e.Cursor = c.cursor
		w := f.work(&e, head, at(time.Hour), c.limit)
		if got := evIDs(w.Events); !slices.Equal(got, c.want) || w.Through != c.through || len(w.Retries) != 0 || len(w.Waiting) != 0 {
			f.Errorf("case %d: events %v through %d, want %v through %d (%+v)", i, got, w.Through, c.want, c.through, w)
		}
	}
}

// testWebhookClaim: a claim leases enabled endpoints with work (events
// after their cursor, or a due retry) that are not paused and not leased,
// and two claims never hold one endpoint.
func testWebhookClaim(f *fixture) {
	r := newID("Transaction")
	f.record([]store.NewEvent{newEvent(r, "A.B", at(0)), newEvent(r, "A.B", at(0))})
	f.catalog(10)
	now, until := at(time.Hour), at(time.Hour+time.Minute)
	behind := newEndpoint()
	upToDate := newEndpoint()
	upToDate.Cursor = 2
	paused := newEndpoint()
	paused.NextAttemptAt = now.Add(time.Second)
	pausedDue := newEndpoint()
	pausedDue.NextAttemptAt = now
	disabled := newEndpoint()
	disabled.Enabled, disabled.DisabledAt, disabled.DisabledReason = false, at(0), "the platform"
	leased := newEndpoint()
	leased.Lease, leased.LeaseUntil = "old", now.Add(time.Second)
	expired := newEndpoint()
	expired.Lease, expired.LeaseUntil = "old", now
	retrying := newEndpoint()
	retrying.Cursor = 2
	notDue := newEndpoint()
	notDue.Cursor = 2
	for _, e := range []*store.WebhookEndpoint{behind, upToDate, paused, pausedDue, disabled, leased, expired, retrying, notDue} {
		f.createEndpoint(e)
	}
	f.tx(func(tx store.Tx) error {
		if _, _, err := tx.ReplayWebhookEvents(f.ctx, retrying.ID, at(0), at(time.Second), nil, now, now.Add(time.Hour), 10); err != nil {
			return err
		}
		_, _, err := tx.ReplayWebhookEvents(f.ctx, notDue.ID, at(0), at(time.Second), nil, now.Add(time.Second), now.Add(time.Hour), 10)
		return err
	})
	want := []string{behind.ID, pausedDue.ID, expired.ID, retrying.ID}
	slices.Sort(want)
	got := f.claimEndpoints(2, now, until, "lease-1", 10)
	if !slices.Equal(endpointIDs(got), want) {
		f.Fatalf("claimed %v, want %v", endpointIDs(got), want)
	}
	for _, e := range got {
		if e.Lease != "lease-1" || !e.LeaseUntil.Equal(until) {
			f.Fatalf("claimed %+v", e)
		}
		if e.ID == retrying.ID && e.PendingRetries != 2 {
			f.Fatalf("pending retries of %s: %d", e.ID, e.PendingRetries)
		}
	}
	if again := f.claimEndpoints(2, now, until, "lease-2", 10); len(again) != 0 {
		f.Fatalf("claimed while leased: %v", endpointIDs(again))
	}
	// A higher head gives upToDate work; limit 1.
	if got := f.claimEndpoints(3, now, until, "lease-2", 1); !slices.Equal(endpointIDs(got), []string{upToDate.ID}) {
		f.Fatalf("with a new head: %v", endpointIDs(got))
	}
	// A released endpoint is free at once.
	f.tx(func(tx store.Tx) error { return tx.ReleaseWebhookEndpoint(f.ctx, behind.ID, "lease-1") })
	if got := f.claimEndpoints(2, now, until, "lease-3", 10); !slices.Equal(endpointIDs(got), []string{behind.ID}) {
		f.Fatalf("after a release: %v", endpointIDs(got))
	}
	if got := f.endpoint(pausedDue.ID); got.Lease != "lease-1" {
		f.Fatalf("another lease's endpoint: %+v", got)
	}
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, err := tx.ClaimWebhookEndpoints(f.ctx, 2, now, now, "l", 1)
		return err
	})
	if err == nil {
		f.Error("a lease that ends at once was taken")
	}
}

// testWebhookClaimRace: workers claiming at once never hold one endpoint
// together.
func testWebhookClaimRace(f *fixture) {
	f.record([]store.NewEvent{newEvent(newID("Transaction"), "A.B", at(0))})
	f.catalog(10)
	const n = 12
	for range n {
		f.createEndpoint(newEndpoint())
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			lease := fmt.Sprintf("worker-%d", w)
			for range 6 {
				var got []store.WebhookEndpoint
				if err := f.lazy(func(tx store.Tx) (err error) {
					got, err = tx.ClaimWebhookEndpoints(f.ctx, 1, at(time.Minute), at(time.Hour), lease, 2)
					return err
				}); err != nil {
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
		f.Fatalf("claimed %d of %d endpoints", len(seen), n)
	}
}

// testWebhookFinishRound: a round is recorded only under the lease that
// holds the endpoint; it moves the cursor (never back), writes the
// delivery state, adds, rewrites and removes retries, appends attempts,
// ends the lease, and can disable the endpoint.
func testWebhookFinishRound(f *fixture) {
	r, x := newID("Transaction"), newID("InternalAccount")
	var es []store.NewEvent
	for i := range 4 {
		res := r
		if i == 3 {
			res = x
		}
		es = append(es, newEvent(res, "A.B", at(time.Duration(i)*time.Second)))
	}
	f.record(es)
	f.catalog(10)
	e := newEndpoint()
	f.createEndpoint(e)
	now := at(time.Hour)
	claimed := f.claimEndpoints(4, now, now.Add(time.Minute), "lease-1", 1)
	if len(claimed) != 1 {
		f.Fatalf("claimed %v", endpointIDs(claimed))
	}
	w := f.work(&claimed[0], 4, now, 10)
	if len(w.Events) != 4 || w.Through != 4 {
		f.Fatalf("work %+v", w)
	}
	// Event 1 failed (retry), 2 waits behind it, 3 and 4 delivered.
	attempt := func(seq int64, n int, status int, errText string, final bool) store.WebhookAttempt {
		return store.WebhookAttempt{EndpointID: e.ID, EventSeq: seq, EventID: es[seq-1].ID, Attempt: n, AttemptedAt: now,
			URL: e.URL, ResponseStatus: status, Error: errText, Duration: 1500 * time.Microsecond, Final: final}
	}
	round := &store.WebhookRound{EndpointID: e.ID, Through: 4, FailingSince: now, FailedRounds: 0, LastSuccessAt: now,
		LastFailureAt: now, LastError: "HTTP 500",
		NewRetries: []store.WebhookRetry{
			{EventSeq: 1, ResourceID: r, Attempts: 1, NextAttemptAt: now.Add(time.Minute), GiveUpAt: now.Add(72 * time.Hour)},
			{EventSeq: 2, ResourceID: r, Attempts: 0, NextAttemptAt: now.Add(time.Minute), GiveUpAt: now.Add(72 * time.Hour)},
		},
		Attempts: []store.WebhookAttempt{attempt(1, 1, 500, "HTTP 500", false), attempt(3, 1, 204, "", true), attempt(4, 1, 200, "", true)},
	}
	if f.finish(round, "lease-2") {
		f.Fatal("a stranger's lease finished the round")
	}
	if got := f.endpoint(e.ID); got.Cursor != 0 || got.PendingRetries != 0 || got.Lease != "lease-1" {
		f.Fatalf("a refused round changed the endpoint: %+v", got)
	}
	if !f.finish(round, "lease-1") {
		f.Fatal("the holder could not finish its round")
	}
	if f.finish(round, "lease-1") {
		f.Fatal("a round finished twice under one lease")
	}
	got := f.endpoint(e.ID)
	if got.Cursor != 4 || got.Lease != "" || got.PendingRetries != 2 || !got.FailingSince.Equal(now) ||
		!got.LastSuccessAt.Equal(now) || got.LastError != "HTTP 500" || !got.Enabled || !got.UpdatedAt.Equal(e.UpdatedAt) {
		f.Fatalf("after the round: %+v", got)
	}
	// Next round: an older Through does not move the cursor back; the
	// retry of event 1 is rewritten, a second NewRetries of event 2 keeps
	// the one there, and a new retry of event 4 is added.
	later := now.Add(2 * time.Minute)
	claimed = f.claimEndpoints(4, later, later.Add(time.Minute), "lease-3", 1)
	if len(claimed) != 1 {
		f.Fatal("the endpoint with due retries was not claimed")
	}
	w = f.work(&claimed[0], 4, later, 10)
	if len(w.Events) != 0 || len(w.Retries) != 2 || w.Retries[0].EventSeq != 1 || w.Retries[1].EventSeq != 2 || w.Through != 4 {
		f.Fatalf("second work %+v", w)
	}
	round = &store.WebhookRound{EndpointID: e.ID, Through: 3, NextAttemptAt: later.Add(time.Hour), FailingSince: now, FailedRounds: 1,
		LastSuccessAt: now, LastFailureAt: later, LastError: "timeout",
		NewRetries: []store.WebhookRetry{
			{EventSeq: 2, ResourceID: r, Attempts: 5, NextAttemptAt: later, GiveUpAt: later},
			{EventSeq: 4, ResourceID: x, Attempts: 0, NextAttemptAt: later.Add(time.Hour), GiveUpAt: later.Add(time.Hour)},
		},
		Retried:  []store.WebhookRetry{{EventSeq: 1, ResourceID: r, Attempts: 2, NextAttemptAt: later.Add(time.Hour)}},
		Attempts: []store.WebhookAttempt{attempt(1, 2, 0, "timeout", false)},
	}
	if !f.finish(round, "lease-3") {
		f.Fatal("second round")
	}
	got = f.endpoint(e.ID)
	if got.Cursor != 4 || got.FailedRounds != 1 || !got.NextAttemptAt.Equal(later.Add(time.Hour)) || got.PendingRetries != 3 {
		f.Fatalf("after the second round: %+v", got)
	}
	at3 := later.Add(time.Hour)
	claimed = f.claimEndpoints(4, at3, at3.Add(time.Minute), "lease-4", 1)
	w = f.work(&claimed[0], 4, at3, 10)
	var seqs []int64
	for _, rt := range w.Retries {
		seqs = append(seqs, rt.EventSeq)
	}
	if !slices.Equal(seqs, []int64{1, 2, 4}) || w.Retries[0].Attempts != 2 || !w.Retries[0].NextAttemptAt.Equal(at3) ||
		w.Retries[1].Attempts != 0 || !w.Retries[1].NextAttemptAt.Equal(now.Add(time.Minute)) {
		f.Fatalf("third work %+v", w.Retries)
	}
	same(f, "a retry's event", *w.Retries[2].Event, f.event(es[3].ID))
	// Done: 1 and 2; the failure window ran out: disabled.
	round = &store.WebhookRound{EndpointID: e.ID, Through: 4, FailingSince: now, FailedRounds: 2, LastFailureAt: at3,
		LastError: "HTTP 502", Disable: true, DisabledAt: at3, DisabledReason: "failing for 3 days", Done: []int64{1, 2},
		Attempts: []store.WebhookAttempt{attempt(1, 3, 204, "", true), attempt(2, 1, 204, "", true), attempt(4, 2, 502, "HTTP 502", false)}}
	if !f.finish(round, "lease-4") {
		f.Fatal("third round")
	}
	got = f.endpoint(e.ID)
	if got.Enabled || !got.DisabledAt.Equal(at3) || got.DisabledReason != "failing for 3 days" || got.PendingRetries != 1 ||
		!got.UpdatedAt.Equal(at3) || got.Lease != "" {
		f.Fatalf("disabled: %+v", got)
	}
	if c := f.claimEndpoints(4, at3.Add(time.Hour), at3.Add(2*time.Hour), "lease-5", 1); len(c) != 0 {
		f.Fatalf("a disabled endpoint was claimed: %v", endpointIDs(c))
	}
	var attempts store.Page[store.WebhookAttempt]
	f.tx(func(tx store.Tx) (err error) {
		attempts, err = tx.ListWebhookAttempts(f.ctx, store.WebhookAttemptFilter{EndpointID: e.ID, Limit: 100})
		return err
	})
	if len(attempts.Items) != 7 || attempts.TotalCount != 7 {
		f.Fatalf("attempts %+v", attempts)
	}
	same(f, "newest attempt", attempts.Items[0], attempt(4, 2, 502, "HTTP 502", false))
}

// testWebhookRetryOrder: WebhookWork returns, for each resource whose
// oldest retry is due, that resource's retries in order (up to limit in
// all); a resource whose oldest retry is not due has none returned, and
// is Waiting when a new event of it came.
func testWebhookRetryOrder(f *fixture) {
	r, x, y := newID("Transaction"), newID("Transaction"), newID("Transaction")
	plan := []string{r, x, r, y, x, r, x, y} // seq 1..8
	var es []store.NewEvent
	for i, res := range plan {
		es = append(es, newEvent(res, "A.B", at(time.Duration(i)*time.Second)))
	}
	f.record(es)
	f.catalog(100)
	e := newEndpoint()
	e.Cursor = 5
	f.createEndpoint(e)
	now := at(time.Hour)
	retry := func(seq int64, due time.Time) store.WebhookRetry {
		return store.WebhookRetry{EventSeq: seq, ResourceID: plan[seq-1], Attempts: 1, NextAttemptAt: due, GiveUpAt: now.Add(time.Hour)}
	}
	// r: 1 due, 3 not due yet (waits behind 1): both come, in order.
	// x: 2 not due, 5 due: nothing (its oldest is not due).
	// y: 4 due.
	claimed := f.claimEndpoints(8, now, now.Add(time.Minute), "seed", 1)
	if !f.finish(&store.WebhookRound{EndpointID: e.ID, Through: 5, NewRetries: []store.WebhookRetry{
		retry(1, now), retry(3, now.Add(time.Hour)), retry(2, now.Add(time.Minute)), retry(5, now), retry(4, now.Add(-time.Minute)),
	}}, claimed[0].Lease) {
		f.Fatal("seed round")
	}
	claimed = f.claimEndpoints(8, now, now.Add(time.Minute), "lease-1", 1)
	if len(claimed) != 1 || claimed[0].Cursor != 5 || claimed[0].PendingRetries != 5 {
		f.Fatalf("claimed %+v", claimed)
	}
	seqsOf := func(w *store.WebhookWork) []int64 {
		var s []int64
		for _, rt := range w.Retries {
			s = append(s, rt.EventSeq)
			if rt.Event == nil || rt.Event.Seq != rt.EventSeq || rt.EndpointID != e.ID {
				f.Fatalf("retry %+v", rt)
			}
		}
		return s
	}
	w := f.work(&claimed[0], 8, now, 10)
	if got := seqsOf(w); !slices.Equal(got, []int64{1, 3, 4}) {
		f.Fatalf("retries %v, want [1 3 4]", got)
	}
	// New events 6 (r), 7 (x), 8 (y): x waits (its oldest retry is not
	// due); r and y have due retries, sent this round.
	if !slices.Equal(evIDs(w.Events), []string{es[5].ID, es[6].ID, es[7].ID}) || w.Through != 8 {
		f.Fatalf("events %v through %d", evIDs(w.Events), w.Through)
	}
	if len(w.Waiting) != 1 || !w.Waiting[x] {
		f.Fatalf("waiting %v, want only %s", w.Waiting, x)
	}
	// Limit 2: a prefix in Seq order; Through from the events' limit.
	w = f.work(&claimed[0], 8, now, 2)
	if got := seqsOf(w); !slices.Equal(got, []int64{1, 3}) || w.Through != 7 {
		f.Fatalf("limited: retries %v through %d", got, w.Through)
	}
	// Limit 1: r's retry 3 is left for the next round, so r's new event
	// 6 waits behind it as well.
	w = f.work(&claimed[0], 8, now, 1)
	if got := seqsOf(w); !slices.Equal(got, []int64{1}) || w.Through != 6 || len(w.Waiting) != 1 || !w.Waiting[r] {
		f.Fatalf("limit 1: retries %v through %d waiting %v", got, w.Through, w.Waiting)
	}
	// Later, x's oldest is due too.
	w = f.work(&claimed[0], 8, now.Add(time.Minute), 10)
	if got := seqsOf(w); !slices.Equal(got, []int64{1, 2, 3, 4, 5}) || len(w.Waiting) != 0 {
		f.Fatalf("a minute later: retries %v, waiting %v", got, w.Waiting)
	}
}

// testWebhookReplay: a replay adds a retry of each event created in the
// range with the types asked for, oldest first up to limit, and keeps an
// event's retry that is there already.
func testWebhookReplay(f *fixture) {
	var es []store.NewEvent
	for i := range 6 {
		typ := "A.ONE"
		if i%2 == 1 {
			typ = "B.TWO"
		}
		es = append(es, newEvent(newID("Transaction"), typ, at(time.Duration(i)*time.Minute)))
	}
	f.record(es)
	f.catalog(100)
	e := newEndpoint()
	e.Cursor = 6
	f.createEndpoint(e)
	replay := func(from, to time.Time, types []string, limit int) (int, bool) {
		f.Helper()
		var n int
		var more bool
		f.tx(func(tx store.Tx) (err error) {
			n, more, err = tx.ReplayWebhookEvents(f.ctx, e.ID, from, to, types, at(time.Hour), at(2*time.Hour), limit)
			return err
		})
		return n, more
	}
	if n, more := replay(at(time.Minute), at(5*time.Minute), nil, 2); n != 2 || !more {
		f.Fatalf("first replay %d %v", n, more)
	}
	if n, more := replay(at(time.Minute), at(5*time.Minute), nil, 10); n != 2 || more {
		f.Fatalf("second replay %d %v (2 of 4 had retries)", n, more)
	}
	if n, more := replay(at(0), at(time.Hour), []string{"A.ONE"}, 10); n != 1 || more {
		f.Fatalf("replay of A.ONE %d %v (seqs 1, 3 and 5; 3 and 5 had one)", n, more)
	}
	claimed := f.claimEndpoints(6, at(time.Hour), at(time.Hour+time.Minute), "l", 1)
	if len(claimed) != 1 || claimed[0].PendingRetries != 5 {
		f.Fatalf("claimed %+v", claimed)
	}
	w := f.work(&claimed[0], 6, at(time.Hour), 10)
	var seqs []int64
	for _, rt := range w.Retries {
		seqs = append(seqs, rt.EventSeq)
		if rt.Attempts != 0 || !rt.NextAttemptAt.Equal(at(time.Hour)) || !rt.GiveUpAt.Equal(at(2*time.Hour)) {
			f.Fatalf("replayed retry %+v", rt)
		}
	}
	if !slices.Equal(seqs, []int64{1, 2, 3, 4, 5}) {
		f.Fatalf("replayed %v", seqs)
	}
	err := f.s.Tx(f.ctx, func(tx store.Tx) error {
		_, _, err := tx.ReplayWebhookEvents(f.ctx, newID("WebhookEndpoint"), at(0), at(time.Hour), nil, at(0), at(0), 10)
		return err
	})
	wantErr(f, "replay to a missing endpoint", err, store.ErrNotFound)
}

// testWebhookAttempts: attempts page newest first, filtered by endpoint,
// event and failure.
func testWebhookAttempts(f *fixture) {
	var es []store.NewEvent
	for i := range 3 {
		es = append(es, newEvent(newID("Transaction"), "A.B", at(time.Duration(i)*time.Second)))
	}
	f.record(es)
	f.catalog(10)
	a, b := newEndpoint(), newEndpoint()
	f.createEndpoint(a)
	f.createEndpoint(b)
	type key struct {
		endpoint string
		seq      int64
		n        int
	}
	var made []key
	// Each round leaves a retry due at the next one, which gives both
	// endpoints work again.
	for round := range 3 {
		now := at(time.Duration(round+1) * time.Hour)
		claimed := f.claimEndpoints(3, now, now.Add(time.Minute), "l", 2)
		if !slices.Equal(endpointIDs(claimed), []string{a.ID, b.ID}) {
			f.Fatalf("round %d claimed %v", round, endpointIDs(claimed))
		}
		for _, e := range claimed {
			var atts []store.WebhookAttempt
			for seq := int64(1); seq <= 3; seq++ {
				status, errText := 204, ""
				if seq == 2 {
					status, errText = 500, "HTTP 500"
				}
				atts = append(atts, store.WebhookAttempt{EndpointID: e.ID, EventSeq: seq, EventID: es[seq-1].ID, Attempt: round + 1,
					AttemptedAt: now, URL: e.URL, ResponseStatus: status, Error: errText, Duration: time.Millisecond})
				made = append(made, key{e.ID, seq, round + 1})
			}
			if !f.finish(&store.WebhookRound{EndpointID: e.ID, Through: 3, Attempts: atts,
				NewRetries: []store.WebhookRetry{{EventSeq: 1, ResourceID: es[0].ResourceID, NextAttemptAt: now.Add(time.Hour),
					GiveUpAt: now.Add(time.Hour)}}}, "l") {
				f.Fatalf("round %d of %s", round, e.ID)
			}
		}
	}
	list := func(filt store.WebhookAttemptFilter) store.Page[store.WebhookAttempt] {
		var p store.Page[store.WebhookAttempt]
		f.tx(func(tx store.Tx) (err error) { p, err = tx.ListWebhookAttempts(f.ctx, filt); return err })
		return p
	}
	keys := func(as []store.WebhookAttempt) []key {
		var out []key
		for _, a := range as {
			out = append(out, key{a.EndpointID, a.EventSeq, a.Attempt})
		}
		return out
	}
	newest := slices.Clone(made)
	slices.Reverse(newest)
	all, err := store.AllPages(func(c string) (store.Page[store.WebhookAttempt], error) {
		p := list(store.WebhookAttemptFilter{Limit: 4, Cursor: c})
		if p.TotalCount != len(made) {
			f.Errorf("total %d, want %d", p.TotalCount, len(made))
		}
		return p, nil
	})
	if err != nil || !slices.Equal(keys(all), newest) {
		f.Fatalf("all attempts %v, want %v", keys(all), newest)
	}
	filter := func(keep func(key) bool) []key {
		var out []key
		for _, k := range newest {
			if keep(k) {
				out = append(out, k)
			}
		}
		return out
	}
	cases := []struct {
		name string
		filt store.WebhookAttemptFilter
		want []key
	}{
		{"endpoint", store.WebhookAttemptFilter{EndpointID: b.ID}, filter(func(k key) bool { return k.endpoint == b.ID })},
		{"event", store.WebhookAttemptFilter{EventID: es[0].ID}, filter(func(k key) bool { return k.seq == 1 })},
		{"failed", store.WebhookAttemptFilter{Failed: true}, filter(func(k key) bool { return k.seq == 2 })},
		{"all three", store.WebhookAttemptFilter{EndpointID: a.ID, EventID: es[1].ID, Failed: true},
			filter(func(k key) bool { return k.seq == 2 && k.endpoint == a.ID })},
	}
	for _, c := range cases {
		p := list(c.filt)
		if !slices.Equal(keys(p.Items), c.want) || p.TotalCount != len(c.want) {
			f.Errorf("%s: %v (total %d), want %v", c.name, keys(p.Items), p.TotalCount, c.want)
		}
	}
}

// testEventsRetention: DeleteEventsBefore drops the oldest events in
// batches with their attempts and retries; the head and each resource's
// sequence go on from where they were, and delivery never changed an
// event's row.
func testEventsRetention(f *fixture) {
	r, x := newID("Transaction"), newID("InternalAccount")
	var old []store.NewEvent
	for i := range 5 {
		old = append(old, newEvent(r, "A.B", at(time.Duration(i)*time.Second)))
	}
	keep := newEvent(x, "A.B", at(time.Hour))
	f.record(old, []store.NewEvent{keep})
	f.catalog(100)
	before := f.allEvents()
	e := newEndpoint()
	f.createEndpoint(e)
	now := at(2 * time.Hour)
	c := f.claimEndpoints(6, now, now.Add(time.Minute), "l", 1)
	var atts []store.WebhookAttempt
	var retries []store.WebhookRetry
	for seq := int64(1); seq <= 6; seq++ {
		atts = append(atts, store.WebhookAttempt{EndpointID: e.ID, EventSeq: seq, EventID: before[seq-1].ID, Attempt: 1,
			AttemptedAt: now, ResponseStatus: 500, Error: "HTTP 500"})
		retries = append(retries, store.WebhookRetry{EventSeq: seq, ResourceID: before[seq-1].ResourceID, Attempts: 1,
			NextAttemptAt: now.Add(time.Hour), GiveUpAt: now.Add(time.Hour)})
	}
	if !f.finish(&store.WebhookRound{EndpointID: e.ID, Through: 6, NewRetries: retries, Attempts: atts}, c[0].Lease) {
		f.Fatal("round")
	}
	// Delivery wrote nothing to the events.
	same(f, "events after delivery", f.allEvents(), before)
	drop := func(limit int) int {
		var n int
		f.tx(func(tx store.Tx) (err error) {
			n, err = tx.DeleteEventsBefore(f.ctx, at(time.Minute), limit)
			return err
		})
		return n
	}
	if n := drop(2); n != 2 {
		f.Fatalf("first batch %d", n)
	}
	if n := drop(2); n != 2 {
		f.Fatalf("second batch %d", n)
	}
	if n := drop(2); n != 1 {
		f.Fatalf("third batch %d", n)
	}
	if n := drop(2); n != 0 {
		f.Fatalf("fourth batch %d", n)
	}
	if got := f.allEvents(); !slices.Equal(evIDs(got), []string{keep.ID}) {
		f.Fatalf("left %v", evIDs(got))
	}
	if got := f.endpoint(e.ID); got.PendingRetries != 1 {
		f.Fatalf("retries left %d, want 1 (of the kept event)", got.PendingRetries)
	}
	var p store.Page[store.WebhookAttempt]
	f.tx(func(tx store.Tx) (err error) {
		p, err = tx.ListWebhookAttempts(f.ctx, store.WebhookAttemptFilter{})
		return err
	})
	if len(p.Items) != 1 || p.Items[0].EventID != keep.ID {
		f.Fatalf("attempts left %+v", p.Items)
	}
	// Dropping the newest too: the head stays, and r's next event is its
	// sixth.
	f.tx(func(tx store.Tx) error { _, err := tx.DeleteEventsBefore(f.ctx, at(24*time.Hour), 10); return err })
	if f.head() != 6 {
		f.Fatalf("head after retention %d", f.head())
	}
	next := newEvent(r, "A.B", at(25*time.Hour))
	f.record([]store.NewEvent{next})
	f.catalog(10)
	f.wantCatalogued(next, 7, 6)
}
