package service

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"paywallet/service/store"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// authenticator is a software WebAuthn authenticator for tests: one ES256
// credential, a signature counter, attestation format "none". It builds
// the same bytes a browser hands the page (clientDataJSON, authenticator
// data, CBOR attestation object, DER signature), so the service's
// go-webauthn verification runs for real.
type authenticator struct {
	t       *testing.T
	key     *ecdsa.PrivateKey
	id      []byte
	counter uint32
	flags   byte // authenticator data flags of assertions
	rpID    string
	origin  string
}

const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

func newAuthenticator(t *testing.T) *authenticator {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &authenticator{t: t, key: k, id: id, counter: 1, flags: flagUP | flagUV, rpID: testRPID, origin: testOrigin}
}

func (a *authenticator) credentialID() string { return b64(a.id) }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// newRegistrationChallenge is what the platform backend mints.
func newRegistrationChallenge() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b64(b)
}

func (a *authenticator) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// cbor helpers: just the shapes an attestation object needs.
func cborHead(major byte, n int) []byte {
	switch {
	case n < 24:
		return []byte{major<<5 | byte(n)}
	case n < 256:
		return []byte{major<<5 | 24, byte(n)}
	}
	return []byte{major<<5 | 25, byte(n >> 8), byte(n)}
}

func cborText(s string) []byte  { return append(cborHead(3, len(s)), s...) }
func cborBytes(b []byte) []byte { return append(cborHead(2, len(b)), b...) }

// coseKey is the credential public key: {1:2, 3:-7, -1:1, -2:x, -3:y}.
func (a *authenticator) coseKey() []byte {
	pub, _ := a.key.PublicKey.Bytes()
	out := []byte{0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21}
	out = append(out, cborBytes(pub[1:33])...)
	out = append(out, 0x22)
	return append(out, cborBytes(pub[33:])...)
}

func (a *authenticator) rpHash() []byte {
	h := sha256.Sum256([]byte(a.rpID))
	return h[:]
}

// register answers a creation request with the given challenge.
func (a *authenticator) register(challenge string) *wire.PasskeyAttestation {
	authData := append(a.rpHash(), a.flags|flagAT)
	authData = binary.BigEndian.AppendUint32(authData, 0)
	authData = append(authData, make([]byte, 16)...) // AAGUID
	authData = binary.BigEndian.AppendUint16(authData, uint16(len(a.id)))
	authData = append(authData, a.id...)
	authData = append(authData, a.coseKey()...)
	obj := []byte{0xa3}
	obj = append(obj, cborText("fmt")...)
	obj = append(obj, cborText("none")...)
	obj = append(obj, cborText("attStmt")...)
	obj = append(obj, 0xa0)
	obj = append(obj, cborText("authData")...)
	obj = append(obj, cborBytes(authData)...)
	return &wire.PasskeyAttestation{
		CredentialID:      a.credentialID(),
		ClientDataJSON:    b64(a.clientData("webauthn.create", challenge)),
		AttestationObject: b64(obj),
		Transports:        []string{"internal"},
	}
}

// assert signs a login challenge, which the service gives as hex text used
// as the challenge's bytes, advancing the counter first.
func (a *authenticator) assert(challengeHex string, userHandle []byte) *wire.PasskeyAssertion {
	a.counter++
	return a.assertAt(challengeHex, userHandle, a.counter)
}

func (a *authenticator) assertAt(challengeHex string, userHandle []byte, counter uint32) *wire.PasskeyAssertion {
	cd := a.clientData("webauthn.get", b64([]byte(challengeHex)))
	authData := append(a.rpHash(), a.flags)
	authData = binary.BigEndian.AppendUint32(authData, counter)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, authData...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		a.t.Fatal(err)
	}
	return &wire.PasskeyAssertion{
		CredentialID:      a.credentialID(),
		ClientDataJSON:    b64(cd),
		AuthenticatorData: b64(authData),
		Signature:         b64(sig),
		UserHandle:        b64(userHandle),
	}
}

// passkeyBody is a PASSKEY create body for the account.
func passkeyBody(accountID, nickname, challenge string, att *wire.PasskeyAttestation) map[string]any {
	return map[string]any{"type": "PASSKEY", "accountId": accountID, "nickname": nickname, "challenge": challenge, "attestation": att}
}

// addPasskey registers a passkey on the wallet through the signed retry,
// signed with key (a session key of the account).
func (e *env) addPasskey(w wallet, key *walletcrypto.PrivateKey, a *authenticator) wire.AuthMethod {
	e.t.Helper()
	challenge := newRegistrationChallenge()
	body := passkeyBody(w.account.ID, "Laptop (work)", challenge, a.register(challenge))
	ch := e.firstLeg("POST", "/auth/credentials", body)
	r := e.do("POST", "/auth/credentials", body, signed(mustStamp(e.t, key, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var am wire.AuthMethod
	r.decode(e.t, &am)
	return am
}

// passkeyChallenge asks for a login challenge for the client key (hex).
func (e *env) passkeyChallenge(cred wire.AuthMethod, clientHex string) wire.PasskeyAuthChallenge {
	e.t.Helper()
	r := e.do("POST", "/auth/credentials/"+cred.ID+"/challenge", map[string]any{"clientPublicKey": clientHex}, nil)
	e.mustStatus(r, http.StatusOK)
	var pc wire.PasskeyAuthChallenge
	r.decode(e.t, &pc)
	return pc
}

func passkeyVerifyBody(a *wire.PasskeyAssertion) map[string]any {
	return map[string]any{"type": "PASSKEY", "assertion": a}
}

func TestPasskeyRegisterAndLogin(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			var e *env
			if db == "postgres" {
				e = newEnv(t, onPostgres(t))
			} else {
				e = newEnv(t)
			}
			w := e.newWallet("pat@example.com")
			otpKey := mustKey(t)
			e.login(w, otpKey)
			a := newAuthenticator(t)
			cred := e.addPasskey(w, otpKey, a)
			if cred.Type != "PASSKEY" || cred.CredentialID != a.credentialID() || cred.Nickname != "Laptop (work)" || cred.AccountID != w.account.ID {
				t.Fatalf("created %+v", cred)
			}
			handle, _ := wire.WebAuthnUserHandle(w.account.ID)

			// Client-held key: the compressed key becomes the session key.
			client := mustKey(t)
			pc := e.passkeyChallenge(cred, client.PublicKey().CompressedHex())
			if pc.CredentialID != a.credentialID() || len(pc.Challenge) != 64 || pc.Challenge != strings.ToLower(pc.Challenge) || !strings.HasPrefix(pc.RequestID, "Request:") {
				t.Fatalf("challenge %+v", pc)
			}
			r := e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)),
				map[string]string{wire.HeaderRequestID: pc.RequestID})
			e.mustStatus(r, http.StatusOK)
			var sess wire.Session
			r.decode(t, &sess)
			if sess.Type != "PASSKEY" || sess.EncryptedSessionSigningKey != "" || sess.Nickname != "Laptop (work)" {
				t.Fatalf("session %s", r.body)
			}
			if got := e.storedSession(sess.ID).PublicKey; hex.EncodeToString(got) != client.PublicKey().CompressedHex() {
				t.Fatalf("session key %x is not the client's", got)
			}
			if got := e.storedCredential(cred.ID).SignCount; got != int64(a.counter) {
				t.Fatalf("stored sign count %d, want %d", got, a.counter)
			}

			// Legacy: an uncompressed key gets a sealed session key.
			e.clock.Advance(3 * time.Second)
			legacy := mustKey(t)
			pc = e.passkeyChallenge(cred, legacy.PublicKey().UncompressedHex())
			r = e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)),
				map[string]string{wire.HeaderRequestID: pc.RequestID})
			e.mustStatus(r, http.StatusOK)
			r.decode(t, &sess)
			sessionKey, err := walletcrypto.OpenSessionKey(legacy, sess.EncryptedSessionSigningKey)
			if err != nil {
				t.Fatalf("open encryptedSessionSigningKey: %v", err)
			}
			if !sessionKey.PublicKey().Equal(mustParse(t, e.storedSession(sess.ID).PublicKey)) {
				t.Fatal("the sealed key is not the session's key")
			}
		})
	}
}

func mustParse(t *testing.T, sec1 []byte) *walletcrypto.PublicKey {
	t.Helper()
	k, err := walletcrypto.ParsePublicKey(sec1)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestPasskeyLoginRefusals(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PasskeyChallengeInterval = -1 })
	w := e.newWallet("ref@example.com")
	otpKey := mustKey(t)
	e.login(w, otpKey)
	a := newAuthenticator(t)
	cred := e.addPasskey(w, otpKey, a)
	handle, _ := wire.WebAuthnUserHandle(w.account.ID)
	client := mustKey(t).PublicKey().CompressedHex()
	verify := func(a *wire.PasskeyAssertion, requestID string) response {
		return e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(a), map[string]string{wire.HeaderRequestID: requestID})
	}
	want := func(r response, status int, code string) {
		t.Helper()
		if r.status != status || r.errorBody(t).Code != code {
			t.Fatalf("%d %s, want %d %s", r.status, r.body, status, code)
		}
	}

	pc := e.passkeyChallenge(cred, client)
	want(verify(a.assert(pc.Challenge, handle), ""), 401, "REQUEST_ID_MISSING")
	want(verify(a.assert(pc.Challenge, handle), "Request:0199a3c4-0000-7000-8000-0000000000aa"), 401, "UNAUTHORIZED")
	other := e.passkeyChallenge(cred, client)
	want(verify(a.assert(other.Challenge, handle), pc.RequestID), 401, "UNAUTHORIZED") // signed another challenge
	// The counter must advance past the last accepted value.
	good := a.assert(pc.Challenge, handle)
	e.mustStatus(verify(good, pc.RequestID), http.StatusOK)
	want(verify(good, pc.RequestID), 401, "UNAUTHORIZED") // replay: challenge used
	pc = e.passkeyChallenge(cred, client)
	want(verify(a.assertAt(pc.Challenge, handle, a.counter), pc.RequestID), 401, "UNAUTHORIZED")
	// Another authenticator, the wrong origin, no user verification, another user handle.
	stranger := newAuthenticator(t)
	stranger.id = a.id
	want(verify(stranger.assert(pc.Challenge, handle), pc.RequestID), 401, "UNAUTHORIZED")
	a.origin = "http://evil.example"
	want(verify(a.assert(pc.Challenge, handle), pc.RequestID), 401, "UNAUTHORIZED")
	a.origin = testOrigin
	a.flags = flagUP
	want(verify(a.assert(pc.Challenge, handle), pc.RequestID), 401, "UNAUTHORIZED")
	a.flags = flagUP | flagUV
	want(verify(a.assert(pc.Challenge, []byte("someone-else")), pc.RequestID), 401, "UNAUTHORIZED")
	// The sandbox literal is not a signature in production.
	lit := a.assert(pc.Challenge, handle)
	lit.Signature = sandboxPasskeySignature
	want(verify(lit, pc.RequestID), 401, "UNAUTHORIZED")
	// Expired challenge.
	e.clock.Advance(5*time.Minute + time.Second)
	want(verify(a.assert(pc.Challenge, handle), pc.RequestID), 401, "UNAUTHORIZED")

	// Bad bodies are 400 naming the field.
	r := e.do("POST", "/auth/credentials/"+cred.ID+"/verify", map[string]any{"type": "PASSKEY", "assertion": map[string]any{"credentialId": "***"}}, nil)
	if r.status != 400 {
		t.Fatalf("malformed assertion: %d %s", r.status, r.body)
	}
	fields := fieldNames(t, r)
	for _, f := range []string{"assertion.credentialId", "assertion.clientDataJson", "assertion.authenticatorData", "assertion.signature"} {
		if !fields[f] {
			t.Errorf("no error for %s in %s", f, r.body)
		}
	}
	r = e.do("POST", "/auth/credentials/"+cred.ID+"/challenge", map[string]any{}, nil)
	if r.status != 400 || !fieldNames(t, r)["clientPublicKey"] {
		t.Fatalf("challenge without a key: %d %s", r.status, r.body)
	}
	// An e-mail credential refuses a passkey body.
	r = e.do("POST", "/auth/credentials/"+w.credential.ID+"/verify", passkeyVerifyBody(a.assert(pc.Challenge, handle)), map[string]string{wire.HeaderRequestID: pc.RequestID})
	if r.status != 400 {
		t.Fatalf("passkey body on an EMAIL_OTP credential: %d %s", r.status, r.body)
	}
}

func fieldNames(t *testing.T, r response) map[string]bool {
	t.Helper()
	var body struct {
		Details struct {
			Errors []wire.FieldError `json:"errors"`
		} `json:"details"`
	}
	r.decode(t, &body)
	out := map[string]bool{}
	for _, fe := range body.Details.Errors {
		out[fe.Field] = true
	}
	return out
}

func TestPasskeyChallengeRateLimit(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("rl@example.com")
	k := mustKey(t)
	e.login(w, k)
	cred := e.addPasskey(w, k, newAuthenticator(t))
	client := mustKey(t).PublicKey().CompressedHex()
	e.passkeyChallenge(cred, client)
	r := e.do("POST", "/auth/credentials/"+cred.ID+"/challenge", map[string]any{"clientPublicKey": client}, nil)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "2" || r.errorBody(t).Code != "RATE_LIMITED" {
		t.Fatalf("second challenge at once: %d %v %s", r.status, r.header, r.body)
	}
	e.clock.Advance(2 * time.Second)
	e.passkeyChallenge(cred, client)
}

func TestPasskeyRegistrationRefusals(t *testing.T) {
	e := newEnv(t)
	w := e.newWallet("reg@example.com")
	k := mustKey(t)
	e.login(w, k)
	a := newAuthenticator(t)

	t.Run("every bad field named", func(t *testing.T) {
		r := e.do("POST", "/auth/credentials", map[string]any{
			"type": "PASSKEY", "accountId": "InternalAccount:nope", "nickname": "bad<name>", "challenge": "short",
			"attestation": map[string]any{"credentialId": "", "clientDataJson": "+/", "attestationObject": "AA", "transports": []string{"usb", "carrier-pigeon"}},
		}, nil)
		if r.status != 400 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		fields := fieldNames(t, r)
		for _, f := range []string{"accountId", "nickname", "challenge", "attestation.credentialId", "attestation.clientDataJson", "attestation.transports[1]"} {
			if !fields[f] {
				t.Errorf("no error for %s in %s", f, r.body)
			}
		}
	})
	bad := []struct {
		name   string
		modify func(a *authenticator)
	}{
		{"wrong origin", func(a *authenticator) { a.origin = "https://phish.example" }},
		{"wrong relying party", func(a *authenticator) { a.rpID = "example.org" }},
		{"no user verification", func(a *authenticator) { a.flags = flagUP }},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			b := newAuthenticator(t)
			tc.modify(b)
			challenge := newRegistrationChallenge()
			r := e.do("POST", "/auth/credentials", passkeyBody(w.account.ID, "Key", challenge, b.register(challenge)), nil)
			if r.status != 400 || !fieldNames(t, r)["attestation"] {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	t.Run("clientData challenge differs from the body's", func(t *testing.T) {
		r := e.do("POST", "/auth/credentials", passkeyBody(w.account.ID, "Key", newRegistrationChallenge(), a.register(newRegistrationChallenge())), nil)
		if r.status != 400 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("registration challenge single use", func(t *testing.T) {
		challenge := newRegistrationChallenge()
		body := passkeyBody(w.account.ID, "Key", challenge, a.register(challenge))
		ch := e.firstLeg("POST", "/auth/credentials", body)
		e.mustStatus(e.do("POST", "/auth/credentials", body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID)), http.StatusCreated)
		// The same attestation again: the passkey exists.
		r := e.do("POST", "/auth/credentials", body, nil)
		if r.status != 400 || r.errorBody(t).Code != "PASSKEY_CREDENTIAL_ALREADY_EXISTS" {
			t.Fatalf("duplicate passkey: %d %s", r.status, r.body)
		}
		// Another authenticator replaying the used challenge.
		b := newAuthenticator(t)
		body = passkeyBody(w.account.ID, "Key", challenge, b.register(challenge))
		ch = e.firstLeg("POST", "/auth/credentials", body)
		r = e.do("POST", "/auth/credentials", body, signed(mustStamp(t, k, ch.PayloadToSign), ch.RequestID))
		if r.status != 400 || !fieldNames(t, r)["challenge"] {
			t.Fatalf("used challenge: %d %s", r.status, r.body)
		}
	})
	t.Run("signed-retry refusals", func(t *testing.T) {
		challenge := newRegistrationChallenge()
		body := passkeyBody(w.account.ID, "Key", challenge, newAuthenticator(t).register(challenge))
		e.checkRefusals("POST", "/auth/credentials", body, commonRefusals(t, k, mustKey(t)))
	})
	t.Run("unknown account", func(t *testing.T) {
		challenge := newRegistrationChallenge()
		r := e.do("POST", "/auth/credentials", passkeyBody("InternalAccount:0199a3c4-0000-7000-8000-0000000000aa", "Key", challenge, a.register(challenge)), nil)
		if r.status != 404 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func (e *env) storedCredential(id string) *store.Credential {
	e.t.Helper()
	var c *store.Credential
	err := e.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		c, err = tx.GetCredential(context.Background(), id)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}
