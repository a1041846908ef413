package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"

	"paywallet/internal/devoidc"
	"paywallet/service"
	"paywallet/shared/walletcrypto"
)

// TestLegacyUncompressedLogin: the deprecated client-key path still works
// end to end in the page's own module, through the BFF, against the
// service. A sign-in with an uncompressed clientPublicKey (a recipient key)
// is answered with an encryptedSessionSigningKey sealed to it; the page's
// module opens it into a non-extractable signing key whose public key is the
// session's, and that key's stamps verify.
func TestLegacyUncompressedLogin(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	const email = "legacy-key@example.com"
	ctx := newBrowser(t)
	s.signIn(ctx, email)
	account := s.accountOf(email)
	goTo(t, ctx, "/security", "security")
	s.oauthPopup(t, ctx, "oauth-link", email)
	waitJS(t, ctx, "the linked identity", `[...document.querySelectorAll("#credentials-list > li")].some((li) => li.dataset.type === "OAUTH")`)
	click(t, ctx, "logout")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}

	evalJSON := func(what, js string, v any) {
		t.Helper()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("%s: %v in %s", what, err, out)
		}
	}
	var recipient struct{ Handle, PublicKeyUncompressed string }
	evalJSON("a recipient key", `globalThis.paywallet.generateKey("recipient").then((k) => JSON.stringify(k))`, &recipient)
	if len(recipient.PublicKeyUncompressed) != 130 {
		t.Fatalf("recipient key %+v", recipient)
	}
	nonce := sha256.Sum256([]byte(recipient.PublicKeyUncompressed))
	token, err := s.issuer.Mint(devoidc.Claims{Email: email, Nonce: hex.EncodeToString(nonce[:])})
	if err != nil {
		t.Fatal(err)
	}
	var login struct {
		Status int
		Body   struct {
			ID                         string
			EncryptedSessionSigningKey string
		}
	}
	body, _ := json.Marshal(map[string]string{"oidcToken": token, "clientPublicKey": recipient.PublicKeyUncompressed})
	evalJSON("the sign-in", `fetch("/api/login/oauth", {method: "POST", headers: {"X-CSRF": "1", "Content-Type": "application/json"}, body: `+jsString(string(body))+`})
  .then(async (r) => JSON.stringify({status: r.status, body: await r.json()}))`, &login)
	if login.Status != 200 || login.Body.EncryptedSessionSigningKey == "" {
		t.Fatalf("sign-in with an uncompressed key: %+v", login)
	}
	var opened struct{ Handle, PublicKey string }
	evalJSON("opening the session key", `globalThis.paywallet.decryptSessionKey(`+jsString(recipient.Handle)+`, `+jsString(login.Body.EncryptedSessionSigningKey)+`).then((k) => JSON.stringify(k))`, &opened)
	active := s.activeSessions(account)
	if len(active) != 1 || active[0].ID != login.Body.ID {
		t.Fatalf("sessions %+v, want the sign-in's %s", active, login.Body.ID)
	}
	if want := sessionKeyHex(t, active[0]); opened.PublicKey != want {
		t.Fatalf("the opened key is %s, the session's %s", opened.PublicKey, want)
	}
	const payload = `{"type":"ACTIVITY_TYPE_STAMP_LOGIN","organizationId":"legacy"}`
	var header string
	evalJSON("a stamp", `globalThis.paywallet.stamp(`+jsString(opened.Handle)+`, `+jsString(payload)+`).then((h) => JSON.stringify(h))`, &header)
	stamp, err := walletcrypto.ParseStamp(header)
	if err != nil {
		t.Fatal(err)
	}
	if stamp.PublicKey.CompressedHex() != opened.PublicKey || stamp.Verify([]byte(payload)) != nil {
		t.Fatalf("the stamp %s does not verify with the session key", header)
	}
}
