package bff

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"paywallet/shared/wire"
)

func TestRegistrationOptionsAndAddPasskey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if r := h.do("POST", "/api/passkeys/registration-options", "", nil); r.status != 401 {
		t.Fatalf("signed out: %d %s", r.status, r.body)
	}
	account := h.login("pk@example.com").json(t)["accountId"].(string)
	r := h.do("POST", "/api/passkeys/registration-options", "", nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var opts struct {
		PublicKey struct {
			RP        struct{ ID string }
			User      struct{ ID, Name string }
			Challenge string
			Params    []struct{ Alg int } `json:"pubKeyCredParams"`
		}
	}
	if err := json.Unmarshal(r.body, &opts); err != nil {
		t.Fatal(err)
	}
	handle, _ := wire.WebAuthnUserHandle(account)
	if opts.PublicKey.RP.ID != "localhost" || opts.PublicKey.User.ID != base64.RawURLEncoding.EncodeToString(handle) ||
		len(opts.PublicKey.Challenge) < 43 || len(opts.PublicKey.Params) != 1 || opts.PublicKey.Params[0].Alg != -7 {
		t.Fatalf("options %s", r.body)
	}

	// A challenge this browser was not given: refused before the service.
	body := `{"type":"PASSKEY","accountId":"InternalAccount:0199a000-0000-7000-8000-0000000000ee","nickname":"K","challenge":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","attestation":{}}`
	if r := h.do("POST", "/api/auth/credentials", body, nil); r.status != 400 {
		t.Fatalf("foreign challenge: %d %s", r.status, r.body)
	}
	if n := h.upstreamCalls("POST", "/auth/credentials"); n != 0 {
		t.Fatalf("%d calls reached the service", n)
	}
	// The minted one goes through, for the cookie's account whatever the body says.
	body = strings.Replace(body, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", opts.PublicKey.Challenge, 1)
	if r := h.do("POST", "/api/auth/credentials", body, nil); r.status != 202 {
		t.Fatalf("leg 1: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/api/auth/credentials", body, signedHeaders); r.status != 201 {
		t.Fatalf("leg 2: %d %s", r.status, r.body)
	}
	for _, rec := range h.svc.reqs() {
		if rec.method == "POST" && rec.path == wire.BasePath+"/auth/credentials" && !strings.Contains(string(rec.body), `"accountId":"`+account+`"`) {
			t.Errorf("forwarded body %s is not bound to %s", rec.body, account)
		}
	}
	// Used: the challenge is forgotten.
	if r := h.do("POST", "/api/auth/credentials", body, nil); r.status != 400 {
		t.Fatalf("reused challenge: %d %s", r.status, r.body)
	}
}

func TestCredentialAndAccountRoutesAreBound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	me := h.login("bound@example.com").json(t)
	account := me["accountId"].(string)
	own := h.svc.credOf("bound@example.com").ID
	stranger := "AuthMethod:0199a000-0000-7000-8000-0000000000ee"
	otherAccount := "InternalAccount:0199a000-0000-7000-8000-0000000000ee"
	key := `{"clientPublicKey":"04` + strings.Repeat("ab", 64) + `"}`

	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "/api/auth/credentials/" + stranger, ""},
		{"DELETE", "/api/auth/credentials/AuthMethod:nope", ""},
		{"POST", "/api/internal-accounts/" + otherAccount + "/export", key},
		{"PATCH", "/api/internal-accounts/" + otherAccount, `{"privateEnabled":true}`},
	} {
		if r := h.do(c.method, c.path, c.body, signedHeaders); r.status != 404 {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	for _, rec := range h.svc.reqs() {
		if rec.method != "GET" && !strings.HasPrefix(rec.path, wire.BasePath+"/auth/credentials/"+own) &&
			(strings.Contains(rec.path, stranger) || strings.Contains(rec.path, otherAccount)) {
			t.Errorf("%s %s reached the service", rec.method, rec.path)
		}
	}
	if r := h.do("DELETE", "/api/auth/credentials/"+own, "", signedHeaders); r.status != 204 {
		t.Errorf("own credential: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/api/internal-accounts/"+account+"/export", key, signedHeaders); r.status != 200 {
		t.Errorf("own export: %d %s", r.status, r.body)
	}
	if r := h.do("PATCH", "/api/internal-accounts/"+account, `{"privateEnabled":true}`, signedHeaders); r.status != 200 {
		t.Errorf("own PATCH: %d %s", r.status, r.body)
	}
}

func TestPasswordlessLoginsNeedALinkedCredential(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.svc.addCustomer("only-email@example.com")
	key := "02" + strings.Repeat("ab", 32)
	for _, email := range []string{"nobody@example.com", "only-email@example.com"} {
		r := h.do("POST", "/api/login/passkey/start", `{"email":"`+email+`","clientPublicKey":"`+key+`"}`, nil)
		if r.status != 400 || !strings.Contains(string(r.body), "NO_PASSKEY") {
			t.Errorf("passkey start for %s: %d %s", email, r.status, r.body)
		}
		claims := base64.RawURLEncoding.EncodeToString([]byte(`{"email":"` + email + `"}`))
		r = h.do("POST", "/api/login/oauth", `{"oidcToken":"e30.`+claims+`.c2ln","clientPublicKey":"`+key+`"}`, nil)
		if r.status != 400 || !strings.Contains(string(r.body), "NOT_LINKED") {
			t.Errorf("OAuth login for %s: %d %s", email, r.status, r.body)
		}
	}
	if n := h.upstreamCalls("POST", "/customers"); n != 0 {
		t.Errorf("a passwordless login created %d customers", n)
	}
	if r := h.do("POST", "/api/login/passkey/verify", `{"assertion":{}}`, nil); r.status != 400 {
		t.Errorf("verify without a start: %d %s", r.status, r.body)
	}
}
