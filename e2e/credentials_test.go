package e2e

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"paywallet/service"
	"paywallet/service/bip39"
	"paywallet/service/store"
)

// addAuthenticator gives the browser's tab a CDP virtual authenticator: a
// platform passkey provider with user verification, answering at once.
func addAuthenticator(t *testing.T, ctx context.Context) webauthn.AuthenticatorID {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{EnableUI: new(false)}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	res, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol:                    webauthn.AuthenticatorProtocolCtap2,
			Ctap2version:                webauthn.Ctap2versionCtap21,
			Transport:                   webauthn.AuthenticatorTransportInternal,
			HasResidentKey:              true,
			HasUserVerification:         true,
			IsUserVerified:              true,
			AutomaticPresenceSimulation: true,
		},
	})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return res.AuthenticatorID
}

// credentials returns the account's credentials as the store holds them.
func (s *stack) credentials(accountID string) []store.Credential {
	s.t.Helper()
	var out []store.Credential
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.ListCredentials(context.Background(), accountID)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func waitJS(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("[role=alert]:not([hidden]), #status")].map((e) => e.textContent).join(" | ")`))
		t.Fatalf("waiting for %s: %v (page says: %s)", what, err, status)
	}
}

// TestPasskeyRegisterThenSignIn: sign in by e-mail, add a passkey, sign
// out, sign in with the passkey (a real WebAuthn ceremony with Chromium's
// virtual authenticator), then export and reveal the recovery phrase and
// remove the e-mail login from the passkey session.
func TestPasskeyRegisterThenSignIn(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	const email = "passkey-person@example.com"
	ctx := newBrowser(t)
	addAuthenticator(t, ctx)
	s.signIn(ctx, email)
	account := s.accountOf(email)
	goTo(t, ctx, "/security", "security")

	waitJS(t, ctx, "the sign-in methods", `document.querySelectorAll("#credentials-list > li").length === 1`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("passkey-name"), "Test laptop")); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "passkey-add")
	waitJS(t, ctx, "the passkey in the list", `[...document.querySelectorAll("#credentials-list > li")].some((li) => li.dataset.type === "PASSKEY")`)
	var passkey store.Credential
	for _, c := range s.credentials(account) {
		if c.Type == "PASSKEY" {
			passkey = c
		}
	}
	if passkey.Nickname != "Test laptop" || passkey.CredentialID == "" || len(passkey.Passkey) == 0 {
		t.Fatalf("stored passkey %+v", passkey)
	}

	click(t, ctx, "logout")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}
	if n := len(s.activeSessions(account)); n != 0 {
		t.Fatalf("%d sessions after signing out", n)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("email").value = ""`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("email"), email)); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "passkey-login")
	waitJS(t, ctx, "the passkey sign-in", `!document.getElementById("signed-in").hidden`)
	active := s.activeSessions(account)
	if len(active) != 1 || active[0].Type != "PASSKEY" || active[0].CredentialID != passkey.ID {
		t.Fatalf("sessions after the passkey login: %+v", active)
	}
	// The page's key is the session key (client-held).
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("session-public-key").dataset.value`))
	if err != nil || !strings.EqualFold(shown, hex.EncodeToString(active[0].PublicKey)) {
		t.Fatalf("page key %q, session key %x (%v)", shown, active[0].PublicKey, err)
	}
	for _, c := range s.credentials(account) {
		if c.ID == passkey.ID && c.SignCount <= passkey.SignCount {
			t.Errorf("sign count %d did not advance past %d", c.SignCount, passkey.SignCount)
		}
	}

	// Export: the phrase stays in the wallet module until "Reveal".
	goTo(t, ctx, "/security", "security")
	click(t, ctx, "export-start")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("export-reveal"))); err != nil {
		t.Fatal(err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#export-words li").length`)); n != 0 {
		t.Fatalf("%d words on the page before Reveal", n)
	}
	revealPhrase(t, ctx)
	waitJS(t, ctx, "the words to go", `document.querySelectorAll("#export-words li").length === 0`)

	// The passkey session removes the e-mail login; the last method stays.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.confirm = () => true, true)`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#credentials-list li[data-type="EMAIL_OTP"] button`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "one method left", `document.querySelectorAll("#credentials-list > li").length === 1`)
	left := s.credentials(account)
	if len(left) != 1 || left[0].ID != passkey.ID {
		t.Fatalf("credentials left: %+v", left)
	}
	if disabled, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#credentials-list li button").disabled`)); !disabled {
		t.Error("the last sign-in method can be removed")
	}
}

// TestOAuthLinkThenSignIn: link the local OpenID Connect issuer from the
// signed-in page (a real pop-up and the issuer's own sign-in form), sign
// out, and sign in with it.
func TestOAuthLinkThenSignIn(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	const email = "sso-person@example.com"
	ctx := newBrowser(t)
	s.signIn(ctx, email)
	account := s.accountOf(email)
	goTo(t, ctx, "/security", "security")

	s.oauthPopup(t, ctx, "oauth-link", email)
	waitJS(t, ctx, "the linked identity", `[...document.querySelectorAll("#credentials-list > li")].some((li) => li.dataset.type === "OAUTH")`)
	var linked store.Credential
	for _, c := range s.credentials(account) {
		if c.Type == "OAUTH" {
			linked = c
		}
	}
	if linked.OIDCIssuer != s.issuer.URL() || linked.OIDCSubject != s.issuer.SubjectFor(email) || linked.Nickname != email {
		t.Fatalf("linked %+v", linked)
	}

	click(t, ctx, "logout")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}
	s.oauthPopup(t, ctx, "oauth-login", email)
	waitJS(t, ctx, "the OAuth sign-in", `!document.getElementById("signed-in").hidden`)
	active := s.activeSessions(account)
	if len(active) != 1 || active[0].Type != "OAUTH" || active[0].CredentialID != linked.ID {
		t.Fatalf("sessions after the OAuth login: %+v", active)
	}
	// The OAuth login's key is kept: a reload resumes it.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if got, want := waitSignedInWithKey(t, ctx), sessionKeyHex(t, active[0]); got != want {
		t.Errorf("after the reload the page shows key %s, want the OAuth session's %s", got, want)
	}
}

// oauthPopup clicks the button that opens the sign-in pop-up, and signs in
// there as email on the local issuer's page.
func (s *stack) oauthPopup(t *testing.T, ctx context.Context, button, email string) {
	t.Helper()
	opened := chromedp.WaitNewTarget(ctx, func(info *target.Info) bool { return strings.Contains(info.URL, "/authorize") })
	click(t, ctx, button)
	var id target.ID
	select {
	case id = <-opened:
	case <-time.After(15 * time.Second):
		t.Fatal("no sign-in pop-up opened")
	}
	// Not cancelled: cancelling would close the pop-up before the issuer's
	// redirect reaches the wallet; the pop-up closes itself when done.
	popup, _ := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
	if err := chromedp.Do(popup,
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.Click(chromedp.ID("signin")),
	); err != nil {
		t.Fatalf("the issuer's sign-in page: %v", err)
	}
}

// revealPhrase clicks "Reveal" on a finished export, checks that the page
// shows 24 words forming a valid BIP-39 phrase, and hides them again.
func revealPhrase(t *testing.T, ctx context.Context) {
	t.Helper()
	click(t, ctx, "export-reveal")
	waitJS(t, ctx, "the words", `document.querySelectorAll("#export-words li").length === 24`)
	words, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#export-words li")].map((li) => li.textContent).join(" ")`))
	if err != nil || !bip39.Valid(words) {
		t.Fatalf("revealed %q is not a BIP-39 phrase (%v)", words, err)
	}
	click(t, ctx, "export-hide")
}
