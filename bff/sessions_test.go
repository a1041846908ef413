package bff

import (
	"testing"
	"time"

	"paywallet/shared/wire"
)

// addSession puts a session of accountID into the fake service (another
// device of the same person, or someone else's).
func (h *harness) addSession(accountID string) string {
	h.t.Helper()
	id := newID("Session")
	h.svc.mu.Lock()
	h.svc.sessions[id] = wire.Session{ID: id, AccountID: accountID, Type: wire.TypeEmailOTP,
		ExpiresAt: h.clock.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)}
	h.svc.mu.Unlock()
	return id
}

func (h *harness) upstreamCalls(method, path string) int {
	n := 0
	for _, r := range h.svc.reqs() {
		if r.method == method && r.path == wire.BasePath+path {
			n++
		}
	}
	return n
}

var signedHeaders = map[string]string{wire.HeaderWalletSignature: testStamp, wire.HeaderRequestID: testRequestID}

func TestRevokeSessionRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	own := h.login("revoke@example.com").json(t)
	mine, account := own["id"].(string), own["accountId"].(string)
	otherDevice := h.addSession(account)
	someoneElses := h.addSession("InternalAccount:0199a000-0000-7000-8000-0000000000ee")

	// Another person's session, a malformed id, a missing one: 404, nothing forwarded.
	for _, id := range []string{someoneElses, "Session:nope", "Session:0199a000-0000-7000-8000-0000000000ff"} {
		if r := h.do("DELETE", "/api/auth/sessions/"+id, "", signedHeaders); r.status != 404 {
			t.Errorf("DELETE %s: %d %s", id, r.status, r.body)
		}
		if n := h.upstreamCalls("DELETE", "/auth/sessions/"+id); n != 0 {
			t.Errorf("DELETE %s reached the service", id)
		}
	}

	// Another device of mine: both legs pass through; this browser stays signed in.
	r := h.do("DELETE", "/api/auth/sessions/"+otherDevice, "", nil)
	if r.status != 202 || r.json(t)["requestId"] != testRequestID {
		t.Fatalf("leg 1: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/api/auth/sessions/"+otherDevice, "", map[string]string{wire.HeaderWalletSignature: "bad", wire.HeaderRequestID: testRequestID}); r.status != 401 || r.code(t) != "WALLET_SIGNATURE_INVALID" {
		t.Fatalf("a bad signature: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/api/auth/sessions/"+otherDevice, "", signedHeaders); r.status != 204 {
		t.Fatalf("leg 2: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/me", "", nil); !r.somebody() {
		t.Fatalf("revoking another device signed this browser out: %d %s", r.status, r.body)
	}

	// My own session: logging out; the cookie ends with it.
	if r := h.do("DELETE", "/api/auth/sessions/"+mine, "", signedHeaders); r.status != 204 {
		t.Fatalf("own session: %d %s", r.status, r.body)
	}
	if h.cookie != "" {
		t.Error("the cookie outlived its wallet session")
	}
	if r := h.do("GET", "/api/me", "", nil); !r.nobody() {
		t.Errorf("after revoking the own session: %d %s", r.status, r.body)
	}
	if r := h.do("DELETE", "/api/auth/sessions/"+mine, "", nil); r.status != 401 {
		t.Errorf("signed out: %d", r.status)
	}
}

func TestRefreshSessionRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	own := h.login("refresh@example.com").json(t)
	mine, account := own["id"].(string), own["accountId"].(string)
	otherDevice := h.addSession(account)
	body := `{"clientPublicKey":"02` + "ab" + `"}`

	if r := h.do("POST", "/api/auth/sessions/"+otherDevice+"/refresh", body, nil); r.status != 404 {
		t.Errorf("refreshing another device's session: %d %s", r.status, r.body)
	}
	if n := h.upstreamCalls("POST", "/auth/sessions/"+otherDevice+"/refresh"); n != 0 {
		t.Error("it reached the service")
	}

	if r := h.do("POST", "/api/auth/sessions/"+mine+"/refresh", body, nil); r.status != 202 {
		t.Fatalf("leg 1: %d %s", r.status, r.body)
	}
	before := h.cookie
	h.clock.Advance(5 * time.Minute)
	r := h.do("POST", "/api/auth/sessions/"+mine+"/refresh", body, signedHeaders)
	if r.status != 201 {
		t.Fatalf("leg 2: %d %s", r.status, r.body)
	}
	fresh := r.json(t)["id"].(string)
	if fresh == mine || h.cookie != before {
		t.Fatalf("new session %s; the cookie changed: %v (a request in flight would be signed out)", fresh, h.cookie != before)
	}
	// The cookie is set again, same value, to last as long as the new
	// session, so a browser restarted after the old session's end still
	// has it.
	freshEnd, _ := time.Parse(time.RFC3339, r.json(t)["expiresAt"].(string))
	renewed := cookieOf(r.header)
	if want := int(freshEnd.Sub(h.clock.Now()) / time.Second); renewed == nil || renewed.Value != before || renewed.MaxAge != want {
		t.Errorf("refresh set cookie %+v, want value %s with Max-Age %d", renewed, before, want)
	}
	me := h.do("GET", "/api/me", "", nil)
	if !me.somebody() {
		t.Fatalf("me after refresh: %d %s", me.status, me.body)
	}
	sess, _ := me.json(t)["session"].(map[string]any)
	if sess["id"] != fresh {
		t.Errorf("me shows session %v, want the refreshed %s", sess["id"], fresh)
	}
	// The old id is gone: 404 at the BFF, which only knows the new one.
	if r := h.do("POST", "/api/auth/sessions/"+mine+"/refresh", body, nil); r.status != 404 {
		t.Errorf("refreshing the replaced session: %d", r.status)
	}
	// Past the old session's end, the browser is still signed in.
	h.clock.Advance(12 * time.Minute)
	if r := h.do("GET", "/api/me", "", nil); !r.somebody() {
		t.Errorf("signed out at the old session's expiry: %d %s", r.status, r.body)
	}
}
