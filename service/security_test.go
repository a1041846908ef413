package service

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"paywallet/service/payments"
	"paywallet/service/seclog"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// device is the end user's headers as the BFF sends them.
func device(ip, label string) map[string]string {
	return map[string]string{wire.HeaderEndUserIP: ip, wire.HeaderEndUserDevice: label}
}

// with is headers and more, merged.
func with(headers map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(headers)
	maps.Copy(out, more)
	return out
}

// loginFrom is e.login from a device: both legs carry its headers.
func (e *env) loginFrom(w wallet, client *walletcrypto.PrivateKey, dev map[string]string) wire.Session {
	e.t.Helper()
	am, code := e.challenge(w)
	body := verifyBody(e.sealCode(am, code, client))
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, dev)
	e.mustStatus(r, http.StatusAccepted)
	var ch wire.SignedRequestChallenge
	r.decode(e.t, &ch)
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", body, with(dev, signed(mustStamp(e.t, client, ch.PayloadToSign), ch.RequestID)))
	e.mustStatus(r, http.StatusOK)
	var s wire.Session
	r.decode(e.t, &s)
	return s
}

// securityLog is the customer's whole log, newest first, read a page of
// limit at a time.
func (e *env) securityLog(customerID string, limit int) []wire.SecurityEvent {
	e.t.Helper()
	var out []wire.SecurityEvent
	cursor := ""
	for {
		r := e.do("GET", "/customers/security-events?customerId="+customerID+"&limit="+strconv.Itoa(limit)+"&cursor="+cursor, nil, nil)
		e.mustStatus(r, http.StatusOK)
		var page wire.List[wire.SecurityEvent]
		r.decode(e.t, &page)
		out = append(out, page.Data...)
		if !page.HasMore {
			return out
		}
		cursor = page.NextCursor
	}
}

// checkChain recomputes the customer's chain from the log as the API
// answers it, as anyone who downloads it can (service/seclog).
func checkChain(t *testing.T, log []wire.SecurityEvent) {
	t.Helper()
	var v seclog.Verifier
	for i := len(log) - 1; i >= 0; i-- {
		ev := log[i]
		var details bytes.Buffer
		enc := json.NewEncoder(&details)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ev.Details); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, ev.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		v.Add(&seclog.Row{Record: seclog.Record{ID: ev.ID, CustomerID: ev.CustomerID, AccountID: ev.AccountID, Type: ev.Type,
			Details: bytes.TrimSpace(details.Bytes()), CreatedAt: at}, Seq: ev.Sequence, PrevHash: ev.PreviousHash, Hash: ev.Hash})
	}
	if r := v.Finish(); r.Err() != nil {
		t.Fatalf("the log as answered does not verify: %v", r.Err())
	}
}

// mails counts the messages to addr whose subject is subject.
func (e *env) mails(addr, subject string) int {
	n := 0
	for _, m := range e.box.All() {
		if strings.EqualFold(m.To, addr) && m.Subject == subject {
			n++
		}
	}
	return n
}

// signOutToken is the token of the newest sign-out link e-mailed to addr.
func (e *env) signOutToken(addr string) string {
	e.t.Helper()
	for _, m := range e.box.All() {
		if !strings.EqualFold(m.To, addr) {
			continue
		}
		if _, after, ok := strings.Cut(m.Body, "/sign-out-everywhere#"); ok {
			return strings.Fields(after)[0]
		}
	}
	e.t.Fatalf("no sign-out link e-mailed to %s", addr)
	return ""
}

const (
	subjectNewSignIn      = "New sign-in to your wallet"
	subjectMethodsChanged = "Your wallet's sign-in methods changed"
)

// TestSecurityLog: every security event of a customer is a record of its
// log, with the device and network the BFF's headers give, newest first
// and paged, and the log as answered recomputes as one chain: a wrong
// code and an expired one (recorded after the refusal rolled back), a
// sign-in (with the "new sign-in" e-mail only for a device not seen
// before), a passkey added, refused and removed, an export, the e-mail
// changed, a session revoked.
func TestSecurityLog(t *testing.T) { onBothStores(t, testSecurityLog) }

func testSecurityLog(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, func(c *Config) {
		c.WalletURL = "https://wallet.example/app/"
		c.PasskeyChallengeInterval = -1
	})...)
	w := e.newWallet("sec@example.com")
	firefox := device("203.0.113.77", "Firefox on Linux")
	iphone := device("2001:db8:1234:5678::1", "Safari on iPhone\x00")

	// A wrong code, then the right one too late.
	client := mustKey(t)
	am, code := e.challenge(w)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), firefox)
	e.mustStatus(r, http.StatusUnauthorized)
	e.clock.Advance(6 * time.Minute)
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, code, client)), firefox)
	e.mustStatus(r, http.StatusUnauthorized)

	// Signed in twice from one device, once from another.
	k1 := mustKey(t)
	s1 := e.loginFrom(w, k1, firefox)
	e.clock.Advance(31 * time.Second)
	e.loginFrom(w, mustKey(t), firefox)
	e.clock.Advance(31 * time.Second)
	k3 := mustKey(t)
	s3 := e.loginFrom(w, k3, iphone)
	if n := e.mails(w.email, subjectNewSignIn); n != 2 {
		t.Fatalf("%d new-sign-in e-mails, want 2 (one per new device)", n)
	}

	// A passkey added, refused once, removed.
	a := newAuthenticator(t)
	pk := e.addPasskey(w, k1, a)
	pc := e.passkeyChallenge(pk, mustKey(t).PublicKey().CompressedHex())
	handle, _ := wire.WebAuthnUserHandle(w.account.ID)
	r = e.do("POST", "/auth/credentials/"+pk.ID+"/verify", passkeyVerifyBody(a.assert(strings.Repeat("ab", 32), handle)),
		with(iphone, map[string]string{wire.HeaderRequestID: pc.RequestID}))
	e.mustStatus(r, http.StatusUnauthorized)
	ch := e.firstLeg("DELETE", "/auth/credentials/"+pk.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/credentials/"+pk.ID, nil, with(firefox, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID))),
		http.StatusNoContent)
	if n := e.mails(w.email, subjectMethodsChanged); n != 2 {
		t.Fatalf("%d methods-changed e-mails, want 2", n)
	}

	// The recovery phrase exported, the e-mail changed, a session revoked.
	exportBody := map[string]any{"clientPublicKey": mustKey(t).PublicKey().UncompressedHex()}
	path := "/internal-accounts/" + w.account.ID + "/export"
	ch = e.firstLeg("POST", path, exportBody)
	e.mustStatus(e.do("POST", path, exportBody, with(firefox, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID))), http.StatusOK)
	emailBody := map[string]any{"customerType": "INDIVIDUAL", "email": "new.sec@example.com"}
	ch = e.firstLeg("PATCH", "/customers/"+w.customer.ID, emailBody)
	e.mustStatus(e.do("PATCH", "/customers/"+w.customer.ID, emailBody, with(firefox, signed(mustStamp(t, k1, ch.PayloadToSign), ch.RequestID))),
		http.StatusOK)
	if n := e.mails("sec@example.com", subjectMethodsChanged); n != 3 {
		t.Fatalf("the old address got %d methods-changed e-mails, want 3", n)
	}
	ch = e.firstLeg("DELETE", "/auth/sessions/"+s3.ID, nil)
	e.mustStatus(e.do("DELETE", "/auth/sessions/"+s3.ID, nil, with(iphone, signed(mustStamp(t, k3, ch.PayloadToSign), ch.RequestID))),
		http.StatusNoContent)

	log := e.securityLog(w.customer.ID, 4)
	type want struct {
		typ     string
		details map[string]any
	}
	ff := map[string]any{"device": "Firefox on Linux", "network": "203.0.113.0/24"}
	ip := map[string]any{"device": "Safari on iPhone", "network": "2001:db8:1234::/48"}
	and := func(dev map[string]any, m map[string]any) map[string]any {
		out := maps.Clone(dev)
		maps.Copy(out, m)
		return out
	}
	wants := []want{ // oldest first
		{"SIGN_IN_FAILED", and(ff, map[string]any{"method": "EMAIL_OTP", "reason": "WRONG_CODE"})},
		{"SIGN_IN_FAILED", and(ff, map[string]any{"method": "EMAIL_OTP", "reason": "EXPIRED_CODE"})},
		{"SIGNED_IN", and(ff, map[string]any{"method": "EMAIL_OTP", "sessionId": s1.ID})},
		{"SIGNED_IN", and(ff, map[string]any{"method": "EMAIL_OTP"})},
		{"SIGNED_IN", and(ip, map[string]any{"method": "EMAIL_OTP", "sessionId": s3.ID})},
		{"SIGN_IN_METHOD_ADDED", map[string]any{"method": "PASSKEY", "credentialId": pk.ID, "nickname": "Laptop (work)", "device": "", "network": ""}},
		{"SIGN_IN_FAILED", and(ip, map[string]any{"method": "PASSKEY", "reason": "PASSKEY_REFUSED"})},
		{"SIGN_IN_METHOD_REMOVED", and(ff, map[string]any{"method": "PASSKEY", "credentialId": pk.ID})},
		{"RECOVERY_PHRASE_EXPORTED", ff},
		{"EMAIL_CHANGED", and(ff, map[string]any{"from": "s***@example.com", "to": "n***@example.com"})},
		{"SESSION_REVOKED", and(ip, map[string]any{"sessionId": s3.ID, "by": "YOU"})},
	}
	if len(log) != len(wants) {
		t.Fatalf("%d records, want %d: %+v", len(log), len(wants), log)
	}
	for i, w2 := range wants {
		got := log[len(log)-1-i]
		if got.Sequence != int64(i+1) || got.Type != w2.typ || got.CustomerID != w.customer.ID || got.AccountID != w.account.ID {
			t.Errorf("record %d: %+v, want %s", i+1, got, w2.typ)
			continue
		}
		for k, v := range w2.details {
			if got.Details[k] != v {
				t.Errorf("record %d (%s): %s = %v, want %v (%v)", i+1, got.Type, k, got.Details[k], v, got.Details)
			}
		}
		if got.Type == "SIGNED_IN" && got.Details["sessionId"] == nil {
			t.Errorf("record %d: no sessionId: %v", i+1, got.Details)
		}
	}
	checkChain(t, log)
	if got := e.securityLog(w.customer.ID, 100); !slices.EqualFunc(got, log, func(a, b wire.SecurityEvent) bool { return a.ID == b.ID }) {
		t.Fatal("one page and pages of 4 differ")
	}

	// Refusals name the field; an unknown customer is 404.
	for _, c := range []struct {
		query, field string
	}{{"", "customerId"}, {"customerId=nope", "customerId"}, {"customerId=" + w.customer.ID + "&limit=0", "limit"},
		{"customerId=" + w.customer.ID + "&cursor=x", "cursor"}} {
		r := e.do("GET", "/customers/security-events?"+c.query, nil, nil)
		if r.status != http.StatusBadRequest || !fieldNames(t, r)[c.field] {
			t.Errorf("%q: %d %s", c.query, r.status, r.body)
		}
	}
	if r := e.do("GET", "/customers/security-events?customerId=Customer:019aa5d2-7c10-7000-8000-000000000001", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("unknown customer: %d %s", r.status, r.body)
	}
}

// TestLockOutRecorded: the wrong code that locks the credential is a
// SIGN_IN_FAILED and a LOCKED_OUT record; a try while locked is one more
// SIGN_IN_FAILED (LOCKED).
func TestLockOutRecorded(t *testing.T) { onBothStores(t, testLockOutRecorded) }

func testLockOutRecorded(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, opts...)
	w := e.newWallet("locked@example.com")
	client := mustKey(t)
	var am wire.AuthMethod
	for i := range 5 {
		var code string
		am, code = e.challenge(w)
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, wrong, client)), nil)
		if want := map[bool]int{false: 401, true: 429}[i == 4]; r.status != want {
			t.Fatalf("attempt %d: %d %s", i+1, r.status, r.body)
		}
		e.clock.Advance(31 * time.Second)
	}
	r := e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", verifyBody(e.sealCode(am, "123456", client)), nil)
	if r.status != 429 {
		t.Fatalf("while locked: %d %s", r.status, r.body)
	}
	log := e.securityLog(w.customer.ID, 100)
	var types []string
	for i := len(log) - 1; i >= 0; i-- {
		types = append(types, log[i].Type+" "+strings.TrimSpace(asString(log[i].Details["reason"])+" "+asString(log[i].Details["action"])))
	}
	wantTypes := []string{"SIGN_IN_FAILED WRONG_CODE", "SIGN_IN_FAILED WRONG_CODE", "SIGN_IN_FAILED WRONG_CODE", "SIGN_IN_FAILED WRONG_CODE",
		"SIGN_IN_FAILED WRONG_CODE", "LOCKED_OUT SIGN_IN", "SIGN_IN_FAILED LOCKED"}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("records %q, want %q", types, wantTypes)
	}
	if log[1].Details["failedAttempts"] != float64(5) || log[1].Details["until"] == nil {
		t.Fatalf("lock-out %+v", log[1])
	}
	checkChain(t, log)
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// TestSignOutEverywhere: the link of a security e-mail revokes every
// active session of the customer's wallet, each a SESSION_REVOKED record
// by EMAIL_LINK, once; a used, expired, unknown or malformed token is 400
// naming token. Without a WalletURL the e-mail points to the Security
// page and carries no link.
func TestSignOutEverywhere(t *testing.T) { onBothStores(t, testSignOutEverywhere) }

func testSignOutEverywhere(t *testing.T, opts ...func(*Config)) {
	e := newEnv(t, append(opts, func(c *Config) { c.WalletURL = "https://wallet.example" })...)
	w := e.newWallet("out@example.com")
	e.loginFrom(w, mustKey(t), device("198.51.100.4", "Chrome on Android"))
	first := e.signOutToken(w.email)
	e.clock.Advance(31 * time.Second)
	e.loginFrom(w, mustKey(t), device("10.1.2.3", "Edge on Windows"))
	token := e.signOutToken(w.email)
	if token == first || len(token) != 43 {
		t.Fatalf("tokens %q %q", first, token)
	}
	if n := len(e.activeSessionIDs(w.account.ID)); n != 2 {
		t.Fatalf("%d sessions", n)
	}

	r := e.do("POST", "/auth/sign-out-everywhere", map[string]any{"token": token}, device("127.0.0.1", "Firefox"))
	e.mustStatus(r, http.StatusOK)
	var out wire.SignOutEverywhereResponse
	r.decode(t, &out)
	if out.RevokedSessions != 2 || len(e.activeSessionIDs(w.account.ID)) != 0 {
		t.Fatalf("revoked %d, left %v", out.RevokedSessions, e.activeSessionIDs(w.account.ID))
	}
	log := e.securityLog(w.customer.ID, 100)
	if len(log) != 4 || log[0].Type != "SESSION_REVOKED" || log[1].Type != "SESSION_REVOKED" ||
		log[0].Details["by"] != "EMAIL_LINK" || log[0].Details["network"] != "loopback" || log[2].Details["network"] != "private" {
		t.Fatalf("log %+v", log)
	}
	checkChain(t, log)

	// The first link still works (nothing to revoke), once; then neither.
	r = e.do("POST", "/auth/sign-out-everywhere", map[string]any{"token": first}, nil)
	e.mustStatus(r, http.StatusOK)
	for _, c := range []struct{ name, token string }{
		{"used", token}, {"used too", first}, {"empty", ""}, {"malformed", "not a token!"},
		{"unknown", strings.Repeat("A", 43)},
	} {
		r := e.do("POST", "/auth/sign-out-everywhere", map[string]any{"token": c.token}, nil)
		if r.status != http.StatusBadRequest || !fieldNames(t, r)["token"] {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}

	// A week and a moment later, a fresh link is expired.
	e.clock.Advance(31 * time.Second)
	e.loginFrom(w, mustKey(t), device("198.51.100.9", "Brave on Linux"))
	late := e.signOutToken(w.email)
	e.clock.Advance(7*24*time.Hour + time.Second)
	if r := e.do("POST", "/auth/sign-out-everywhere", map[string]any{"token": late}, nil); r.status != http.StatusBadRequest {
		t.Fatalf("expired: %d %s", r.status, r.body)
	}

	// No WalletURL: the e-mail says where to go, with no link.
	e2 := newEnv(t, opts...)
	w2 := e2.newWallet("nolink@example.com")
	e2.login(w2, mustKey(t))
	for _, m := range e2.box.All() {
		if m.Subject == subjectNewSignIn && (strings.Contains(m.Body, "sign-out-everywhere") || !strings.Contains(m.Body, "Security")) {
			t.Fatalf("e-mail without WalletURL: %s", m.Body)
		}
	}
	if e2.mails(w2.email, subjectNewSignIn) != 1 {
		t.Fatal("no new-sign-in e-mail")
	}
}

// TestEndUserNetwork: the coarse network of an IP address and the bounds
// of the headers.
func TestEndUserNetwork(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, c := range []struct{ ip, device, network, label string }{
		{"203.0.113.77", "Chrome on Android", "203.0.113.0/24", "Chrome on Android"},
		{" 2001:db8:1234:5678::1 ", "", "2001:db8:1234::/48", ""},
		{"::ffff:198.51.100.7", "", "198.51.100.0/24", ""},
		{"127.0.0.1", "", "loopback", ""},
		{"::1", "", "loopback", ""},
		{"192.168.1.20", "", "private", ""},
		{"fd00::5", "", "private", ""},
		{"fe80::1%eth0", "", "private", ""},
		{"not an ip", "a\tb\x00 c\n", "", "a b c"},
		{"", long, "", long[:120]},
	} {
		u := payments.NewEndUser(c.ip, c.device)
		if got := u.Network(); got != c.network || u.Device != c.label {
			t.Errorf("%q %q: network %q device %q, want %q %q", c.ip, c.device, got, u.Device, c.network, c.label)
		}
	}
}

// TestDeleteCredentialRecordsItsSessions: removing a passkey ends the
// sessions it issued, each a SESSION_REVOKED record (by YOU) after the
// SIGN_IN_METHOD_REMOVED one; the other credential's session stays.
func TestDeleteCredentialRecordsItsSessions(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		e := newEnv(t, append(opts, func(c *Config) { c.PasskeyChallengeInterval = -1 })...)
		w := e.newWallet("drop@example.com")
		k := mustKey(t)
		e.login(w, k)
		a := newAuthenticator(t)
		pk := e.addPasskey(w, k, a)
		handle, _ := wire.WebAuthnUserHandle(w.account.ID)
		pc := e.passkeyChallenge(pk, mustKey(t).PublicKey().CompressedHex())
		r := e.do("POST", "/auth/credentials/"+pk.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)),
			map[string]string{wire.HeaderRequestID: pc.RequestID})
		e.mustStatus(r, http.StatusOK)
		var ps wire.Session
		r.decode(t, &ps)
		ch := e.firstLeg("DELETE", "/auth/credentials/"+pk.ID, nil)
		e.mustStatus(e.do("DELETE", "/auth/credentials/"+pk.ID, nil, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID)), http.StatusNoContent)
		log := e.securityLog(w.customer.ID, 10)
		var types []string
		for i := len(log) - 1; i >= 0; i-- {
			types = append(types, log[i].Type)
		}
		want := []string{"SIGNED_IN", "SIGN_IN_METHOD_ADDED", "SIGNED_IN", "SIGN_IN_METHOD_REMOVED", "SESSION_REVOKED"}
		if !slices.Equal(types, want) || log[0].Details["sessionId"] != ps.ID || log[2].Details["method"] != "PASSKEY" {
			t.Fatalf("log %q, want %q: %+v", types, want, log)
		}
		checkChain(t, log)
	})
}

// TestDeleteCustomerRecordsRevokedSessions: deleting a customer ends its
// sessions, each a SESSION_REVOKED record by PLATFORM, and the log stays
// readable.
func TestDeleteCustomerRecordsRevokedSessions(t *testing.T) {
	onBothStores(t, func(t *testing.T, opts ...func(*Config)) {
		e := newEnv(t, opts...)
		w := e.newWallet("leaving@example.com")
		s := e.login(w, mustKey(t))
		e.mustStatus(e.do("DELETE", "/customers/"+w.customer.ID, nil, nil), http.StatusOK)
		log := e.securityLog(w.customer.ID, 10)
		if len(log) != 2 || log[0].Type != "SESSION_REVOKED" || log[0].Details["by"] != "PLATFORM" || log[0].Details["sessionId"] != s.ID {
			t.Fatalf("log %+v", log)
		}
		checkChain(t, log)
	})
}
