package bff

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/shared/webhooksig"
)

// webhookSigner signs webhooks as the service does, and serves its JWKS.
type webhookSigner struct {
	key     *ecdsa.PrivateKey
	kid     string
	jwks    *httptest.Server
	fetches atomic.Int32
}

func newWebhookSigner(t testing.TB) *webhookSigner {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	w := &webhookSigner{key: key, kid: "test-key-1"}
	w.jwks = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.fetches.Add(1)
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"keys": []any{jwkOf(&w.key.PublicKey, w.kid)}})
	}))
	t.Cleanup(w.jwks.Close)
	return w
}

func jwkOf(pub *ecdsa.PublicKey, kid string) map[string]string {
	b, _ := pub.Bytes()
	return map[string]string{"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
		"x": base64.RawURLEncoding.EncodeToString(b[1:33]), "y": base64.RawURLEncoding.EncodeToString(b[33:])}
}

// header is the Service-Webhook-Signature of body as webhook id at time at.
func (w *webhookSigner) header(t testing.TB, key *ecdsa.PrivateKey, kid, id string, at time.Time, body []byte) string {
	t.Helper()
	ts := at.Unix()
	digest := sha256.Sum256([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + string(body)))
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("t=%d,kid=%s,v1=%s", ts, kid, base64.StdEncoding.EncodeToString(sig))
}

// envelope is a webhook of the service: a transaction of customer.
func envelope(id, typ, customer, status string) []byte {
	b, _ := json.MarshalIndent(map[string]any{ // indented: the stream must put it on one line
		"id": id, "type": typ, "timestamp": "2025-10-13T12:00:00Z", "sequence": 1,
		"data": map[string]any{"id": "Transaction:0199a3c4-0000-7000-8000-0000000000aa", "customerId": customer, "status": status,
			"note": "line one\nline two"},
	}, "", "  ")
	return b
}

// eventsHarness is a harness whose BFF trusts w's keys and beats every
// 100 ms.
func eventsHarness(t *testing.T, w *webhookSigner, opts ...func(*Config)) *harness {
	t.Helper()
	return newHarness(t, append([]func(*Config){func(c *Config) {
		c.WebhookJWKSURL = w.jwks.URL
		c.heartbeat = 100 * time.Millisecond
		c.LoginPerEmail = Limit{Max: 1000, Window: time.Minute}
	}}, opts...)...)
}

func (h *harness) postWebhook(signature string, body []byte) *response {
	h.t.Helper()
	saved := h.cookie
	h.cookie = "" // the service has no cookie
	defer func() { h.cookie = saved }()
	return h.do("POST", WebhookPath, string(body), map[string]string{webhooksig.Header: signature})
}

// deliver posts a webhook signed now with w's key.
func (h *harness) deliver(w *webhookSigner, id, typ, customer string) *response {
	h.t.Helper()
	body := envelope(id, typ, customer, "COMPLETED")
	return h.postWebhook(w.header(h.t, w.key, w.kid, id, h.clock.Now(), body), body)
}

// serve runs the BFF on a loopback port (streams need a real connection)
// and returns its base URL.
func (h *harness) serve() string {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	go h.srv.Listener(ln) //nolint:errcheck // ends with Shutdown
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

// signedInAs logs a new browser in and returns its cookie and customer.
func (h *harness) signedInAs(email string) (cookie, customer string) {
	h.t.Helper()
	h.cookie = ""
	h.login(email)
	cookie = h.cookie
	data, err := h.srv.store.Get(context.Background(), storeKey(cookie))
	if err != nil {
		h.t.Fatal(err)
	}
	h.cookie = ""
	return cookie, data.CustomerID
}

type sseEvent struct{ id, event, data string }

// sseStream is a browser's EventSource, read by a goroutine.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
	ended  chan struct{} // closed when the server ends the stream
}

func openStream(t *testing.T, base, cookie, lastID string) *sseStream {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Cookie", CookieName+"="+cookie)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("GET /api/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 100), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || ev.data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[6:]
			}
		}
	}()
	return s
}

// next returns the next event, or fails after within.
func (s *sseStream) next(t *testing.T, within time.Duration) sseEvent {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-time.After(within):
		t.Fatalf("no event within %v", within)
		return sseEvent{}
	}
}

// none checks that no event comes within d.
func (s *sseStream) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev := <-s.events:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(d):
	}
}

func webhookID(n int) string { return fmt.Sprintf("Webhook:0199a3c4-0000-7000-8000-%012d", n) }

// TestWebhookReachesOnlyItsCustomer: a signed webhook is answered 200 and
// reaches the streams of its customer (every tab), as id, event and one
// line of JSON; the other customer's stream hears nothing.
func TestWebhookReachesOnlyItsCustomer(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w)
	base := h.serve()
	ada, adaCustomer := h.signedInAs("ada@example.com")
	bob, bobCustomer := h.signedInAs("bob@example.com")
	if adaCustomer == bobCustomer || adaCustomer == "" {
		t.Fatalf("customers %q and %q", adaCustomer, bobCustomer)
	}
	adaTab1 := openStream(t, base, ada, "")
	adaTab2 := openStream(t, base, ada, "")
	bobTab := openStream(t, base, bob, "")
	waitListeners(t, h, adaCustomer, 2)
	waitListeners(t, h, bobCustomer, 1)

	r := h.deliver(w, webhookID(1), "OUTGOING_PAYMENT.COMPLETED", adaCustomer)
	if r.status != 200 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	for _, tab := range []*sseStream{adaTab1, adaTab2} {
		ev := tab.next(t, 2*time.Second)
		if ev.id != webhookID(1) || ev.event != "OUTGOING_PAYMENT.COMPLETED" {
			t.Errorf("event %+v", ev)
		}
		var env struct {
			ID   string
			Data struct{ CustomerID, Status, Note string }
		}
		if err := json.Unmarshal([]byte(ev.data), &env); err != nil || env.ID != webhookID(1) || env.Data.CustomerID != adaCustomer ||
			env.Data.Status != "COMPLETED" || env.Data.Note != "line one\nline two" {
			t.Errorf("data %q: %+v %v", ev.data, env, err)
		}
	}
	bobTab.none(t, 300*time.Millisecond)

	// Bob's own event reaches Bob only.
	if r := h.deliver(w, webhookID(2), "INTERNAL_ACCOUNT.BALANCE_UPDATED", bobCustomer); r.status != 200 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	if ev := bobTab.next(t, 2*time.Second); ev.id != webhookID(2) || ev.event != "INTERNAL_ACCOUNT.BALANCE_UPDATED" {
		t.Errorf("bob's event %+v", ev)
	}
	adaTab1.none(t, 300*time.Millisecond)

	// A webhook of no customer is taken and passed to nobody.
	if r := h.deliver(w, webhookID(3), "TEST", ""); r.status != 200 {
		t.Fatalf("TEST webhook: %d %s", r.status, r.body)
	}
	adaTab2.none(t, 200*time.Millisecond)
	bobTab.none(t, 100*time.Millisecond)
}

func waitListeners(t *testing.T, h *harness, customer string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for h.srv.hub.listeners(customer) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams of %s, want %d", h.srv.hub.listeners(customer), customer, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWebhookRefused: a missing, malformed or foreign signature, one over
// other bytes or another id, a time more than five minutes off, and a key
// the service does not publish are each refused with 401 and reach no
// browser; unknown key ids make the BFF fetch the keys at most once a
// minute.
func TestWebhookRefused(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w)
	base := h.serve()
	cookie, customer := h.signedInAs("ada@example.com")
	tab := openStream(t, base, cookie, "")
	waitListeners(t, h, customer, 1)

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	id := webhookID(10)
	body := envelope(id, "OUTGOING_PAYMENT.COMPLETED", customer, "COMPLETED")
	now := h.clock.Now()
	good := w.header(t, w.key, w.kid, id, now, body)
	tampered := []byte(strings.Replace(string(body), "COMPLETED\"", "FAILED\"", 1))
	sigOf := func(h string) string { _, v, _ := strings.Cut(h, ",v1="); return v }
	cases := []struct {
		name, header string
		body         []byte
		want         int
	}{
		{"no signature", "", body, 401},
		{"garbage", "nonsense", body, 401},
		{"no v1", fmt.Sprintf("t=%d,kid=%s", now.Unix(), w.kid), body, 401},
		{"another key, same kid", w.header(t, other, w.kid, id, now, body), body, 401},
		{"body changed after signing", good, tampered, 401},
		{"signed for another id", w.header(t, w.key, w.kid, webhookID(11), now, body), body, 401},
		{"time changed after signing", fmt.Sprintf("t=%d,kid=%s,v1=%s", now.Unix()+1, w.kid, sigOf(good)), body, 401},
		{"six minutes old", w.header(t, w.key, w.kid, id, now.Add(-6*time.Minute), body), body, 401},
		{"six minutes ahead", w.header(t, w.key, w.kid, id, now.Add(6*time.Minute), body), body, 401},
		{"unknown kid", w.header(t, other, "unknown-1", id, now, body), body, 401},
		{"another unknown kid", w.header(t, other, "unknown-2", id, now, body), body, 401},
		{"signed, not an envelope", w.header(t, w.key, w.kid, "", now, []byte(`[1,2]`)), []byte(`[1,2]`), 400},
	}
	for _, tc := range cases {
		r := h.postWebhook(tc.header, tc.body)
		if r.status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.want)
		}
	}
	if n := w.fetches.Load(); n != 1 {
		t.Errorf("the keys were fetched %d times within a minute, want 1", n)
	}
	tab.none(t, 300*time.Millisecond)

	// Five minutes is still good; and the one good delivery passes.
	if r := h.postWebhook(w.header(t, w.key, w.kid, id, now.Add(-5*time.Minute+time.Second), body), body); r.status != 200 {
		t.Fatalf("a webhook signed 4m59s ago: %d %s", r.status, r.body)
	}
	if ev := tab.next(t, 2*time.Second); ev.id != id {
		t.Errorf("event %+v", ev)
	}

	// A key the service starts publishing is fetched once a minute has passed.
	w.kid = "test-key-2"
	h.clock.Advance(61 * time.Second)
	id2 := webhookID(12)
	body2 := envelope(id2, "OUTGOING_PAYMENT.FAILED", customer, "FAILED")
	if r := h.postWebhook(w.header(t, w.key, w.kid, id2, h.clock.Now(), body2), body2); r.status != 200 {
		t.Fatalf("a new key after a minute: %d %s", r.status, r.body)
	}
	if n := w.fetches.Load(); n != 2 {
		t.Errorf("the keys were fetched %d times, want 2", n)
	}
	if ev := tab.next(t, 2*time.Second); ev.id != id2 {
		t.Errorf("event %+v", ev)
	}
}

// TestWebhookReplayedNotPassedOnAgain: the same webhook delivered again,
// freshly signed, is answered 200 and does not reach the browser twice.
func TestWebhookReplayedNotPassedOnAgain(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w)
	base := h.serve()
	cookie, customer := h.signedInAs("ada@example.com")
	tab := openStream(t, base, cookie, "")
	waitListeners(t, h, customer, 1)
	for i := range 3 {
		if r := h.deliver(w, webhookID(20), "OUTGOING_PAYMENT.COMPLETED", customer); r.status != 200 {
			t.Fatalf("delivery %d: %d %s", i, r.status, r.body)
		}
		h.clock.Advance(time.Second)
	}
	if ev := tab.next(t, 2*time.Second); ev.id != webhookID(20) {
		t.Errorf("event %+v", ev)
	}
	tab.none(t, 400*time.Millisecond)
}

// TestEventsResume: a browser that reconnects with Last-Event-ID gets what
// came after that event, in order; one whose id this instance does not
// hold gets "resync".
func TestEventsResume(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w)
	base := h.serve()
	cookie, customer := h.signedInAs("ada@example.com")
	other, otherCustomer := h.signedInAs("bob@example.com")
	for i := 30; i < 34; i++ {
		if r := h.deliver(w, webhookID(i), "OUTGOING_PAYMENT.PROCESSING", customer); r.status != 200 {
			t.Fatalf("webhook %d: %d %s", i, r.status, r.body)
		}
	}
	if r := h.deliver(w, webhookID(40), "OUTGOING_PAYMENT.PROCESSING", otherCustomer); r.status != 200 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	tab := openStream(t, base, cookie, webhookID(31))
	for _, want := range []int{32, 33} {
		if ev := tab.next(t, 2*time.Second); ev.id != webhookID(want) {
			t.Errorf("resumed event %+v, want %s", ev, webhookID(want))
		}
	}
	tab.none(t, 200*time.Millisecond)

	// Another customer's id resumes nothing of theirs.
	theirs := openStream(t, base, cookie, webhookID(40))
	if ev := theirs.next(t, 2*time.Second); ev.event != "resync" || ev.id != "" {
		t.Errorf("after another customer's id: %+v, want resync", ev)
	}
	theirs.none(t, 200*time.Millisecond)
	_ = other

	unknown := openStream(t, base, cookie, webhookID(99))
	if ev := unknown.next(t, 2*time.Second); ev.event != "resync" {
		t.Errorf("after an unknown id: %+v, want resync", ev)
	}
}

// TestEventsSignedOut: when the cookie's session ends while its stream is
// open (revoked from another device, or logged out), the stream says
// "signed-out" and closes, and the cookie opens no new one.
func TestEventsSignedOut(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w)
	base := h.serve()

	cookie, _ := h.signedInAs("ada@example.com")
	tab := openStream(t, base, cookie, "")
	h.svc.revokeAll()
	if ev := tab.next(t, 3*time.Second); ev.event != "signed-out" {
		t.Fatalf("after the revoke: %+v", ev)
	}
	select {
	case <-tab.ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the stream stayed open after signed-out")
	}
	h.cookie = cookie
	if r := h.do("GET", "/api/events", "", map[string]string{"Accept": "text/event-stream"}); r.status != 401 {
		t.Errorf("GET /api/events with the revoked cookie: %d %s", r.status, r.body)
	}

	cookie2, _ := h.signedInAs("bob@example.com")
	tab2 := openStream(t, base, cookie2, "")
	h.cookie = cookie2
	if r := h.do("POST", "/api/logout", "", nil); r.status != 204 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	if ev := tab2.next(t, 3*time.Second); ev.event != "signed-out" {
		t.Fatalf("after the logout: %+v", ev)
	}
}

// TestEventsGuard: the page's EventSource (no X-CSRF, Accept:
// text/event-stream, same-origin) is let in; without a signed-in cookie it
// is 401; cross-site it is 403.
func TestEventsGuard(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w, func(c *Config) { c.streamMaxAge = 50 * time.Millisecond })
	es := map[string]string{"X-CSRF": "", "Accept": "text/event-stream"}
	if r := h.do("GET", "/api/events", "", es); r.status != 401 {
		t.Errorf("anonymous EventSource: %d %s", r.status, r.body)
	}
	h.login("ada@example.com")
	if r := h.do("GET", "/api/events", "", es); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") ||
		!strings.HasPrefix(string(r.body), "retry: ") || r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("signed-in EventSource: %d %v %q", r.status, r.header, r.body)
	}
	for name, hdr := range map[string]map[string]string{
		"cross-site":            {"X-CSRF": "", "Accept": "text/event-stream", "Sec-Fetch-Site": "cross-site"},
		"same-site":             {"X-CSRF": "", "Accept": "text/event-stream", "Sec-Fetch-Site": "same-site"},
		"no fetch metadata":     {"X-CSRF": "", "Accept": "text/event-stream", "Sec-Fetch-Site": ""},
		"not an EventSource":    {"X-CSRF": ""},
		"X-CSRF but cross-site": {"Sec-Fetch-Site": "cross-site"},
	} {
		if r := h.do("GET", "/api/events", "", hdr); r.status != 403 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// The exception is this route only.
	if r := h.do("GET", "/api/me", "", es); r.status != 403 {
		t.Errorf("GET /api/me as an EventSource: %d %s", r.status, r.body)
	}
}

// TestShutdownEndsStreams: open streams do not hold Shutdown up; they end
// at once, and the webhook keys' subscription with them.
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	w := newWebhookSigner(t)
	h := eventsHarness(t, w, func(c *Config) { c.heartbeat = time.Hour })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go h.srv.Listener(ln) //nolint:errcheck
	base := "http://" + ln.Addr().String()
	cookie, customer := h.signedInAs("ada@example.com")
	tabs := []*sseStream{openStream(t, base, cookie, ""), openStream(t, base, cookie, "")}
	waitListeners(t, h, customer, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v after %v", err, time.Since(start))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v with two streams open", d)
	}
	for i, tab := range tabs {
		select {
		case <-tab.ended:
		case <-time.After(2 * time.Second):
			t.Errorf("stream %d still open after Shutdown", i)
		}
	}
}

// TestWebhookFromTheServiceSigner: a webhook signed by the service's own
// signer (paywallet/shared/webhooksig), with its JWKS, passes.
func TestWebhookFromTheServiceSigner(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := webhooksig.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := webhooksig.JWKS{Keys: []webhooksig.JWK{signer.JWK()}}.Marshal()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(jwks.Close)
	h := newHarness(t, func(c *Config) { c.WebhookJWKSURL = jwks.URL })
	base := h.serve()
	cookie, customer := h.signedInAs("ada@example.com")
	tab := openStream(t, base, cookie, "")
	waitListeners(t, h, customer, 1)
	id := webhookID(50)
	body := envelope(id, webhooksig.OutgoingPaymentRefundCompleted, customer, "REFUNDED")
	hdr, err := signer.Sign(id, body, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r := h.postWebhook(hdr.Signature, body); r.status != 200 {
		t.Fatalf("webhook: %d %s", r.status, r.body)
	}
	if ev := tab.next(t, 2*time.Second); ev.id != id || ev.event != webhooksig.OutgoingPaymentRefundCompleted {
		t.Errorf("event %+v", ev)
	}
}

// TestHubRingAndSlowStreams: each customer keeps its last ringSize events
// (an id pushed out resumes with resync); a repeated id is dropped; a
// stream that falls a ring behind is let go, not waited for.
func TestHubRingAndSlowStreams(t *testing.T) {
	t.Parallel()
	h := newHub(time.Now)
	const ada = "Customer:0199a3c4-0000-7000-8000-0000000000a1"
	slow, _, _ := h.subscribe(ada, "")
	for i := range ringSize + 5 {
		h.publish(Event{ID: webhookID(i), Type: "TEST", CustomerID: ada})
	}
	h.publish(Event{ID: webhookID(ringSize + 4), Type: "TEST", CustomerID: ada}) // a repeat
	select {
	case <-slow.gone:
	default:
		t.Error("a stream a ring behind was kept")
	}
	if n := h.listeners(ada); n != 0 {
		t.Errorf("%d listeners after the slow one was let go", n)
	}
	s, backlog, found := h.subscribe(ada, webhookID(ringSize))
	if !found || len(backlog) != 4 || backlog[0].ID != webhookID(ringSize+1) || backlog[3].ID != webhookID(ringSize+4) {
		t.Errorf("resume after %s: found %v, %d events", webhookID(ringSize), found, len(backlog))
	}
	h.unsubscribe(ada, s)
	if _, backlog, found := h.subscribe(ada, webhookID(4)); found || backlog != nil {
		t.Errorf("resume after an id pushed out of the ring: found %v, %d events", found, len(backlog))
	}
	h.publish(Event{ID: webhookID(1000), Type: "TEST"}) // no customer: kept nowhere
	if len(h.rooms) != 1 {
		t.Errorf("%d rooms", len(h.rooms))
	}
}
