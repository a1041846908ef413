package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"paywallet/service/payments"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// createEndpoint adds an endpoint and returns it.
func (e *env) createEndpoint(body map[string]any) payments.WebhookEndpoint {
	e.t.Helper()
	r := e.do("POST", "/webhooks/endpoints", body, nil)
	e.mustStatus(r, http.StatusCreated)
	var ep payments.WebhookEndpoint
	r.decode(e.t, &ep)
	return ep
}

func (e *env) endpoint(id string) payments.WebhookEndpoint {
	e.t.Helper()
	r := e.do("GET", "/webhooks/endpoints/"+id, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var ep payments.WebhookEndpoint
	r.decode(e.t, &ep)
	return ep
}

// TestWebhookEndpointsCRUD: endpoints are created, read, changed and
// deleted; every bad field is named and nothing is stored for a bad
// request.
func TestWebhookEndpointsCRUD(t *testing.T) {
	e := newEnv(t)
	refused := []struct {
		body   string
		fields []string
	}{
		{`{}`, []string{"url"}},
		{`{"url":"ftp://a.example/h"}`, []string{"url"}},
		{`{"url":"https://a.example/h","eventTypes":[]}`, []string{"eventTypes"}},
		{`{"url":"https://a.example/h","eventTypes":["*","TEST"]}`, []string{"eventTypes"}},
		{`{"url":"https://a.example/h","eventTypes":["NOPE","INTERNAL_ACCOUNT.BALANCE_UPDATED","INTERNAL_ACCOUNT.BALANCE_UPDATED"]}`, []string{"eventTypes[0]", "eventTypes[2]"}},
		{`{"url":"x","payloadStyle":"fat","description":"` + strings.Repeat("d", 501) + `"}`, []string{"description", "payloadStyle", "url"}},
	}
	for _, c := range refused {
		r := e.do("POST", "/webhooks/endpoints", []byte(c.body), map[string]string{"Content-Type": "application/json"})
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", c.body, r.status, r.body)
		}
		if got := fieldsOf(t, r); !slices.Equal(got, c.fields) {
			t.Fatalf("%s: fields %v, want %v (%s)", c.body, got, c.fields, r.body)
		}
	}
	if r := e.do("POST", "/webhooks/endpoints", []byte(`{"url":"https://a.example/h","bogus":1}`), map[string]string{"Content-Type": "application/json"}); r.status != http.StatusBadRequest {
		t.Fatalf("unknown field: %d %s", r.status, r.body)
	}
	var list wire.List[payments.WebhookEndpoint]
	e.do("GET", "/webhooks/endpoints", nil, nil).decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused requests stored endpoints: %+v", list.Data)
	}

	ep := e.createEndpoint(map[string]any{"url": "https://a.example/h", "description": "ledger sync"})
	if !strings.HasPrefix(ep.ID, "WebhookEndpoint:") || !slices.Equal(ep.EventTypes, []string{"*"}) || ep.PayloadStyle != "snapshot" ||
		!ep.Enabled || ep.IsDefault || ep.Status != "ACTIVE" || ep.Description != "ledger sync" || ep.PendingRetries != 0 {
		t.Fatalf("created %+v", ep)
	}
	if got := e.endpoint(ep.ID); got.ID != ep.ID || got.URL != ep.URL {
		t.Fatalf("GET %+v, want %+v", got, ep)
	}
	e.clock.Advance(time.Second)
	r := e.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"eventTypes": []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED"},
		"payloadStyle": "thin", "enabled": false}, nil)
	e.mustStatus(r, http.StatusOK)
	var patched payments.WebhookEndpoint
	r.decode(t, &patched)
	if !slices.Equal(patched.EventTypes, []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED"}) || patched.PayloadStyle != "thin" ||
		patched.Enabled || patched.Status != "DISABLED" || patched.DisabledReason == "" || patched.DisabledAt == "" ||
		patched.URL != ep.URL || patched.Description != ep.Description || patched.UpdatedAt == ep.UpdatedAt {
		t.Fatalf("patched %s", r.body)
	}
	if r := e.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"url": "", "payloadStyle": "x"}, nil); r.status != http.StatusBadRequest ||
		!slices.Equal(fieldsOf(t, r), []string{"payloadStyle", "url"}) {
		t.Fatalf("bad PATCH: %d %s", r.status, r.body)
	}
	r = e.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"enabled": true}, nil)
	e.mustStatus(r, http.StatusOK)
	patched = payments.WebhookEndpoint{}
	r.decode(t, &patched)
	if !patched.Enabled || patched.Status != "ACTIVE" || patched.DisabledReason != "" || patched.DisabledAt != "" {
		t.Fatalf("enabled again %s", r.body)
	}
	for _, id := range []string{"WebhookEndpoint:0199a3c4-0000-7000-8000-000000000001", "nope"} {
		if r := e.do("GET", "/webhooks/endpoints/"+id, nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("GET %s: %d", id, r.status)
		}
		if r := e.do("PATCH", "/webhooks/endpoints/"+id, map[string]any{"enabled": true}, nil); r.status != http.StatusNotFound {
			t.Fatalf("PATCH %s: %d", id, r.status)
		}
		if r := e.do("DELETE", "/webhooks/endpoints/"+id, nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("DELETE %s: %d", id, r.status)
		}
	}
	// The default endpoint is one of them.
	e.mustStatus(e.do("PATCH", "/config", map[string]any{"webhookEndpoint": "https://b.example/h"}, nil), http.StatusOK)
	e.do("GET", "/webhooks/endpoints", nil, nil).decode(t, &list)
	if len(list.Data) != 2 || list.Data[0].ID != ep.ID || !list.Data[1].IsDefault || list.Data[1].URL != "https://b.example/h" {
		t.Fatalf("list %+v", list.Data)
	}
	// At most sixteen.
	for i := 2; i < 16; i++ {
		e.createEndpoint(map[string]any{"url": fmt.Sprintf("https://a.example/h%d", i)})
	}
	if r := e.do("POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example/17"}, nil); r.status != http.StatusBadRequest {
		t.Fatalf("a seventeenth endpoint: %d %s", r.status, r.body)
	}
	e.mustStatus(e.do("DELETE", "/webhooks/endpoints/"+ep.ID, nil, nil), http.StatusNoContent)
	if r := e.do("GET", "/webhooks/endpoints/"+ep.ID, nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("after DELETE: %d", r.status)
	}
	// Deleting the default endpoint clears the configuration's.
	e.mustStatus(e.do("DELETE", "/webhooks/endpoints/"+list.Data[1].ID, nil, nil), http.StatusNoContent)
	var c payments.PlatformConfig
	e.do("GET", "/config", nil, nil).decode(t, &c)
	if c.WebhookEndpoint != "" {
		t.Fatalf("config after the default endpoint was deleted: %+v", c)
	}
	if r := e.do("GET", "/webhooks/endpoints", nil, map[string]string{"Authorization": ""}); r.status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d", r.status)
	}
}

// TestWebhookEndpointFilters: two endpoints with different filters each
// get exactly their types, once, in order per resource; a thin endpoint
// gets the envelope with the resource's id only, signed as any other.
func TestWebhookEndpointFilters(t *testing.T) { onBothStores(t, testWebhookEndpointFilters) }

func testWebhookEndpointFilters(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	balances, all := newReceiver(t), newReceiver(t)
	balances.attach(e)
	all.attach(e)
	e.createEndpoint(map[string]any{"url": balances.url(), "eventTypes": []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED"}})
	e.createEndpoint(map[string]any{"url": all.url(), "payloadStyle": "thin"})
	w := e.newWallet("filters@example.com")
	for range 3 {
		e.fund(w.account.ID, 100)
	}
	e.deliver()
	want := []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED#2", "INTERNAL_ACCOUNT.BALANCE_UPDATED#3", "INTERNAL_ACCOUNT.BALANCE_UPDATED#4"}
	if got := balances.of(w.account.ID); !slices.Equal(got, want) {
		t.Fatalf("the balance endpoint got %v, want %v", got, want)
	}
	for _, ev := range balances.events() {
		if ev.Type != "INTERNAL_ACCOUNT.BALANCE_UPDATED" {
			t.Fatalf("the balance endpoint got a %s", ev.Type)
		}
		if !strings.Contains(string(ev.Data), `"balance"`) {
			t.Fatalf("a snapshot without the account: %s", ev.Data)
		}
	}
	if got := all.of(w.account.ID); !slices.Equal(got, append([]string{"INTERNAL_ACCOUNT.STATUS_UPDATED#1"}, want...)) {
		t.Fatalf("the thin endpoint got %v", got)
	}
	evs := all.events()
	// the customer's KYC event, the wallet's four and three fundings
	if len(evs) != 1+4+3 {
		t.Fatalf("the thin endpoint got %d events", len(evs))
	}
	for _, ev := range evs {
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil || len(d) != 1 || d["id"] == "" || ev.Sequence < 1 {
			t.Fatalf("thin event %+v: data %s", ev, ev.Data)
		}
	}
	checkUnique(t, evs)
	if n := e.deliver(); n != 0 {
		t.Fatalf("%d more deliveries", n)
	}
}

// TestWebhookAutoDisable: an endpoint whose deliveries all fail is paused
// and probed with one delivery at a time, disabled once it has failed for
// WebhookDisableAfter, the operator is e-mailed, and GET says why and
// since when; enabled again, it resumes where it stopped.
func TestWebhookAutoDisable(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, func(c *Config) {
		c.WebhookRetryBase, c.WebhookRetryMax = time.Second, 4*time.Second
		c.WebhookDisableAfter = time.Minute
		c.OperatorEmail = "ops@example.com"
	})
	rc.attach(e)
	rc.failAll = true
	ep := e.createEndpoint(map[string]any{"url": rc.url()})
	w := e.newWallet("down@example.com")
	e.fund(w.account.ID, 100)
	e.deliver()
	hits := rc.hits
	if hits < 2 {
		t.Fatalf("the first round sent %d", hits)
	}
	if got := e.endpoint(ep.ID); got.Status != "FAILING" || got.FailingSince == "" || got.PausedUntil == "" || got.PendingRetries == 0 {
		t.Fatalf("after a failed round %+v", got)
	}
	// Paused: nothing is sent before the pause ends, then one probe.
	e.deliver()
	if rc.hits != hits {
		t.Fatalf("%d requests to a paused endpoint", rc.hits-hits)
	}
	e.clock.Advance(4 * time.Second)
	e.deliver()
	if rc.hits != hits+1 {
		t.Fatalf("%d requests to probe a failing endpoint, want 1", rc.hits-hits)
	}
	for i := 0; i < 30 && e.endpoint(ep.ID).Enabled; i++ {
		e.clock.Advance(4 * time.Second)
		e.deliver()
	}
	got := e.endpoint(ep.ID)
	if got.Enabled || got.Status != "DISABLED" || got.DisabledAt == "" || !strings.Contains(got.DisabledReason, "503") || got.FailingSince == "" {
		t.Fatalf("after a minute of failures %+v", got)
	}
	msg, ok := e.box.Latest("ops@example.com")
	if !ok || !strings.Contains(msg.Subject, ep.ID) || !strings.Contains(msg.Body, "enabled") {
		t.Fatalf("operator e-mail %+v", msg)
	}
	hits = rc.hits
	e.clock.Advance(time.Hour)
	e.deliver()
	if rc.hits != hits {
		t.Fatalf("%d requests to a disabled endpoint", rc.hits-hits)
	}
	rc.mu.Lock()
	rc.failAll = false
	rc.mu.Unlock()
	e.mustStatus(e.do("PATCH", "/webhooks/endpoints/"+ep.ID, map[string]any{"enabled": true}, nil), http.StatusOK)
	e.deliver()
	want := []string{"INTERNAL_ACCOUNT.STATUS_UPDATED#1", "INTERNAL_ACCOUNT.BALANCE_UPDATED#2"}
	if got := rc.of(w.account.ID); !slices.Equal(got, want) {
		t.Fatalf("after enabling: %v, want %v", got, want)
	}
	if got := e.endpoint(ep.ID); got.Status != "ACTIVE" || got.PendingRetries != 0 || got.LastSuccessAt == "" {
		t.Fatalf("recovered %+v", got)
	}
}

// TestEventsAPI: GET /events pages newest first with its filters, GET
// /events/{id} is the event as it is delivered, and events go after the
// retention while their resources' sequences go on.
func TestEventsAPI(t *testing.T) { onBothStores(t, testEventsAPI) }

func testEventsAPI(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, sandbox)...)
	start := e.clock.Now()
	w := e.newWallet("events@example.com")
	e.clock.Advance(time.Minute)
	mid := e.clock.Now()
	e.fund(w.account.ID, 100)
	e.fund(w.account.ID, 200)
	e.deliver()
	page := func(q string) (wire.List[webhooksig.Event], response) {
		var l wire.List[webhooksig.Event]
		r := e.do("GET", "/events?"+q, nil, nil)
		e.mustStatus(r, http.StatusOK)
		r.decode(t, &l)
		return l, r
	}
	var seen []webhooksig.Event
	cursor := ""
	for {
		l, _ := page("limit=2&cursor=" + cursor)
		seen = append(seen, l.Data...)
		if !l.HasMore {
			break
		}
		cursor = l.NextCursor
	}
	// KYC, STATUS, and per funding INCOMING_PAYMENT.COMPLETED and BALANCE
	if len(seen) != 6 || seen[0].Type != "INTERNAL_ACCOUNT.BALANCE_UPDATED" || seen[0].Sequence != 3 ||
		seen[4].Type+seen[5].Type != "CUSTOMER.KYC_APPROVEDINTERNAL_ACCOUNT.STATUS_UPDATED" {
		t.Fatalf("events %+v", seen)
	}
	l, _ := page("resourceId=" + w.account.ID)
	if len(l.Data) != 3 || l.Data[0].Sequence != 3 || l.Data[2].Sequence != 1 {
		t.Fatalf("the wallet's events %+v", l.Data)
	}
	l, _ = page("type=INCOMING_PAYMENT.COMPLETED&type=CUSTOMER.KYC_APPROVED")
	if len(l.Data) != 3 {
		t.Fatalf("two types %+v", l.Data)
	}
	l, _ = page("startDate=" + mid.Format(time.RFC3339Nano))
	if len(l.Data) != 4 {
		t.Fatalf("since %s: %+v", mid, l.Data)
	}
	l, _ = page("startDate=" + start.Format(time.RFC3339Nano) + "&endDate=" + mid.Format(time.RFC3339Nano))
	if len(l.Data) != 2 {
		t.Fatalf("before %s: %+v", mid, l.Data)
	}
	r := e.do("GET", "/events/"+seen[0].ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	one, _ := json.Marshal(seen[0])
	var got webhooksig.Event
	r.decode(t, &got)
	if again, _ := json.Marshal(got); string(again) != string(one) {
		t.Fatalf("GET /events/{id} %s, listed %s", again, one)
	}
	for _, id := range []string{"Webhook:0199a3c4-0000-7000-8000-000000000001", "nope"} {
		if r := e.do("GET", "/events/"+id, nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("GET /events/%s: %d", id, r.status)
		}
	}
	for _, q := range []string{"type=NOPE", "limit=0", "limit=101", "cursor=x", "startDate=yesterday", "startDate=2026-01-02T00:00:00Z&endDate=2026-01-01T00:00:00Z"} {
		if r := e.do("GET", "/events?"+q, nil, nil); r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
	}

	// Retention: everything is older than 30 days now.
	e.clock.Advance(31 * 24 * time.Hour)
	if n, err := e.svc.DropOldEvents(context.Background()); err != nil || n != 6 {
		t.Fatalf("dropped %d: %v", n, err)
	}
	if l, _ := page(""); len(l.Data) != 0 {
		t.Fatalf("after the retention %+v", l.Data)
	}
	e.fund(w.account.ID, 300)
	e.deliver()
	if l, _ := page("resourceId=" + w.account.ID); len(l.Data) != 1 || l.Data[0].Sequence != 4 {
		t.Fatalf("the wallet's sequence after the retention: %+v", l.Data)
	}
}

// TestWebhookReplayRange: a replay sends an endpoint again the events of
// a time range and types, in order per resource; bad ranges are refused.
func TestWebhookReplayRange(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	from := e.clock.Now()
	w := e.newWallet("replay@example.com")
	e.fund(w.account.ID, 100)
	e.clock.Advance(time.Minute)
	e.fund(w.account.ID, 100)
	e.deliver()
	before := len(rc.events())
	c := e.do("GET", "/webhooks/endpoints", nil, nil)
	var eps wire.List[payments.WebhookEndpoint]
	c.decode(t, &eps)
	id := eps.Data[0].ID
	r := e.do("POST", "/webhooks/endpoints/"+id+"/replay", map[string]any{"from": from.Format(time.RFC3339Nano),
		"to": from.Add(time.Minute).Format(time.RFC3339Nano), "eventTypes": []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED", "INTERNAL_ACCOUNT.STATUS_UPDATED"}}, nil)
	e.mustStatus(r, http.StatusOK)
	var res payments.ReplayResult
	r.decode(t, &res)
	if res.Replayed != 2 || res.EndpointID != id {
		t.Fatalf("replay %s", r.body)
	}
	e.deliver()
	evs := rc.events()
	if len(evs) != before+2 {
		t.Fatalf("%d events after the replay, want %d", len(evs), before+2)
	}
	if a, b := evs[before], evs[before+1]; a.Type != "INTERNAL_ACCOUNT.STATUS_UPDATED" || a.Sequence != 1 || b.Sequence != 2 {
		t.Fatalf("replayed %+v, %+v", a, b)
	}
	bad := []struct {
		body   map[string]any
		fields []string
	}{
		{map[string]any{}, []string{"from"}},
		{map[string]any{"from": "x", "to": "y"}, []string{"from", "to"}},
		{map[string]any{"from": from.Format(time.RFC3339), "to": from.Add(-time.Hour).Format(time.RFC3339)}, []string{"to"}},
		{map[string]any{"from": from.Format(time.RFC3339), "eventTypes": []string{"NOPE"}}, []string{"eventTypes[0]"}},
	}
	for _, b := range bad {
		r := e.do("POST", "/webhooks/endpoints/"+id+"/replay", b.body, nil)
		if r.status != http.StatusBadRequest || !slices.Equal(fieldsOf(t, r), b.fields) {
			t.Fatalf("%v: %d %s", b.body, r.status, r.body)
		}
	}
	if r := e.do("POST", "/webhooks/endpoints/WebhookEndpoint:0199a3c4-0000-7000-8000-000000000001/replay",
		map[string]any{"from": from.Format(time.RFC3339)}, nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown endpoint: %d %s", r.status, r.body)
	}
}

// TestEndpointsShareSignatures: endpoints that get the same body of an
// event in one round share its signatures (signed once, valid at both),
// and an endpoint of another payload style, whose body differs, gets its
// own.
func TestEndpointsShareSignatures(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, sandbox, func(c *Config) { c.Registry = reg })
	a, b, thin := newReceiver(t), newReceiver(t), newReceiver(t)
	for _, rc := range []*receiver{a, b, thin} {
		rc.attach(e)
	}
	e.createEndpoint(map[string]any{"url": a.url()})
	e.createEndpoint(map[string]any{"url": b.url()})
	e.createEndpoint(map[string]any{"url": thin.url(), "payloadStyle": "thin"})
	w := e.newWallet("shared@example.com")
	e.fund(w.account.ID, 100)
	e.deliver()
	n := len(a.events())
	if n == 0 || len(b.events()) != n || len(thin.events()) != n {
		t.Fatalf("deliveries: %d, %d and %d (thin)", n, len(b.events()), len(thin.events()))
	}
	m := regexp.MustCompile(`(?m)^payments_webhook_signings_total ([0-9]+)$`).FindStringSubmatch(scrape(t, reg))
	if m == nil {
		t.Fatal("no payments_webhook_signings_total")
	}
	// One set per event for the two snapshot endpoints, one per event for
	// the thin one: 3n without sharing.
	if got, _ := strconv.Atoi(m[1]); got != 2*n {
		t.Fatalf("%d signature sets for %d events to three endpoints, want %d", got, n, 2*n)
	}
}
