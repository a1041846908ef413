package service

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// twoSessions signs the wallet in twice (two devices) and returns both
// sessions with their keys.
func (e *env) twoSessions(w wallet) (s1 wire.Session, k1 *walletcrypto.PrivateKey, s2 wire.Session, k2 *walletcrypto.PrivateKey) {
	e.t.Helper()
	k1, k2 = mustKey(e.t), mustKey(e.t)
	s1 = e.login(w, k1)
	e.clock.Advance(31 * time.Second) // past the resend limit of codes
	s2 = e.login(w, k2)
	return s1, k1, s2, k2
}

func (e *env) activeSessionIDs(accountID string) []string {
	e.t.Helper()
	r := e.do("GET", "/auth/sessions?accountId="+accountID, nil, nil)
	e.mustStatus(r, http.StatusOK)
	var list wire.Data[wire.Session]
	r.decode(e.t, &list)
	var out []string
	for _, s := range list.Data {
		out = append(out, s.ID)
	}
	return out
}

// firstLeg sends the unsigned call and returns its challenge.
func (e *env) firstLeg(method, path string, body any) wire.SignedRequestChallenge {
	e.t.Helper()
	r := e.do(method, path, body, nil)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(e.t, &ch)
	if ch.PayloadToSign == "" || ch.RequestID == "" || ch.ExpiresAt == "" {
		e.t.Fatalf("challenge %s", r.body)
	}
	return ch
}

func signed(stamp, requestID string) map[string]string {
	return map[string]string{wire.HeaderWalletSignature: stamp, wire.HeaderRequestID: requestID}
}

// refusal is one way a signed retry can be wrong, and the code it must get.
type refusal struct {
	name    string
	headers func(ch wire.SignedRequestChallenge) map[string]string
	body    any // the retry's body when it differs from the first leg's
	code    string
}

// commonRefusals are the 401s every signed-retry operation gives; signer is
// a key that may sign, outsider one that may not.
func commonRefusals(t *testing.T, signer, outsider *walletcrypto.PrivateKey) []refusal {
	return []refusal{
		{"Request-Id without a signature", func(ch wire.SignedRequestChallenge) map[string]string {
			return map[string]string{wire.HeaderRequestID: ch.RequestID}
		}, nil, "WALLET_SIGNATURE_MISSING"},
		{"signature without Request-Id", func(ch wire.SignedRequestChallenge) map[string]string {
			return map[string]string{wire.HeaderWalletSignature: mustStamp(t, signer, ch.PayloadToSign)}
		}, nil, "REQUEST_ID_MISSING"},
		{"malformed signature", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed("not-a-stamp", ch.RequestID)
		}, nil, "WALLET_SIGNATURE_MALFORMED"},
		{"unknown Request-Id", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, signer, ch.PayloadToSign), "Request:0199a3c4-0000-7000-8000-0000000000aa")
		}, nil, "UNAUTHORIZED"},
		{"signature over another payload", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, signer, ch.PayloadToSign+" "), ch.RequestID)
		}, nil, "WALLET_SIGNATURE_INVALID"},
		{"a key that may not sign", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, outsider, ch.PayloadToSign), ch.RequestID)
		}, nil, "WALLET_SIGNATURE_INVALID"},
		{"the sandbox signature in production", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(wire.SandboxSignature, ch.RequestID)
		}, nil, "WALLET_SIGNATURE_INVALID"},
	}
}

// checkRefusals runs each refusal against a fresh challenge of the
// operation and checks its 401 code.
func (e *env) checkRefusals(method, path string, body any, refusals []refusal) {
	e.t.Helper()
	for _, rf := range refusals {
		e.t.Run(rf.name, func(t *testing.T) {
			ch := e.firstLeg(method, path, body)
			retryBody := body
			if rf.body != nil {
				retryBody = rf.body
			}
			r := e.do(method, path, retryBody, rf.headers(ch))
			if r.status != http.StatusUnauthorized || r.errorBody(t).Code != rf.code {
				t.Fatalf("%d %s, want 401 %s", r.status, r.body, rf.code)
			}
		})
	}
}

func TestRevokeSession(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("revoke@example.com")
	s1, k1, s2, k2 := e.twoSessions(w)
	stranger := e.newWallet("stranger@example.com")
	ks := mustKey(t)
	e.login(stranger, ks)
	path := "/auth/sessions/" + s2.ID

	ch := e.firstLeg("DELETE", path, nil)
	if ch.Type != wire.TypeEmailOTP {
		t.Errorf("challenge type %q, want the session's credential type", ch.Type)
	}
	var activity struct {
		Type       string
		Parameters struct {
			APIKeyIDs []string `json:"apiKeyIds"`
			UserID    string   `json:"userId"`
		}
		OrganizationID string `json:"organizationId"`
	}
	if err := json.Unmarshal([]byte(ch.PayloadToSign), &activity); err != nil || activity.Type != "ACTIVITY_TYPE_DELETE_API_KEYS" ||
		len(activity.Parameters.APIKeyIDs) != 1 || activity.Parameters.APIKeyIDs[0] != s2.ID || activity.Parameters.UserID != w.account.ID {
		t.Errorf("payloadToSign %s (%v)", ch.PayloadToSign, err)
	}

	e.checkRefusals("DELETE", path, nil, append(commonRefusals(t, k1, ks),
		refusal{"Request-Id of another session's challenge", func(wire.SignedRequestChallenge) map[string]string {
			other := e.firstLeg("DELETE", "/auth/sessions/"+s1.ID, nil)
			return signed(mustStamp(t, k1, other.PayloadToSign), other.RequestID)
		}, nil, "UNAUTHORIZED"},
		refusal{"expired challenge", func(ch wire.SignedRequestChallenge) map[string]string {
			e.clock.Advance(5*time.Minute + time.Second)
			return signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID)
		}, nil, "UNAUTHORIZED"},
	))
	if got := e.activeSessionIDs(w.account.ID); len(got) != 2 {
		t.Fatalf("refused retries changed the sessions: %v", got)
	}
	if r := e.do("DELETE", path, `{"x":1}`, nil); r.status != http.StatusBadRequest {
		t.Errorf("a body: %d %s", r.status, r.body)
	}

	// Another session of the account signs: 204, and s2 is gone.
	ch = e.firstLeg("DELETE", path, nil)
	e.mustStatus(e.do("DELETE", path, nil, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID)), http.StatusNoContent)
	if got := e.activeSessionIDs(w.account.ID); len(got) != 1 || got[0] != s1.ID {
		t.Fatalf("after revoking %s: %v", s2.ID, got)
	}
	for _, id := range []string{s2.ID, "Session:0199a3c4-0000-7000-8000-0000000000bb", "nope"} {
		if r := e.do("DELETE", "/auth/sessions/"+id, nil, nil); r.status != http.StatusNotFound {
			t.Errorf("DELETE %s: %d, want 404", id, r.status)
		}
	}
	// k2 signed for a revoked session: it signs for nothing now.
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s1.ID, nil)
	if r := e.do("DELETE", "/auth/sessions/"+s1.ID, nil, signed(mustStamp(t, k2, ch.PayloadToSign), ch.RequestID)); r.status != http.StatusUnauthorized {
		t.Errorf("the revoked session's key signed: %d %s", r.status, r.body)
	}

	// A session revokes itself (logging out).
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s1.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/sessions/"+s1.ID, nil, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID)), http.StatusNoContent)
	if got := e.activeSessionIDs(w.account.ID); len(got) != 0 {
		t.Fatalf("after logging out: %v", got)
	}
	if got := e.activeSessionIDs(stranger.account.ID); len(got) != 1 {
		t.Errorf("another account's sessions changed: %v", got)
	}
}

func TestRefreshSession(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("refresh@example.com")
	k1 := mustKey(t)
	s1 := e.login(w, k1)
	k2 := mustKey(t)
	body := map[string]any{"clientPublicKey": k2.PublicKey().CompressedHex()}
	path := "/auth/sessions/" + s1.ID + "/refresh"

	ch := e.firstLeg("POST", path, body)
	if ch.Type != "" {
		t.Errorf("refresh challenge has type %q", ch.Type)
	}
	var activity struct {
		Type       string
		Parameters map[string]string
	}
	if err := json.Unmarshal([]byte(ch.PayloadToSign), &activity); err != nil || activity.Type != "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2" ||
		activity.Parameters["targetPublicKey"] != k2.PublicKey().CompressedHex() {
		t.Errorf("payloadToSign %s (%v)", ch.PayloadToSign, err)
	}

	e.clock.Advance(31 * time.Second)
	other := mustKey(t)
	e.login(w, other) // another session of the same account: still not the key of this session
	e.checkRefusals("POST", path, body, append(commonRefusals(t, k1, other),
		refusal{"another clientPublicKey on the retry", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID)
		}, map[string]any{"clientPublicKey": mustKey(t).PublicKey().CompressedHex()}, "WALLET_SIGNATURE_BODY_MISMATCH"},
		refusal{"signed with the new key instead of the current one", func(ch wire.SignedRequestChallenge) map[string]string {
			return signed(mustStamp(t, k2, ch.PayloadToSign), ch.RequestID)
		}, nil, "WALLET_SIGNATURE_INVALID"},
	))
	if got := e.activeSessionIDs(w.account.ID); len(got) != 2 {
		t.Fatalf("refused refreshes changed the sessions: %v", got)
	}

	// Client-held key (compressed): 201, a new session, no sealed key; the
	// old session is revoked; the new key signs for the account.
	e.clock.Advance(10 * time.Minute) // s1 has 4.5 minutes left
	ch = e.firstLeg("POST", path, body)
	r := e.do("POST", path, body, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var s2 wire.Session
	r.decode(t, &s2)
	if s2.ID == s1.ID || s2.AccountID != w.account.ID || s2.Type != s1.Type || s2.EncryptedSessionSigningKey != "" {
		t.Fatalf("refreshed session %s", r.body)
	}
	if want := timestamp(e.clock.Now().Add(15 * time.Minute)); s2.ExpiresAt != want {
		t.Errorf("expiresAt %s, want %s (a full lifetime)", s2.ExpiresAt, want)
	}
	ids := e.activeSessionIDs(w.account.ID)
	if len(ids) != 2 || ids[0] == s1.ID && ids[1] == s1.ID {
		t.Errorf("sessions after refresh %v", ids)
	}
	for _, id := range ids {
		if id == s1.ID {
			t.Errorf("the refreshed session %s is still active", s1.ID)
		}
	}
	// The old session can be refreshed no more (401), an unknown one is 404.
	if r := e.do("POST", path, body, nil); r.status != http.StatusUnauthorized {
		t.Errorf("refreshing the replaced session: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/auth/sessions/Session:0199a3c4-0000-7000-8000-0000000000cc/refresh", body, nil); r.status != http.StatusNotFound {
		t.Errorf("unknown session: %d", r.status)
	}
	for _, bad := range []any{map[string]any{}, map[string]any{"clientPublicKey": "04zz"}, map[string]any{"clientPublicKey": k2.PublicKey().CompressedHex(), "x": 1}} {
		if r := e.do("POST", "/auth/sessions/"+s2.ID+"/refresh", bad, nil); r.status != http.StatusBadRequest {
			t.Errorf("body %v: %d %s", bad, r.status, r.body)
		}
	}

	// Legacy (uncompressed): the service makes the session key and seals it
	// to clientPublicKey; the opened key is the new session's key.
	k3 := mustKey(t)
	body = map[string]any{"clientPublicKey": k3.PublicKey().UncompressedHex()}
	path = "/auth/sessions/" + s2.ID + "/refresh"
	ch = e.firstLeg("POST", path, body)
	r = e.do("POST", path, body, signed(mustStamp(t, k2, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var s3 wire.Session
	r.decode(t, &s3)
	if s3.EncryptedSessionSigningKey == "" {
		t.Fatalf("no encryptedSessionSigningKey for an uncompressed clientPublicKey: %s", r.body)
	}
	sessionKey, err := walletcrypto.OpenSessionKey(k3, s3.EncryptedSessionSigningKey)
	if err != nil {
		t.Fatal(err)
	}
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s3.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/sessions/"+s3.ID, nil, signed(mustStamp(t, sessionKey, ch.PayloadToSign), ch.RequestID)), http.StatusNoContent)

	// A used Request-Id cannot be used again.
	s4 := e.activeSessionIDs(w.account.ID)[0]
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s4, nil)
	stamp := mustStamp(t, other, ch.PayloadToSign)
	e.mustStatus(e.do("DELETE", "/auth/sessions/"+s4, nil, signed(stamp, ch.RequestID)), http.StatusNoContent)
	if r := e.do("DELETE", "/auth/sessions/"+s4, nil, signed(stamp, ch.RequestID)); r.status != http.StatusNotFound {
		t.Errorf("replayed revoke: %d", r.status)
	}
}

// TestSessionOperationsInSandbox: the sandbox literal signs session
// operations in sandbox mode.
func TestSessionOperationsInSandbox(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = ModeSandbox })
	w := e.newWallet("sandbox-sessions@example.com")
	s1 := e.login(w, mustKey(t))
	body := map[string]any{"clientPublicKey": mustKey(t).PublicKey().CompressedHex()}
	ch := e.firstLeg("POST", "/auth/sessions/"+s1.ID+"/refresh", body)
	r := e.do("POST", "/auth/sessions/"+s1.ID+"/refresh", body, signed(wire.SandboxSignature, ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var s2 wire.Session
	r.decode(t, &s2)
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s2.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/sessions/"+s2.ID, nil, signed(wire.SandboxSignature, ch.RequestID)), http.StatusNoContent)
	if got := e.activeSessionIDs(w.account.ID); len(got) != 0 {
		t.Errorf("sessions left %v", got)
	}
}
