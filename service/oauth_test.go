package service

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"paywallet/internal/devoidc"
	"paywallet/service/oidc"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// withIssuer starts a local OIDC issuer on the test clock and trusts it.
func withIssuer(t *testing.T, clk *clock) (*devoidc.Issuer, func(*Config)) {
	t.Helper()
	iss, err := devoidc.Start(devoidc.Config{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	return iss, func(c *Config) {
		c.OIDCProviders = []oidc.Provider{{Issuer: iss.URL(), ClientID: iss.ClientID()}}
	}
}

func nonceFor(clientHex string) string {
	h := sha256.Sum256([]byte(clientHex))
	return hex.EncodeToString(h[:])
}

func (e *env) mint(iss *devoidc.Issuer, c devoidc.Claims) string {
	e.t.Helper()
	if c.IssuedAt.IsZero() {
		c.IssuedAt = e.clock.Now()
	}
	tok, err := iss.Mint(c)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// addOAuth links the issuer identity of email to the wallet.
func (e *env) addOAuth(w wallet, key *walletcrypto.PrivateKey, iss *devoidc.Issuer, email string) wire.AuthMethod {
	e.t.Helper()
	body := map[string]any{"type": "OAUTH", "accountId": w.account.ID,
		"oidcToken": e.mint(iss, devoidc.Claims{Subject: iss.SubjectFor(email), Email: email})}
	ch := e.firstLeg("POST", "/auth/credentials", body)
	if ch.Type != "OAUTH" || !strings.Contains(ch.PayloadToSign, "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS") {
		e.t.Fatalf("challenge %+v", ch)
	}
	r := e.do("POST", "/auth/credentials", body, signed(mustStamp(e.t, key, ch.PayloadToSign), ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var am wire.AuthMethod
	r.decode(e.t, &am)
	return am
}

func TestOAuthLogin(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	iss, trust := withIssuer(t, clk)
	e := newEnv(t, func(c *Config) { c.Now = clk.Now }, trust)
	e.clock = clk
	w := e.newWallet("oa@example.com")
	k := mustKey(t)
	e.login(w, k)
	cred := e.addOAuth(w, k, iss, "oa.person@example.com")
	if cred.Type != "OAUTH" || cred.Nickname != "oa.person@example.com" {
		t.Fatalf("credential %+v", cred)
	}
	if r := e.do("POST", "/auth/credentials/"+cred.ID+"/challenge", map[string]any{}, nil); r.status != 400 {
		t.Fatalf("OAUTH challenge: %d %s", r.status, r.body)
	}

	sub := iss.SubjectFor("oa.person@example.com")
	verify := func(token, clientHex string) response {
		return e.do("POST", "/auth/credentials/"+cred.ID+"/verify",
			map[string]any{"type": "OAUTH", "oidcToken": token, "clientPublicKey": clientHex}, nil)
	}
	client := mustKey(t)
	cHex := client.PublicKey().CompressedHex()
	r := verify(e.mint(iss, devoidc.Claims{Subject: sub, Email: "oa.person@example.com", Nonce: nonceFor(cHex)}), cHex)
	e.mustStatus(r, http.StatusOK)
	var sess wire.Session
	r.decode(t, &sess)
	if sess.Type != "OAUTH" || sess.EncryptedSessionSigningKey != "" || hex.EncodeToString(e.storedSession(sess.ID).PublicKey) != cHex {
		t.Fatalf("session %s", r.body)
	}
	// Uncompressed: a sealed session key.
	legacy := mustKey(t)
	lHex := legacy.PublicKey().UncompressedHex()
	r = verify(e.mint(iss, devoidc.Claims{Subject: sub, Nonce: nonceFor(lHex)}), lHex)
	e.mustStatus(r, http.StatusOK)
	r.decode(t, &sess)
	if _, err := walletcrypto.OpenSessionKey(legacy, sess.EncryptedSessionSigningKey); err != nil {
		t.Fatalf("open the session key: %v", err)
	}

	other, _ := withIssuer(t, clk)
	cases := []struct {
		name   string
		token  string
		status int
	}{
		{"wrong nonce", e.mint(iss, devoidc.Claims{Subject: sub, Nonce: nonceFor(lHex)}), 401},
		{"no nonce", e.mint(iss, devoidc.Claims{Subject: sub}), 401},
		{"another subject", e.mint(iss, devoidc.Claims{Subject: "someone-else", Nonce: nonceFor(cHex)}), 401},
		{"another audience", e.mint(iss, devoidc.Claims{Subject: sub, Nonce: nonceFor(cHex), Audience: "another-client"}), 401},
		{"issued 61 s ago", e.mint(iss, devoidc.Claims{Subject: sub, Nonce: nonceFor(cHex), IssuedAt: clk.Now().Add(-61 * time.Second)}), 401},
		{"expired", e.mint(iss, devoidc.Claims{Subject: sub, Nonce: nonceFor(cHex), IssuedAt: clk.Now().Add(-50 * time.Second), Expiry: clk.Now().Add(-40 * time.Second)}), 401},
		{"signed by an untrusted issuer", e.mint(other, devoidc.Claims{Subject: sub, Nonce: nonceFor(cHex)}), 400},
		{"signed by another key, claiming the trusted issuer", e.mint(other, devoidc.Claims{Issuer: iss.URL(), Subject: sub, Nonce: nonceFor(cHex)}), 401},
		{"malformed", "not.a.jwt", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := verify(tc.token, cHex)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
		})
	}
	// Missing members are named.
	r = e.do("POST", "/auth/credentials/"+cred.ID+"/verify", map[string]any{"type": "OAUTH"}, nil)
	if f := fieldNames(t, r); r.status != 400 || !f["oidcToken"] || !f["clientPublicKey"] {
		t.Fatalf("empty OAUTH body: %d %s", r.status, r.body)
	}
	// The same identity cannot be linked twice; a token from an untrusted
	// issuer is not linked at all.
	body := map[string]any{"type": "OAUTH", "accountId": w.account.ID, "oidcToken": e.mint(iss, devoidc.Claims{Subject: sub})}
	if r := e.do("POST", "/auth/credentials", body, nil); r.status != 400 {
		t.Fatalf("same identity twice: %d %s", r.status, r.body)
	}
	body["oidcToken"] = e.mint(other, devoidc.Claims{Subject: "x"})
	if r := e.do("POST", "/auth/credentials", body, nil); r.status != 400 || !fieldNames(t, r)["oidcToken"] {
		t.Fatalf("untrusted issuer: %d %s", r.status, r.body)
	}
}

// TestSandboxCredentials covers the spec's sandbox rules for the new
// operations: the literal signature completes any signed retry, sealed
// session keys are undecryptable stubs of the right shape, and the
// reference sandbox's unsigned tokens and passkey literal are accepted.
func TestSandboxCredentials(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Mode = ModeSandbox })
	w := e.newWallet("sand@example.com")
	a := newAuthenticator(t)
	challenge := newRegistrationChallenge()
	body := passkeyBody(w.account.ID, "Sandbox key", challenge, a.register(challenge))
	ch := e.firstLeg("POST", "/auth/credentials", body)
	r := e.do("POST", "/auth/credentials", body, signed(wire.SandboxSignature, ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	var cred wire.AuthMethod
	r.decode(t, &cred)

	client := mustKey(t)
	pc := e.passkeyChallenge(cred, client.PublicKey().UncompressedHex())
	handle, _ := wire.WebAuthnUserHandle(w.account.ID)
	assertion := a.assert(pc.Challenge, handle)
	assertion.Signature = sandboxPasskeySignature
	r = e.do("POST", "/auth/credentials/"+cred.ID+"/verify", passkeyVerifyBody(assertion), map[string]string{wire.HeaderRequestID: pc.RequestID})
	e.mustStatus(r, http.StatusOK)
	var sess wire.Session
	r.decode(t, &sess)
	payload, err := walletcrypto.Base58CheckDecode(sess.EncryptedSessionSigningKey)
	if err != nil || len(payload) != 33+48 || (payload[0] != 2 && payload[0] != 3) {
		t.Fatalf("stub %q: %v", sess.EncryptedSessionSigningKey, err)
	}
	if _, err := walletcrypto.OpenSessionKey(client, sess.EncryptedSessionSigningKey); err == nil {
		t.Fatal("the sandbox stub opened")
	}

	// A Google token with a dummy signature links and logs in.
	token := unsignedToken(t, map[string]any{"iss": "https://accounts.google.com", "aud": "sandbox-app", "sub": "g-123",
		"email": "sand@gmail.example", "iat": e.clock.Now().Unix(), "exp": e.clock.Now().Add(time.Hour).Unix()})
	add := map[string]any{"type": "OAUTH", "accountId": w.account.ID, "oidcToken": token}
	ch = e.firstLeg("POST", "/auth/credentials", add)
	r = e.do("POST", "/auth/credentials", add, signed(wire.SandboxSignature, ch.RequestID))
	e.mustStatus(r, http.StatusCreated)
	r.decode(t, &cred)
	cHex := client.PublicKey().CompressedHex()
	token = unsignedToken(t, map[string]any{"iss": "https://accounts.google.com", "aud": "sandbox-app", "sub": "g-123",
		"nonce": nonceFor(cHex), "iat": e.clock.Now().Unix(), "exp": e.clock.Now().Add(time.Hour).Unix()})
	r = e.do("POST", "/auth/credentials/"+cred.ID+"/verify", map[string]any{"type": "OAUTH", "oidcToken": token, "clientPublicKey": cHex}, nil)
	e.mustStatus(r, http.StatusOK)

	// Export completes with the literal too.
	target := mustKey(t)
	exp := map[string]any{"clientPublicKey": target.PublicKey().UncompressedHex()}
	ch = e.firstLeg("POST", "/internal-accounts/"+w.account.ID+"/export", exp)
	e.mustStatus(e.do("POST", "/internal-accounts/"+w.account.ID+"/export", exp, signed(wire.SandboxSignature, ch.RequestID)), http.StatusOK)
}

// unsignedToken is a JWT with a dummy signature, as the reference sandbox
// accepts from its well-known issuers.
func unsignedToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	return b64([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + b64(mustJSON(t, claims)) + "." + b64([]byte("dummy-signature"))
}
