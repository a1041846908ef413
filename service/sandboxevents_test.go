package service

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// trigger asks for an event of the type and returns the answer.
func (e *env) trigger(typ string) payments.TriggeredEvent {
	e.t.Helper()
	r := e.do("POST", "/sandbox/events/trigger", map[string]any{"type": typ}, nil)
	e.mustStatus(r, http.StatusAccepted)
	var out payments.TriggeredEvent
	r.decode(e.t, &out)
	return out
}

// TestTriggerEveryType: every event type can be triggered, and an endpoint
// that wants only that type receives an event of exactly that type about
// the resource the answer names, signed as every delivery (the receiver
// verifies all three signatures), once the work the answer announces is
// done: nothing for a change made by the request, settlement for a
// payment's outcome, the quote's expiry for EXPIRED.
func TestTriggerEveryType(t *testing.T) {
	e := newEnv(t, sandbox, func(c *Config) {
		c.SettlementDelay = time.Second
		c.QuoteTTL = 2 * time.Minute
	})
	// What has to happen after the trigger before the event is sent: the
	// clock moves this much, then the settlement worker runs, as many
	// times as listed.
	settleOnce := []time.Duration{time.Second}
	after := map[string][]time.Duration{
		"OUTGOING_PAYMENT.COMPLETED":        settleOnce,
		"OUTGOING_PAYMENT.FAILED":           settleOnce,
		"OUTGOING_PAYMENT.REFUND_COMPLETED": {time.Second, time.Second},
		"OUTGOING_PAYMENT.EXPIRED":          {2 * time.Minute},
	}
	// Only these say "sent now": the rest arrive later, and say when.
	later := map[string]string{
		"OUTGOING_PAYMENT.COMPLETED":        "after settlement, within 1 s",
		"OUTGOING_PAYMENT.FAILED":           "after settlement, within 1 s",
		"OUTGOING_PAYMENT.REFUND_COMPLETED": "after settlement",
		"OUTGOING_PAYMENT.EXPIRED":          "expiresAt",
	}
	for _, typ := range payments.EventTypes {
		t.Run(typ, func(t *testing.T) {
			e.t = t
			rc := newReceiver(t)
			rc.attach(e)
			ep := e.createEndpoint(map[string]any{"url": rc.url(), "eventTypes": []string{typ}})
			defer e.do("DELETE", "/webhooks/endpoints/"+ep.ID, nil, nil)

			got := e.trigger(typ)
			if got.Type != typ || got.ResourceID == "" {
				t.Fatalf("answer %+v", got)
			}
			if want, ok := later[typ]; ok {
				if !strings.Contains(got.Message, want) {
					t.Fatalf("message %q does not say %q", got.Message, want)
				}
			} else if !strings.HasPrefix(got.Message, "sent now") {
				t.Fatalf("message %q, want it sent now", got.Message)
			}
			for _, d := range after[typ] {
				e.deliver()
				if n := len(rc.events()); n != 0 {
					t.Fatalf("%d events before the work the answer announces", n)
				}
				e.clock.Advance(d)
				e.settle()
			}
			e.deliver()
			evs := rc.events()
			if len(evs) == 0 {
				t.Fatalf("no %s arrived (answer %+v)", typ, got)
			}
			about := 0
			for _, ev := range evs {
				if ev.Type != typ {
					t.Fatalf("an endpoint for %s got a %s", typ, ev.Type)
				}
				var d eventData
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Fatalf("data %s: %v", ev.Data, err)
				}
				if d.ID == got.ResourceID {
					about++
				}
			}
			if about != 1 {
				t.Fatalf("%d events about %s, want 1: %+v", about, got.ResourceID, evs)
			}
		})
	}
	e.t = t

	// Everything ran on one trigger customer, found by its
	// platformCustomerId and reused.
	var list wire.List[wire.Customer]
	e.do("GET", "/customers?platformCustomerId=sandbox-events-trigger", nil, nil).decode(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("%d trigger customers", len(list.Data))
	}
}

// TestTriggerRefusals: a missing or unknown type is 400 naming type, and
// in production mode the trigger is 403 like every sandbox route.
func TestTriggerRefusals(t *testing.T) {
	e := newEnv(t, sandbox)
	for _, body := range []map[string]any{{"type": "NOT.A_TYPE"}, {"type": ""}, {}, {"type": "TEST"}} {
		r := e.do("POST", "/sandbox/events/trigger", body, nil)
		e.mustStatus(r, http.StatusBadRequest)
		if got := fieldsOf(t, r); !slices.Equal(got, []string{"type"}) {
			t.Fatalf("%v: fields %v", body, got)
		}
	}
	prod := newEnv(t)
	r := prod.do("POST", "/sandbox/events/trigger", map[string]any{"type": "OUTGOING_PAYMENT.COMPLETED"}, nil)
	prod.mustStatus(r, http.StatusForbidden)
}

// TestTriggerKeepsTheWalletFunded: payments drain the trigger's wallet,
// and it is topped up before it runs short, so triggers keep working.
func TestTriggerKeepsTheWalletFunded(t *testing.T) {
	e := newEnv(t, sandbox, func(c *Config) { c.SettlementDelay = time.Second })
	for range 3 {
		e.trigger("OUTGOING_PAYMENT.COMPLETED")
		e.clock.Advance(time.Second)
		e.settle()
	}
	var list wire.List[wire.Customer]
	e.do("GET", "/customers?platformCustomerId=sandbox-events-trigger", nil, nil).decode(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("%d trigger customers", len(list.Data))
	}
	var accts wire.List[wire.InternalAccount]
	e.do("GET", "/customers/internal-accounts?customerId="+list.Data[0].ID, nil, nil).decode(t, &accts)
	if len(accts.Data) != 1 || accts.Data[0].Balance.Amount != 1_000_000-3*1_000 {
		t.Fatalf("trigger wallet %+v", accts.Data)
	}
}
