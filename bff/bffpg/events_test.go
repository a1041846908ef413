package bffpg_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/bff"
	"paywallet/service/store/pgtest"
)

// collector gathers what a subscription delivers.
type collector struct {
	mu  sync.Mutex
	evs []bff.Event
}

func (c *collector) deliver(ev bff.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, ev)
}

func (c *collector) ids() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.evs {
		out = append(out, ev.ID)
	}
	return out
}

// wait waits until id was delivered and returns it.
func (c *collector) wait(t *testing.T, id string) bff.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, ev := range c.evs {
			if ev.ID == id {
				c.mu.Unlock()
				return ev
			}
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s not delivered; got %v", id, c.ids())
	return bff.Event{}
}

func event(n int, body string) bff.Event {
	return bff.Event{ID: fmt.Sprintf("Webhook:0199a3c4-0000-7000-8000-%012d", n), Type: "OUTGOING_PAYMENT.COMPLETED",
		CustomerID: "Customer:0199a3c4-0000-7000-8000-0000000000c1", Body: []byte(body)}
}

// TestEventsReachEveryInstance: an event added through one Store reaches
// the subscribers of both, whole, however large (NOTIFY carries only its
// id); the same id added again, through either, is not new and reaches
// nobody again.
func TestEventsReachEveryInstance(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	a, b := openStore(t, url, nil), openStore(t, url, nil)
	var gotA, gotB collector
	stopA := a.Events().Subscribe(gotA.deliver)
	defer stopA()
	stopB := b.Events().Subscribe(gotB.deliver)
	defer stopB()
	ctx := context.Background()

	big := `{"id":"x","data":{"note":"` + strings.Repeat("é", 9000) + `"}}`
	for i, ev := range []bff.Event{event(1, `{"id":"1"}`), event(2, big)} {
		ok, err := a.Events().Add(ctx, ev)
		if err != nil || !ok {
			t.Fatalf("Add %d: %v %v", i, ok, err)
		}
		for name, c := range map[string]*collector{"A": &gotA, "B": &gotB} {
			got := c.wait(t, ev.ID)
			if got.Type != ev.Type || got.CustomerID != ev.CustomerID || string(got.Body) != string(ev.Body) {
				t.Errorf("%s got %+v", name, got)
			}
		}
	}
	for _, st := range []bff.EventLog{a.Events(), b.Events()} {
		if ok, err := st.Add(ctx, event(1, `{"id":"1","again":true}`)); err != nil || ok {
			t.Errorf("the same id again: added %v, %v", ok, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(gotA.ids()); n != 2 {
		t.Errorf("A got %v, want 2 events", gotA.ids())
	}
	if n := len(gotB.ids()); n != 2 {
		t.Errorf("B got %v, want 2 events", gotB.ids())
	}

	// Once stopped, a subscription hears nothing more.
	stopB()
	if ok, err := b.Events().Add(ctx, event(3, `{}`)); err != nil || !ok {
		t.Fatalf("Add 3: %v %v", ok, err)
	}
	gotA.wait(t, event(3, "").ID)
	time.Sleep(200 * time.Millisecond)
	if n := len(gotB.ids()); n != 2 {
		t.Errorf("B got %v after stopping", gotB.ids())
	}
}

// TestEventsListenerReconnects: when the listener's connection is cut,
// it reconnects, and an event added meanwhile still arrives.
func TestEventsListenerReconnects(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t).NewDatabase(t)
	a := openStore(t, url, nil)
	var got collector
	stop := a.Events().Subscribe(got.deliver)
	defer stop()
	ctx := context.Background()
	if ok, err := a.Events().Add(ctx, event(10, `{}`)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got.wait(t, event(10, "").ID)

	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var killed int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%WHERE key = $1')`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listening connections, want 1", killed)
	}
	b := openStore(t, url, nil) // another instance adds while A is away
	if ok, err := b.Events().Add(ctx, event(11, `{"while":"away"}`)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ev := got.wait(t, event(11, "").ID); string(ev.Body) != `{"while":"away"}` {
		t.Errorf("got %+v", ev)
	}
	if ok, err := b.Events().Add(ctx, event(12, `{}`)); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got.wait(t, event(12, "").ID)
}
