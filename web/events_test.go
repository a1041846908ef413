package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEvents is the BFF's GET /api/events for the page tests. Off (the
// default) it answers 404, as a BFF without the stream would: the page
// polls, as the other tests expect. On, it streams what send gives it.
type fakeEvents struct {
	mu      sync.Mutex
	on      bool
	streams map[chan string]struct{}
	opened  int
	n       int
}

func (e *fakeEvents) enable() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.on = true
}

func (e *fakeEvents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	if !e.on || r.Header.Get("Accept") != "text/event-stream" {
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		_, _ = fmt.Fprint(w, `{"status":404,"code":"NOT_FOUND","message":"not found"}`)
		return
	}
	ch := make(chan string, 16)
	if e.streams == nil {
		e.streams = map[chan string]struct{}{}
	}
	e.streams[ch] = struct{}{}
	e.opened++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.streams, ch)
		e.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = fmt.Fprint(w, "retry: 500\n: hello\n\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case frame, ok := <-ch:
			if !ok {
				return
			}
			_, _ = fmt.Fprint(w, frame)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// listening reports how many streams are open.
func (e *fakeEvents) listening() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.streams)
}

// send passes a webhook of this type, with data, to every open stream.
func (e *fakeEvents) send(typ string, data any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	id := fmt.Sprintf("Webhook:0199a000-0000-7000-8000-%012d", e.n)
	env, _ := json.Marshal(map[string]any{"id": id, "type": typ, "timestamp": time.Now().UTC().Format(time.RFC3339), "data": data, "sequence": e.n})
	for ch := range e.streams {
		ch <- "id: " + id + "\nevent: " + typ + "\ndata: " + string(env) + "\n\n"
	}
}

// signOut sends the stream's signed-out and ends it.
func (e *fakeEvents) signOut() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for ch := range e.streams {
		ch <- "event: signed-out\ndata: {}\n\n"
		close(ch)
		delete(e.streams, ch)
	}
	e.on = false
}

// TestMoneyFollowsEvents: with the event stream carrying webhooks, the
// open payment view and the list stop polling; a payment event updates
// the view, the list and the balance at once, also after a final status
// (a completed payment comes back: "Returned", the money back in the
// balance), without a click or a reload; "signed-out" signs the page out.
func TestMoneyFollowsEvents(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	m.set(func(m *fakeMoney) { m.after = 1 << 20 }) // polling alone never settles it
	api.events.enable()
	ctx := newTab(t)
	signIn(t, ctx, site)
	waitFor(t, ctx, moneyShown)
	deadline := time.Now().Add(5 * time.Second)
	for api.events.listening() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open, want 1", api.events.listening())
		}
		time.Sleep(20 * time.Millisecond)
	}

	getQuote(t, ctx, mxnAccount, "SENDING", "100", "Rent")
	clickID(t, ctx, "send-submit")
	waitFor(t, ctx, `document.getElementById("transaction").dataset.status === "PROCESSING"`)
	var x *fakeTx
	m.set(func(m *fakeMoney) { x = m.txs[0] })
	txJSON := func() map[string]any {
		var out map[string]any
		m.set(func(*fakeMoney) { out = x.json() })
		return out
	}
	reads := func() int {
		n := 0
		for _, c := range api.requests("/api/transactions/" + x.id) {
			if c.method == "GET" {
				n++
			}
		}
		return n
	}

	// The first event shows the stream carries webhooks: polling stops.
	api.events.send("OUTGOING_PAYMENT.PROCESSING", txJSON())
	time.Sleep(500 * time.Millisecond)
	before := reads()
	time.Sleep(3 * time.Second)
	if n := reads(); n != before {
		t.Errorf("the view asked for the payment %d times in 3 s with the stream live", n-before)
	}

	// It completes: one event, and the view, the list and the balance follow.
	m.set(func(m *fakeMoney) {
		x.status, x.settled = "COMPLETED", time.Now().UTC().Format(time.RFC3339)
		m.total -= x.sent
	})
	api.events.send("OUTGOING_PAYMENT.COMPLETED", txJSON())
	waitFor(t, ctx, `document.getElementById("transaction").dataset.status === "COMPLETED"`)
	waitFor(t, ctx, `(() => { const li = document.querySelector('#transactions-list > li[data-id="`+x.id+`"]'); return !!li && li.dataset.status === "COMPLETED"; })()`)
	waitFor(t, ctx, `document.getElementById("on-hold-row").hidden`)
	left := text(t, ctx, "account-balance")

	// It comes back after completing: "Returned", and the money is back.
	m.set(func(m *fakeMoney) {
		x.status, x.reason = "REFUNDED", "OFFRAMP_FAILED"
		m.available += x.sent
		m.total += x.sent
	})
	api.events.send("OUTGOING_PAYMENT.REFUND_COMPLETED", txJSON())
	waitFor(t, ctx, `document.getElementById("transaction").dataset.status === "REFUNDED"`)
	if got := text(t, ctx, "tx-badge"); got != "Returned" {
		t.Errorf("badge %q, want Returned", got)
	}
	waitFor(t, ctx, `document.getElementById("account-balance").textContent === "$1,234.56 USD"`)
	if left == "$1,234.56 USD" {
		t.Errorf("the balance did not move when the payment completed")
	}
	waitFor(t, ctx, `(() => { const li = document.querySelector('#transactions-list > li[data-id="`+x.id+`"]'); return !!li && li.dataset.status === "REFUNDED"; })()`)

	// A balance event alone reads the balance again.
	m.set(func(m *fakeMoney) { m.available += 100; m.total += 100 })
	api.events.send("INTERNAL_ACCOUNT.BALANCE_UPDATED", m.account())
	waitFor(t, ctx, `document.getElementById("account-balance").textContent === "$1,235.56 USD"`)

	// The session ends: the stream says so, and the page signs out.
	api.set(func(f *fakeAPI) { f.signedIn = false })
	api.events.signOut()
	waitFor(t, ctx, shown("login")+` && !`+shown("signed-in"))
	if got := text(t, ctx, "status"); !strings.Contains(got, "session has ended") {
		t.Errorf("status %q", got)
	}
}
