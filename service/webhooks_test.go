package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paywallet/service/payments"
	"paywallet/service/store"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

// receiver is a platform's webhook endpoint: it checks both signatures of
// every delivery against the service's JWKS (fetched from the service) at
// the service's clock, and keeps what it accepted in arrival order.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	keys     webhooksig.JWKS
	now      func() time.Time
	accepted []webhooksig.Event
	hits     int
	failFor  map[string]int // resource id -> answer 500 this many more times
	failAll  bool
	badSigs  []string
	// skipCompat: do not check X-Service-Signature, which the primary
	// key alone signs (a receiver that knows only a rotation's new key).
	skipCompat bool
}

type eventData struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t, failFor: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/hooks" }

// attach makes the receiver trust e's published keys and clock.
func (rc *receiver) attach(e *env) {
	r := e.do("GET", "/webhooks/jwks.json", nil, map[string]string{"Authorization": ""})
	e.mustStatus(r, http.StatusOK)
	keys, err := webhooksig.ParseJWKS(r.body)
	if err != nil {
		rc.t.Fatal(err)
	}
	rc.mu.Lock()
	rc.keys, rc.now = keys, e.clock.Now
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hits++
	id, err := webhooksig.Verify(r.Header.Get(webhooksig.Header), body, rc.keys, rc.now())
	if err != nil {
		err = fmt.Errorf("%s: %w", webhooksig.Header, err)
	}
	if err == nil && !rc.skipCompat {
		if err = webhooksig.VerifyCompat(r.Header.Get(webhooksig.CompatHeader), body, rc.keys); err != nil {
			err = fmt.Errorf("%s: %w", webhooksig.CompatHeader, err)
		}
	}
	if err == nil {
		// The Standard Webhooks form, with the JWKS's Ed25519 keys.
		err = webhooksig.VerifyStandard(r.Header.Get(webhooksig.StdIDHeader), r.Header.Get(webhooksig.StdTimestampHeader),
			r.Header.Get(webhooksig.StdSignatureHeader), body, rc.keys.Ed25519Keys(), rc.now())
		if err != nil {
			err = fmt.Errorf("%s: %w", webhooksig.StdSignatureHeader, err)
		}
		if err == nil && r.Header.Get(webhooksig.StdIDHeader) != id {
			err = fmt.Errorf("webhook-id %q is not the body's id %q", r.Header.Get(webhooksig.StdIDHeader), id)
		}
	}
	if err != nil {
		rc.badSigs = append(rc.badSigs, err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev webhooksig.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != id {
		rc.badSigs = append(rc.badSigs, fmt.Sprintf("body %s: %v", body, err))
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var d eventData
	_ = json.Unmarshal(ev.Data, &d)
	if rc.failAll || rc.failFor[d.ID] > 0 {
		rc.failFor[d.ID]--
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	rc.accepted = append(rc.accepted, ev)
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) events() []webhooksig.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.badSigs) > 0 {
		rc.t.Fatalf("deliveries refused: %v", rc.badSigs)
	}
	return slices.Clone(rc.accepted)
}

// of returns the accepted events of one resource as "TYPE#seq" strings.
func (rc *receiver) of(resourceID string) []string {
	var out []string
	for _, ev := range rc.events() {
		var d eventData
		if json.Unmarshal(ev.Data, &d) == nil && d.ID == resourceID {
			out = append(out, fmt.Sprintf("%s#%d", ev.Type, ev.Sequence))
		}
	}
	return out
}

// withWebhooks starts the service with the receiver's URL as its
// webhookEndpoint and short retries.
func withWebhooks(rc *receiver) func(*Config) {
	return func(c *Config) {
		c.WebhookURL = rc.url()
		c.WebhookRetryBase, c.WebhookRetryMax = time.Second, 4*time.Second
	}
}

// eventOf is the accepted event of the resource with the type.
func (rc *receiver) eventOf(resourceID, typ string) webhooksig.Event {
	rc.t.Helper()
	for _, ev := range rc.events() {
		var d eventData
		if json.Unmarshal(ev.Data, &d) == nil && d.ID == resourceID && ev.Type == typ {
			return ev
		}
	}
	rc.t.Fatalf("no %s of %s accepted", typ, resourceID)
	return webhooksig.Event{}
}

// lastWallet is the data of the newest INTERNAL_ACCOUNT.BALANCE_UPDATED of
// the wallet the receiver accepted.
func (rc *receiver) lastWallet(id string) wire.InternalAccount {
	rc.t.Helper()
	evs := rc.events()
	for i := len(evs) - 1; i >= 0; i-- {
		var a wire.InternalAccount
		if evs[i].Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" && json.Unmarshal(evs[i].Data, &a) == nil && a.ID == id {
			return a
		}
	}
	rc.t.Fatalf("no balance event of %s accepted", id)
	return wire.InternalAccount{}
}

// eventOf is the recorded event of the resource with the type, as GET
// /events shows it (catalogued by deliver).
func (e *env) eventOf(resourceID, typ string) webhooksig.Event {
	e.t.Helper()
	e.deliver()
	var list wire.List[webhooksig.Event]
	r := e.do("GET", "/events?limit=100&resourceId="+resourceID+"&type="+typ, nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(e.t, &list)
	if len(list.Data) != 1 {
		e.t.Fatalf("events %s of %s: %s", typ, resourceID, r.body)
	}
	return list.Data[0]
}

func (e *env) deliver() int {
	e.t.Helper()
	n, err := e.svc.DeliverWebhooks(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// checkUnique fails when an event id was accepted twice or a resource's
// sequences are not 1, 2, 3, … in arrival order.
func checkUnique(t *testing.T, evs []webhooksig.Event) {
	t.Helper()
	seen := map[string]bool{}
	last := map[string]int64{}
	for _, ev := range evs {
		if seen[ev.ID] {
			t.Fatalf("event %s accepted twice", ev.ID)
		}
		seen[ev.ID] = true
		var d eventData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("event %s data: %v", ev.ID, err)
		}
		if ev.Sequence != last[d.ID]+1 {
			t.Fatalf("%s of %s has sequence %d after %d", ev.Type, d.ID, ev.Sequence, last[d.ID])
		}
		last[d.ID] = ev.Sequence
	}
}

// TestWebhookLifecycle: every state change of a payment, of the wallet and
// of the destination is delivered once, with the reference's type, in order
// per resource, signed.
func TestWebhookLifecycle(t *testing.T) { onBothStores(t, testWebhookLifecycle) }

func testWebhookLifecycle(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc), func(c *Config) { c.SettlementDelay = time.Second })...)
	rc.attach(e)
	p := e.newPayer("hooks@example.com", 100_000)
	e.deliver()
	if got, want := rc.of(p.account.ID), []string{"INTERNAL_ACCOUNT.STATUS_UPDATED#1", "INTERNAL_ACCOUNT.BALANCE_UPDATED#2"}; !slices.Equal(got, want) {
		t.Fatalf("wallet events %v, want %v", got, want)
	}
	var funding []webhooksig.Event
	for _, ev := range rc.events() {
		if ev.Type == "INCOMING_PAYMENT.COMPLETED" {
			funding = append(funding, ev)
		}
	}
	if len(funding) != 1 || !strings.Contains(string(funding[0].Data), `"receivedAmount"`) || !strings.Contains(string(funding[0].Data), `"type":"INCOMING"`) {
		t.Fatalf("funding events %+v", funding)
	}

	cases := []struct {
		suffix string
		want   []string // the transaction's events
		steps  int
	}{
		{"12345", []string{"PENDING", "PROCESSING", "COMPLETED"}, 1},
		{"12002", []string{"PENDING", "PROCESSING", "FAILED"}, 1},
		{"12004", []string{"PENDING", "PROCESSING", "FAILED"}, 1},
		{"12005", []string{"PENDING", "PROCESSING", "COMPLETED", "REFUND_COMPLETED"}, 2},
		{"12006", []string{"PENDING", "PROCESSING", "FAILED"}, 1},
		{"12007", []string{"PENDING", "PROCESSING", "FAILED"}, 1},
	}
	for _, c := range cases {
		t.Run(c.suffix, func(t *testing.T) {
			dest := e.destination(p, c.suffix)
			e.deliver()
			if got, want := rc.of(dest.ID), []string{"EXTERNAL_ACCOUNT.STATUS_UPDATED#1", "EXTERNAL_ACCOUNT.STATUS_UPDATED#2"}; !slices.Equal(got, want) {
				t.Fatalf("destination events %v, want %v", got, want)
			}
			q := e.quote(quoteBody(p, dest.ID, "SENDING", 1_000))
			e.deliver()
			e.mustStatus(e.execute(q, wire.SandboxSignature), http.StatusOK)
			e.deliver()
			// The execute's balance event carries the wallet as GET shows
			// it after the hold (built from the post, not read again).
			if got, want := rc.lastWallet(p.account.ID), e.account(p.account.ID); !reflect.DeepEqual(got, want) {
				t.Fatalf("balance event after execute\n%+v\nwallet\n%+v", got, want)
			}
			for range c.steps {
				e.clock.Advance(time.Second)
				e.settle()
				e.deliver()
			}
			var want []string
			for i, s := range c.want {
				want = append(want, fmt.Sprintf("OUTGOING_PAYMENT.%s#%d", s, i+1))
			}
			if got := rc.of(q.TransactionID); !slices.Equal(got, want) {
				t.Fatalf("transaction events %v, want %v", got, want)
			}
			// The last event carries the transaction as GET shows it.
			x := e.transaction(q.TransactionID)
			evs := rc.events()
			for i := len(evs) - 1; i >= 0; i-- {
				var d eventData
				if json.Unmarshal(evs[i].Data, &d); d.ID == q.TransactionID {
					if d.Status != x.Status {
						t.Fatalf("last event status %s, transaction %s", d.Status, x.Status)
					}
					break
				}
			}
		})
	}
	t.Run("expiry", func(t *testing.T) {
		dest := e.destination(p, "22345")
		q := e.quote(quoteBody(p, dest.ID, "SENDING", 1_000))
		e.clock.Advance(time.Hour)
		e.settle()
		e.deliver()
		if got, want := rc.of(q.TransactionID), []string{"OUTGOING_PAYMENT.PENDING#1", "OUTGOING_PAYMENT.EXPIRED#2"}; !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
	t.Run("deactivation", func(t *testing.T) {
		dest := e.destination(p, "32345")
		e.mustStatus(e.do("DELETE", "/customers/external-accounts/"+dest.ID, nil, nil), http.StatusNoContent)
		e.mustStatus(e.do("DELETE", "/customers/external-accounts/"+dest.ID, nil, nil), http.StatusNoContent)
		e.deliver()
		want := []string{"EXTERNAL_ACCOUNT.STATUS_UPDATED#1", "EXTERNAL_ACCOUNT.STATUS_UPDATED#2", "EXTERNAL_ACCOUNT.STATUS_UPDATED#3"}
		if got := rc.of(dest.ID); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
	})
	evs := rc.events()
	checkUnique(t, evs)
	// Balance changes: funding, then per payment execute and settlement
	// (007 keeps the money held: no change at its end), 005's refund, and
	// nothing for the expired quote.
	var balances int
	for _, ev := range evs {
		if ev.Type == "INTERNAL_ACCOUNT.BALANCE_UPDATED" {
			balances++
		}
	}
	if want := 1 + 6*2 - 1 + 1; balances != want {
		t.Fatalf("%d balance events, want %d", balances, want)
	}
	if n := e.deliver(); n != 0 {
		t.Fatalf("%d more deliveries with nothing new", n)
	}
}

// TestWebhookRetries: a receiver that fails three times gets the event a
// fourth time and never again after it accepted it; meanwhile the
// resource's later events wait, and other resources' events are not held up.
func TestWebhookRetries(t *testing.T) { onBothStores(t, testWebhookRetries) }

func testWebhookRetries(t *testing.T, opts ...func(*Config)) {
	rc := newReceiver(t)
	e := newEnv(t, append(opts, sandbox, withWebhooks(rc))...)
	rc.attach(e)
	w := e.newWallet("retry@example.com")
	rc.mu.Lock()
	rc.failFor[w.account.ID] = 3
	rc.mu.Unlock()
	e.fund(w.account.ID, 500) // BALANCE_UPDATED #2 waits behind #1
	for i := range 3 {
		e.deliver()
		if got := rc.of(w.account.ID); len(got) != 0 {
			t.Fatalf("after failure %d: %v", i+1, got)
		}
		e.clock.Advance(4 * time.Second)
	}
	// The funding transaction's event and the customer's
	// CUSTOMER.KYC_APPROVED (sandbox) were not held up.
	if n := len(rc.events()); n != 2 {
		t.Fatalf("the funding transaction's event was held up: %d accepted", n)
	}
	e.deliver()
	want := []string{"INTERNAL_ACCOUNT.STATUS_UPDATED#1", "INTERNAL_ACCOUNT.BALANCE_UPDATED#2"}
	if got := rc.of(w.account.ID); !slices.Equal(got, want) {
		t.Fatalf("after success %v, want %v", got, want)
	}
	hits := rc.hits
	for range 5 {
		e.clock.Advance(time.Hour)
		e.deliver()
	}
	if rc.hits != hits {
		t.Fatalf("%d more requests after every event was accepted", rc.hits-hits)
	}
	checkUnique(t, rc.events())

	// The wallet's first event took four attempts, each recorded.
	first := rc.eventOf(w.account.ID, "INTERNAL_ACCOUNT.STATUS_UPDATED")
	var list wire.List[payments.WebhookDelivery]
	r := e.do("GET", "/webhooks/deliveries?eventId="+first.ID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &list)
	if len(list.Data) != 4 {
		t.Fatalf("attempts %s", r.body)
	}
	last, firstTry := list.Data[0], list.Data[3] // newest first
	if last.Attempt != 4 || last.Status != "DELIVERED" || last.ResponseStatus != 204 || last.URL != rc.url() ||
		firstTry.Attempt != 1 || firstTry.Status != "RETRYING" || firstTry.ResponseStatus != 503 || !strings.Contains(firstTry.Error, "503") {
		t.Fatalf("attempts %s", r.body)
	}
	second := rc.eventOf(w.account.ID, "INTERNAL_ACCOUNT.BALANCE_UPDATED")
	list = wire.List[payments.WebhookDelivery]{}
	e.do("GET", "/webhooks/deliveries?eventId="+second.ID, nil, nil).decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].Status != "DELIVERED" {
		t.Fatalf("the second event's attempts %+v", list.Data)
	}
}

// TestWebhookGiveUpAndReplay: an event whose receiver keeps failing is
// given up after the retry window and no longer holds its resource back;
// a replay sends it again.
func TestWebhookGiveUpAndReplay(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc), func(c *Config) { c.WebhookRetryFor = 20 * time.Second })
	rc.attach(e)
	rc.failAll = true
	w := e.newWallet("giveup@example.com")
	for range 20 {
		e.deliver()
		e.clock.Advance(4 * time.Second)
	}
	failed := e.eventOf(w.account.ID, "INTERNAL_ACCOUNT.STATUS_UPDATED")
	var list wire.List[payments.WebhookDelivery]
	e.do("GET", "/webhooks/deliveries?failed=true&eventId="+failed.ID, nil, nil).decode(t, &list)
	if len(list.Data) < 2 || list.Data[0].Status != "FAILED" || list.Data[1].Status != "RETRYING" {
		t.Fatalf("failed deliveries %+v", list)
	}
	rc.mu.Lock()
	rc.failAll = false
	rc.mu.Unlock()
	e.fund(w.account.ID, 100)
	e.clock.Advance(4 * time.Second) // the endpoint's pause ends
	e.deliver()
	if got := rc.of(w.account.ID); !slices.Equal(got, []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED#2"}) {
		t.Fatalf("after the failure: %v", got)
	}
	r := e.do("POST", "/webhooks/deliveries/"+failed.ID+"/replay", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var to wire.List[payments.WebhookEndpoint]
	r.decode(t, &to)
	if len(to.Data) != 1 || !to.Data[0].IsDefault {
		t.Fatalf("replayed to %s", r.body)
	}
	e.deliver()
	if got := rc.of(w.account.ID); !slices.Equal(got, []string{"INTERNAL_ACCOUNT.BALANCE_UPDATED#2", "INTERNAL_ACCOUNT.STATUS_UPDATED#1"}) {
		t.Fatalf("after the replay: %v", got)
	}
	for _, bad := range []string{"Webhook:0199a3c4-0000-7000-8000-000000000001", "nope"} {
		if r := e.do("POST", "/webhooks/deliveries/"+bad+"/replay", nil, nil); r.status != http.StatusNotFound {
			t.Fatalf("replay %s: %d %s", bad, r.status, r.body)
		}
	}
	for _, q := range []string{"failed=maybe", "limit=0", "endpointId=x", "eventId=y"} {
		if r := e.do("GET", "/webhooks/deliveries?"+q, nil, nil); r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
	}
	if r := e.do("GET", "/webhooks/deliveries", nil, map[string]string{"Authorization": ""}); r.status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d", r.status)
	}
}

// TestWebhookRollback: a change that rolls back sends nothing, though it
// recorded its event before it failed (and payments' TestEventRollsBack:
// any transaction, not only this refusal).
func TestWebhookRollback(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc))
	rc.attach(e)
	e.newWallet("taken@example.com")
	// Provisioning records the new wallet's STATUS_UPDATED, then the
	// e-mail conflict rolls the customer back.
	r := e.do("POST", "/customers", map[string]any{"platformCustomerId": "other", "customerType": "INDIVIDUAL", "email": "TAKEN@example.com"}, nil)
	e.mustStatus(r, http.StatusConflict)
	e.deliver()
	var list wire.List[json.RawMessage]
	e.do("GET", "/events", nil, nil).decode(t, &list)
	// (the wallet's STATUS_UPDATED and its customer's CUSTOMER.KYC_APPROVED)
	if len(list.Data) != 2 || len(rc.events()) != 2 {
		t.Fatalf("%d events recorded, %d delivered; want the first wallet's only", len(list.Data), len(rc.events()))
	}
}

// TestWebhookWorkerIsWoken: RunWorkers delivers an event as soon as the
// change that recorded it commits, without waiting for its poll.
func TestWebhookWorkerIsWoken(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc), func(c *Config) { c.WebhookPollInterval = time.Hour })
	rc.attach(e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.RunWorkers(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(50 * time.Millisecond) // the worker's first round has run
	w := e.newWallet("prompt@example.com")
	deadline := time.Now().Add(5 * time.Second)
	for len(rc.of(w.account.ID)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the event was not delivered within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowReceiverDoesNotSlowTheAPI: requests answer while the receiver
// hangs; the delivery times out (client timeout) and is retried.
func TestSlowReceiverDoesNotSlowTheAPI(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	e := newEnv(t, sandbox, func(c *Config) {
		c.WebhookURL = slow.URL
		c.WebhookClient = &http.Client{Timeout: 200 * time.Millisecond}
		c.WebhookPollInterval = 10 * time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.RunWorkers(ctx) }()
	defer func() { cancel(); <-done }()
	start := time.Now()
	for i := range 5 {
		w := e.newWallet(fmt.Sprintf("slow%d@example.com", i))
		e.fund(w.account.ID, 100)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("10 requests took %v with a hanging receiver", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var list wire.List[payments.WebhookDelivery]
		e.do("GET", "/webhooks/deliveries?limit=100", nil, nil).decode(t, &list)
		if len(list.Data) > 0 {
			if a := list.Data[len(list.Data)-1]; a.ResponseStatus != 0 || !strings.Contains(a.Error, "Timeout") && !strings.Contains(a.Error, "deadline") {
				t.Fatalf("attempt against a hanging receiver: %+v", a)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfigEndpoint: GET and PATCH /config.
func TestConfigEndpoint(t *testing.T) {
	e := newEnv(t)
	var c payments.PlatformConfig
	r := e.do("GET", "/config", nil, nil)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &c)
	if !strings.HasPrefix(c.ID, "PlatformConfig:") || c.WebhookEndpoint != "" || c.UmaDomain != "uma.localhost" || c.CreatedAt == "" {
		t.Fatalf("initial config %s", r.body)
	}
	if r := e.do("GET", "/config", nil, map[string]string{"Authorization": ""}); r.status != http.StatusUnauthorized {
		t.Fatalf("without credentials: %d", r.status)
	}
	if r := e.do("PATCH", "/config", map[string]any{"webhookEndpoint": "https://a.example/h"}, map[string]string{"Authorization": ""}); r.status != http.StatusUnauthorized {
		t.Fatalf("PATCH without credentials: %d", r.status)
	}
	refused := []struct {
		body   string
		fields []string
	}{
		{`{"webhookEndpoint":"ftp://a.example/h"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"a.example/h"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"/hooks"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"https://"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"https://user:pw@a.example/h"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"https://a.example/h#x"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"https://a.example/` + strings.Repeat("a", 2048) + `"}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":5}`, []string{"webhookEndpoint"}},
		{`{"webhookEndpoint":"https://a.example/h","umaDomain":"x.example","bogus":1,"id":"PlatformConfig:x"}`, []string{"bogus", "id", "umaDomain"}},
	}
	for _, c := range refused {
		r := e.do("PATCH", "/config", []byte(c.body), map[string]string{"Content-Type": "application/json"})
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", c.body, r.status, r.body)
		}
		if got := fieldsOf(t, r); !slices.Equal(got, c.fields) {
			t.Fatalf("%s: fields %v, want %v (%s)", c.body, got, c.fields, r.body)
		}
	}
	for _, body := range []string{``, `[]`, `{"webhookEndpoint":"x"} {}`} {
		if r := e.do("PATCH", "/config", []byte(body), map[string]string{"Content-Type": "application/json"}); r.status != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", body, r.status, r.body)
		}
	}
	e.clock.Advance(time.Minute)
	r = e.do("PATCH", "/config", map[string]any{"webhookEndpoint": "http://127.0.0.1:9/hooks?x=1"}, nil)
	e.mustStatus(r, http.StatusOK)
	var patched payments.PlatformConfig
	r.decode(t, &patched)
	if patched.WebhookEndpoint != "http://127.0.0.1:9/hooks?x=1" || patched.ID != c.ID || patched.UpdatedAt == c.UpdatedAt {
		t.Fatalf("patched %s", r.body)
	}
	var again payments.PlatformConfig
	e.do("GET", "/config", nil, nil).decode(t, &again)
	if again != patched {
		t.Fatalf("GET after PATCH %+v, want %+v", again, patched)
	}
	r = e.do("PATCH", "/config", map[string]any{"webhookEndpoint": nil}, nil)
	e.mustStatus(r, http.StatusOK)
	again = payments.PlatformConfig{}
	e.do("GET", "/config", nil, nil).decode(t, &again)
	if again.WebhookEndpoint != "" {
		t.Fatalf("after null: %+v", again)
	}
	// Changes with no endpoint are recorded (GET /events), not sent.
	w := e.newWallet("quiet@example.com")
	if n := e.deliver(); n != 0 {
		t.Fatalf("%d deliveries without an endpoint", n)
	}
	e.eventOf(w.account.ID, "INTERNAL_ACCOUNT.STATUS_UPDATED")
	var eps wire.List[payments.WebhookEndpoint]
	e.do("GET", "/webhooks/endpoints", nil, nil).decode(t, &eps)
	if len(eps.Data) != 0 {
		t.Fatalf("endpoints after null: %+v", eps.Data)
	}
}

// TestWebhookURLAtStart: Config.WebhookURL sets the endpoint, also over
// one stored before; a bad one stops the start.
func TestWebhookURLAtStart(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.WebhookURL = "http://127.0.0.1:8081/internal/webhooks" })
	var c payments.PlatformConfig
	e.do("GET", "/config", nil, nil).decode(t, &c)
	if c.WebhookEndpoint != "http://127.0.0.1:8081/internal/webhooks" {
		t.Fatalf("config %+v", c)
	}
	cfg := e.cfg
	cfg.WebhookURL = "https://other.example/hooks"
	second, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c2 payments.PlatformConfig
	(&env{t: t, svc: second, h: second.Handler(), clock: e.clock}).do("GET", "/config", nil, nil).decode(t, &c2)
	if c2.WebhookEndpoint != "https://other.example/hooks" || c2.ID != c.ID {
		t.Fatalf("second start: %+v (first %+v)", c2, c)
	}
	cfg.WebhookURL = "not a url"
	if _, err := New(context.Background(), cfg); err == nil {
		t.Fatal("a bad WebhookURL was accepted")
	}
}

// TestWebhookJWKS: the keys are published without credentials, shared by
// every instance of a database, and stored sealed.
func TestWebhookJWKS(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/webhooks/jwks.json", nil, map[string]string{"Authorization": ""})
	e.mustStatus(r, http.StatusOK)
	keys, err := webhooksig.ParseJWKS(r.body)
	if err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	if len(keys.Keys) != 2 || keys.Keys[0].Kid != e.svc.WebhookKeys().Keys[0].Kid || keys.Keys[0].Alg != "ES256" || keys.Keys[0].Use != "sig" ||
		keys.Keys[1].Kty != "OKP" || keys.Keys[1].Crv != "Ed25519" {
		t.Fatalf("jwks %s", r.body)
	}
	if r.header.Get("Content-Type") != "application/json" || !strings.Contains(r.header.Get("Cache-Control"), "max-age") {
		t.Fatalf("headers %v", r.header)
	}
	second, err := New(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if second.WebhookKeys().Keys[0] != keys.Keys[0] {
		t.Fatal("a second instance on the same database has another key")
	}
	var raw []byte
	err = e.store.Tx(context.Background(), func(tx store.Tx) error {
		raw, err = tx.GetSetting(context.Background(), webhookKeysSetting)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"d"`) || strings.Contains(string(raw), keys.Keys[0].Kid) || json.Valid(raw) {
		t.Fatal("the webhook key is stored in the clear")
	}
	other := e.cfg
	other.AtRestKey = []byte("another-key-another-key-another!!")
	if _, err := New(context.Background(), other); err == nil {
		t.Fatal("the keys opened with another at-rest key")
	}
}

// TestTestWebhook: POST /sandbox/webhooks/test.
func TestTestWebhook(t *testing.T) {
	e := newEnv(t, sandbox)
	r := e.do("POST", "/sandbox/webhooks/test", nil, nil)
	if r.status != http.StatusBadRequest || r.errorBody(t).Code != "WEBHOOK_ENDPOINT_NOT_SET" {
		t.Fatalf("without endpoint: %d %s", r.status, r.body)
	}
	rc := newReceiver(t)
	rc.attach(e)
	e.mustStatus(e.do("PATCH", "/config", map[string]any{"webhookEndpoint": rc.url()}, nil), http.StatusOK)
	r = e.do("POST", "/sandbox/webhooks/test", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var out map[string]any
	r.decode(t, &out)
	if out["url"] != rc.url() || out["response_status"] != float64(204) || len(out) != 2 {
		t.Fatalf("answer %s", r.body)
	}
	evs := rc.events()
	if len(evs) != 1 || evs[0].Type != "TEST" || !strings.HasPrefix(evs[0].ID, "Webhook:") || string(evs[0].Data) != "{}" || evs[0].Sequence != 0 {
		t.Fatalf("test event %+v", evs)
	}
	rc.failAll = true
	r = e.do("POST", "/sandbox/webhooks/test", []byte(`{}`), nil)
	if r.status != http.StatusBadRequest || r.errorBody(t).Code != "WEBHOOK_DELIVERY_ERROR" || !strings.Contains(string(r.body), `"response_status":503`) {
		t.Fatalf("failing receiver: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/sandbox/webhooks/test", []byte(`{"x":1}`), nil); r.status != http.StatusBadRequest {
		t.Fatalf("with a field: %d %s", r.status, r.body)
	}
	prod := newEnv(t)
	if r := prod.do("POST", "/sandbox/webhooks/test", nil, nil); r.status != http.StatusForbidden {
		t.Fatalf("production: %d %s", r.status, r.body)
	}
}

// TestWebhooksTwoInstancesOnPostgres: two instances on one PostgreSQL
// database record events concurrently and both run delivery; the receiver
// gets every event exactly once (one request each) and each resource's in
// order.
func TestWebhooksTwoInstancesOnPostgres(t *testing.T) {
	rc := newReceiver(t)
	a := newEnv(t, sandbox, onPostgres(t), withWebhooks(rc))
	b := newEnv(t, sandbox, func(c *Config) { c.Store = a.store }, withWebhooks(rc))
	if a.svc.WebhookKeys().Keys[0].Kid != b.svc.WebhookKeys().Keys[0].Kid {
		t.Fatal("the instances sign with different keys")
	}
	rc.attach(a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var workers sync.WaitGroup
	for _, e := range []*env{a, b} {
		workers.Go(func() {
			for ctx.Err() == nil {
				if _, err := e.svc.DeliverWebhooks(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	const wallets, fundings = 4, 5
	var makers sync.WaitGroup
	for i := range wallets {
		e := []*env{a, b}[i%2]
		other := []*env{b, a}[i%2]
		makers.Go(func() {
			w := e.newWallet(fmt.Sprintf("pg-hooks%d@example.com", i))
			for j := range fundings {
				[]*env{e, other}[j%2].fund(w.account.ID, 100)
			}
		})
	}
	makers.Wait()
	const want = wallets * (2 + 2*fundings) // + CUSTOMER.KYC_APPROVED
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.events()) < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a duplicate would arrive now
	cancel()
	workers.Wait()
	evs := rc.events()
	if len(evs) != want || rc.hits != want {
		t.Fatalf("%d events accepted in %d requests, want %d", len(evs), rc.hits, want)
	}
	checkUnique(t, evs)
}

// TestWebhookKeyRotation: after a rotation every delivery is signed by
// both generations, so a receiver that knows only the old keys accepts it,
// as does one that knows only the new; after the overlap only the new
// generation signs, the old one stays published, and a fourth rotation
// within an overlap is refused.
func TestWebhookKeyRotation(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, sandbox, withWebhooks(rc), func(c *Config) { c.WebhookKeyOverlap = time.Hour })
	rc.attach(e)
	var before wire.List[payments.WebhookKey]
	e.do("GET", "/webhooks/keys", nil, nil).decode(t, &before)
	if len(before.Data) != 1 || before.Data[0].Status != "SIGNING" || !before.Data[0].Primary || !strings.HasPrefix(before.Data[0].PublicKey, "whpk_") {
		t.Fatalf("keys %+v", before.Data)
	}
	r := e.do("POST", "/webhooks/keys/rotate", nil, nil)
	e.mustStatus(r, http.StatusOK)
	var after wire.List[payments.WebhookKey]
	r.decode(t, &after)
	if len(after.Data) != 2 || after.Data[0].Kid != before.Data[0].Kid || after.Data[0].Status != "RETIRING" || !after.Data[0].Primary ||
		after.Data[0].RetiresAt != e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) || after.Data[1].Status != "SIGNING" || after.Data[1].Primary {
		t.Fatalf("after the rotation %s", r.body)
	}
	// The receiver still holds the old key set only.
	w := e.newWallet("rotate@example.com")
	e.deliver()
	if got := rc.of(w.account.ID); len(got) != 1 {
		t.Fatalf("with the old keys during the overlap: %v", got)
	}
	// One that knows only the new generation accepts it too.
	onlyNew := newReceiver(t)
	var jwks webhooksig.JWKS
	r = e.do("GET", "/webhooks/jwks.json", nil, map[string]string{"Authorization": ""})
	jwks, err := webhooksig.ParseJWKS(r.body)
	if err != nil || len(jwks.Keys) != 4 {
		t.Fatalf("JWKS during the overlap %s: %v", r.body, err)
	}
	onlyNew.keys, onlyNew.now = webhooksig.JWKS{Keys: jwks.Keys[2:]}, e.clock.Now
	onlyNew.skipCompat = true // the old key, the primary, signs it until it retires
	e.createEndpoint(map[string]any{"url": onlyNew.url()})
	e.fund(w.account.ID, 100)
	e.deliver()
	if got := onlyNew.of(w.account.ID); len(got) != 1 {
		t.Fatalf("with the new keys only: %v", got)
	}
	// After the overlap the old generation signs no more.
	e.clock.Advance(time.Hour)
	e.fund(w.account.ID, 100)
	e.deliver()
	rc.mu.Lock()
	refused := len(rc.badSigs)
	rc.badSigs = nil
	rc.mu.Unlock()
	if refused == 0 {
		t.Fatal("a receiver with the retired keys only still accepted deliveries after the overlap")
	}
	rc.attach(e) // fetches the JWKS again
	e.clock.Advance(time.Hour)
	e.deliver()
	if got := onlyNew.of(w.account.ID); len(got) != 2 {
		t.Fatalf("the new keys' receiver after the overlap: %v", got)
	}
	e.do("GET", "/webhooks/keys", nil, nil).decode(t, &after)
	if after.Data[0].Status != "RETIRED" || after.Data[0].Primary || !after.Data[1].Primary {
		t.Fatalf("after the overlap %+v", after.Data)
	}
	// A second instance signs with what the first rotated to.
	second, err := New(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.WebhookKeys(); len(got.Keys) != 4 {
		t.Fatalf("a second instance publishes %d keys", len(got.Keys))
	}
	for range 3 {
		e.mustStatus(e.do("POST", "/webhooks/keys/rotate", nil, nil), http.StatusOK)
	}
	if r := e.do("POST", "/webhooks/keys/rotate", nil, nil); r.status != http.StatusConflict {
		t.Fatalf("a fifth generation signing at once: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/webhooks/keys/rotate", []byte(`{"x":1}`), nil); r.status != http.StatusBadRequest {
		t.Fatalf("with a field: %d %s", r.status, r.body)
	}
}
