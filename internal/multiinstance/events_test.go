package multiinstance

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/internal/bffclient"
	"paywallet/shared/webhooksig"
)

// webhookKeys makes the key d signs webhooks with and serves its JWKS,
// returning the JWKS URL the BFFs fetch. (The services of this deployment
// deliver no webhooks: the test posts them itself, as the service would.)
func webhookKeys(t *testing.T, d *deployment) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if d.hooks, err = webhooksig.NewSigner(key); err != nil {
		t.Fatal(err)
	}
	set, err := webhooksig.JWKS{Keys: []webhooksig.JWK{d.hooks.JWK()}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// deliver posts a webhook about customer's transaction to one BFF, signed
// now, and returns the status.
func (d *deployment) deliver(t *testing.T, instance int, id, typ, customer string) int {
	t.Helper()
	body := fmt.Appendf(nil, `{"id":%q,"type":%q,"timestamp":%q,"sequence":1,"data":{"id":"Transaction:0199a3c4-0000-7000-8000-0000000000aa","customerId":%q,"status":"COMPLETED"}}`,
		id, typ, time.Now().UTC().Format(time.RFC3339), customer)
	h, err := d.hooks.Sign(id, body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", d.bffs[instance]+bff.WebhookPath, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooksig.Header, h.Signature)
	req.Header.Set(webhooksig.CompatHeader, h.Compat)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stream is one browser's GET /api/events; ids receives the ids of the
// events it carries (heartbeats and other frames without an id are
// skipped).
type stream struct{ ids chan string }

func openEvents(t *testing.T, base, cookie string, lastEventID ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Cookie", cookie) // "name=value", as bffclient keeps it
	for _, id := range lastEventID {
		req.Header.Set("Last-Event-ID", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("GET %s/api/events: %d", base, resp.StatusCode)
	}
	s := &stream{ids: make(chan string, 16)}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				s.ids <- id
			}
		}
	}()
	return s
}

func (s *stream) want(t *testing.T, name, id string) {
	t.Helper()
	select {
	case got := <-s.ids:
		if got != id {
			t.Errorf("%s: event %s, want %s", name, got, id)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("%s: no event within 5 s, want %s", name, id)
	}
}

func (s *stream) none(t *testing.T, name string, d time.Duration) {
	t.Helper()
	select {
	case got := <-s.ids:
		t.Errorf("%s: unexpected event %s", name, got)
	case <-time.After(d):
	}
}

// TestWebhookReachesEveryInstance: a webhook delivered to BFF instance 0
// reaches its customer's browsers on both instances (through PostgreSQL
// LISTEN/NOTIFY), and no other customer's; delivered again, freshly
// signed, to instance 1, it is answered 200 and reaches nobody twice. A
// browser that reconnects to the other instance with Last-Event-ID gets
// what it missed there.
func TestWebhookReachesEveryInstance(t *testing.T) {
	d := start(t)
	ctx := t.Context()
	signIn := func(instance int, email string) (cookie, customer string) {
		c := &bffclient.Client{Base: d.bffs[instance]}
		if _, _, err := c.LoginEmailOTP(ctx, email, d.code); err != nil {
			t.Fatal(err)
		}
		r, err := c.Do(ctx, "GET", "/api/me", nil, nil)
		if err != nil || r.Status != 200 {
			t.Fatalf("me: %v %d", err, r.Status)
		}
		var me struct{ CustomerID string }
		if err := r.Decode(&me); err != nil || me.CustomerID == "" {
			t.Fatalf("me: %v %s", err, r.Body)
		}
		return c.Cookie(), me.CustomerID
	}
	ada, adaCustomer := signIn(1, "ada@example.com")
	bob, _ := signIn(0, "bob@example.com")
	adaOn1 := openEvents(t, d.bffs[1], ada)
	adaOn0 := openEvents(t, d.bffs[0], ada) // another tab, on the other instance
	bobOn0 := openEvents(t, d.bffs[0], bob)

	id := "Webhook:0199a3c4-0000-7000-8000-000000000001"
	if status := d.deliver(t, 0, id, webhooksig.OutgoingPaymentCompleted, adaCustomer); status != 200 {
		t.Fatalf("webhook to instance 0: %d", status)
	}
	adaOn1.want(t, "ada on instance 1", id)
	adaOn0.want(t, "ada on instance 0", id)
	bobOn0.none(t, "bob", 300*time.Millisecond)

	if status := d.deliver(t, 1, id, webhooksig.OutgoingPaymentCompleted, adaCustomer); status != 200 {
		t.Fatalf("the same webhook to instance 1: %d", status)
	}
	id2 := "Webhook:0199a3c4-0000-7000-8000-000000000002"
	if status := d.deliver(t, 1, id2, webhooksig.OutgoingPaymentRefundCompleted, adaCustomer); status != 200 {
		t.Fatalf("webhook to instance 1: %d", status)
	}
	// The next event either browser hears is the new one, not the repeat.
	adaOn1.want(t, "ada on instance 1", id2)
	adaOn0.want(t, "ada on instance 0", id2)
	bobOn0.none(t, "bob", 200*time.Millisecond)

	// Ada's tab on instance 1 saw only the first event when it lost its
	// connection; it reconnects to instance 0, which received the second
	// through instance 1.
	again := openEvents(t, d.bffs[0], ada, id)
	again.want(t, "ada back on instance 0", id2)
	again.none(t, "ada back on instance 0", 200*time.Millisecond)
}
