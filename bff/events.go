package bff

import (
	"context"
	"sync"
	"time"
)

// The service tells the BFF what happened (a payment completed, a balance
// moved) with webhooks (webhooks.go); the BFF passes each one on to the
// browsers of that event's customer over Server-Sent Events (stream.go).
//
//	service ──POST /webhooks/service──▶ BFF A ──EventLog.Add──▶ log ──▶ every instance's hub ──▶ GET /api/events
//
// The EventLog is where a webhook is recorded once: a delivery whose id it
// already holds is answered 200 and not passed on again. With several
// instances it is shared (bffpg: a table, and NOTIFY to wake the others),
// so that a browser connected to instance B hears a webhook that instance A
// received. Each instance keeps the last events of each customer in memory
// (hub), so that a browser that reconnects (EventSource sends
// Last-Event-ID) gets what it missed.

// Event is one webhook of the service, as the BFF passes it on.
type Event struct {
	// ID is the webhook's id, "Webhook:<uuid>": the SSE id.
	ID string
	// Type is the webhook's type, e.g. "OUTGOING_PAYMENT.COMPLETED": the
	// SSE event name.
	Type string
	// CustomerID is whose browsers hear it; "" for an event of no customer
	// (a TEST, a platform account), which is recorded and not passed on.
	CustomerID string
	// Body is the webhook's envelope as compact JSON, on one line: the SSE
	// data.
	Body []byte
}

// WebhookSeenFor is how long a webhook id is remembered, so that a
// delivery repeated within that time is recognised and not passed on twice.
// The service retries a delivery with backoff and signs each attempt anew,
// so a repeat can come long after the first attempt, well beyond the five
// minutes a signature is good for.
const WebhookSeenFor = 24 * time.Hour

// EventLog records the service's webhooks once each and tells every BFF
// instance that shares it about each new one. [MemoryEventLog] serves one
// instance; paywallet/bff/bffpg's Store.Events serves several.
// Implementations must be safe for concurrent use.
type EventLog interface {
	// Add records ev unless an event with its id was recorded in the last
	// WebhookSeenFor, and reports whether it was new. A new event reaches
	// the subscribers of every instance sharing the log, this one's
	// included (at once or shortly after Add returns).
	Add(ctx context.Context, ev Event) (added bool, err error)
	// Subscribe calls deliver with every event added from now on, by any
	// instance, until stop is called. deliver must not block. An event
	// may be delivered more than once (after a lost connection, say); the
	// BFF drops the repeats.
	Subscribe(deliver func(Event)) (stop func())
}

// MemoryEventLog is an EventLog in process memory, for a single instance.
type MemoryEventLog struct {
	now func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time // id → when it may be forgotten
	subs map[int]func(Event)
	next int
	adds int
}

// NewMemoryEventLog returns an empty MemoryEventLog; now is its clock
// (time.Now when nil).
func NewMemoryEventLog(now func() time.Time) *MemoryEventLog {
	if now == nil {
		now = time.Now
	}
	return &MemoryEventLog{now: now, seen: map[string]time.Time{}, subs: map[int]func(Event){}}
}

// Add implements EventLog. Every 256th Add also forgets expired ids.
func (m *MemoryEventLog) Add(_ context.Context, ev Event) (bool, error) {
	now := m.now()
	m.mu.Lock()
	if until, ok := m.seen[ev.ID]; ok && now.Before(until) {
		m.mu.Unlock()
		return false, nil
	}
	m.seen[ev.ID] = now.Add(WebhookSeenFor)
	m.adds++
	if m.adds%256 == 0 {
		for id, until := range m.seen {
			if !now.Before(until) {
				delete(m.seen, id)
			}
		}
	}
	subs := make([]func(Event), 0, len(m.subs))
	for _, d := range m.subs {
		subs = append(subs, d)
	}
	m.mu.Unlock()
	for _, d := range subs {
		d(ev)
	}
	return true, nil
}

// Subscribe implements EventLog.
func (m *MemoryEventLog) Subscribe(deliver func(Event)) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.next
	m.next++
	m.subs[id] = deliver
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

var _ EventLog = (*MemoryEventLog)(nil)

// ringSize is how many recent events of each customer an instance keeps
// for browsers that reconnect with Last-Event-ID.
const ringSize = 100

// roomIdle is how long a customer's recent events are kept once nobody
// listens and nothing new came.
const roomIdle = 15 * time.Minute

// hub passes events to the streams of this instance, by customer.
type hub struct {
	mu      sync.Mutex
	rooms   map[string]*room // by customer id
	sweepAt int
	now     func() time.Time
}

// room is one customer's recent events and open streams.
type room struct {
	ring []Event             // the last ringSize events, oldest first
	ids  map[string]struct{} // the ids in ring
	subs map[*subscriber]struct{}
	last time.Time // when the last event came or the last stream left
}

// subscriber is one open stream. Events wait in ch; a stream that falls
// ringSize events behind is dropped (gone is closed) and its browser
// reconnects with Last-Event-ID.
type subscriber struct {
	ch   chan Event
	gone chan struct{}
}

func newHub(now func() time.Time) *hub {
	return &hub{rooms: map[string]*room{}, sweepAt: 1024, now: now}
}

func (h *hub) roomLocked(customer string) *room {
	r := h.rooms[customer]
	if r == nil {
		if len(h.rooms) >= h.sweepAt {
			h.sweepLocked()
		}
		r = &room{ids: map[string]struct{}{}, subs: map[*subscriber]struct{}{}, last: h.now()}
		h.rooms[customer] = r
	}
	return r
}

// sweepLocked drops the rooms nobody listens to that have been idle for
// roomIdle, once the map has doubled since the last sweep.
func (h *hub) sweepLocked() {
	now := h.now()
	for id, r := range h.rooms {
		if len(r.subs) == 0 && now.Sub(r.last) >= roomIdle {
			delete(h.rooms, id)
		}
	}
	h.sweepAt = max(1024, 2*len(h.rooms))
}

// publish passes ev to its customer's streams and keeps it for
// reconnections; an event seen before (by id) is dropped.
func (h *hub) publish(ev Event) {
	if ev.CustomerID == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.roomLocked(ev.CustomerID)
	if _, dup := r.ids[ev.ID]; dup {
		return
	}
	r.ring = append(r.ring, ev)
	r.ids[ev.ID] = struct{}{}
	if len(r.ring) > ringSize {
		delete(r.ids, r.ring[0].ID)
		r.ring = append(r.ring[:0:0], r.ring[1:]...)
	}
	r.last = h.now()
	for s := range r.subs {
		select {
		case s.ch <- ev:
		default:
			close(s.gone)
			delete(r.subs, s)
		}
	}
}

// subscribe opens a stream for customer. When lastID is set, backlog is
// what came after that event; found is false when this instance does not
// hold lastID any more (or never did), and the browser may have missed
// events.
func (h *hub) subscribe(customer, lastID string) (s *subscriber, backlog []Event, found bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.roomLocked(customer)
	s = &subscriber{ch: make(chan Event, ringSize), gone: make(chan struct{})}
	r.subs[s] = struct{}{}
	if lastID == "" {
		return s, nil, true
	}
	for i, ev := range r.ring {
		if ev.ID == lastID {
			return s, append([]Event(nil), r.ring[i+1:]...), true
		}
	}
	return s, nil, false
}

// unsubscribe closes s's subscription.
func (h *hub) unsubscribe(customer string, s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rooms[customer]; r != nil {
		if _, ok := r.subs[s]; ok {
			delete(r.subs, s)
			r.last = h.now()
		}
	}
}

// listeners reports how many streams of customer are open, for tests.
func (h *hub) listeners(customer string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rooms[customer]; r != nil {
		return len(r.subs)
	}
	return 0
}
