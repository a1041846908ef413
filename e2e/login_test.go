package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"paywallet/service"
	"paywallet/shared/walletcrypto"
)

// TestEmailOTPLogin walks a person through the whole e-mail OTP login in
// Chromium: the key is generated in the wasm module, the code is read from
// the dev mailbox, sealed and stamped in the browser, and the page ends
// signed in. The service must then hold an active session whose public key
// is the one the page generated.
func TestEmailOTPLogin(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := newBrowser(t)
	const email = "ada@example.com"

	s.signIn(ctx, email)
	goTo(t, ctx, "/security", "security")

	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("me-email")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(shown) != email {
		t.Fatalf("page shows e-mail %q", shown)
	}
	account := s.accountOf(email)
	shownAccount, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("account-id")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(shownAccount) != account {
		t.Fatalf("page shows account %q, service has %q", shownAccount, account)
	}
	expiry, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("session-expiry")))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`1[45]:[0-5][0-9]`).MatchString(expiry) {
		t.Fatalf("session countdown shows %q, want about 15 minutes", expiry)
	}

	// The page's key is the session key the service holds.
	pageKey, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("session-public-key").dataset.value`))
	if err != nil {
		t.Fatal(err)
	}
	sessions := s.activeSessions(account)
	if len(sessions) != 1 {
		t.Fatalf("%d active sessions, want 1", len(sessions))
	}
	held, err := walletcrypto.ParsePublicKey(sessions[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	shownKey, err := walletcrypto.ParsePublicKeyHex(pageKey)
	if err != nil {
		t.Fatalf("page key %q: %v", pageKey, err)
	}
	if !held.Equal(shownKey) {
		t.Fatalf("service session key %s is not the page's key %s", held.CompressedHex(), pageKey)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 gives PNG; lower gives JPEG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), "signed-in.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// On a phone-sized screen nothing spills sideways.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if overflow {
		t.Error("the signed-in page scrolls sideways at 390 px wide")
	}
	png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), "signed-in-phone.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWrongCodeShowsErrorAndNoSession: a wrong code is reported on the page,
// the person stays on the code step, and no session exists.
func TestWrongCodeShowsErrorAndNoSession(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := newBrowser(t)
	const email = "grace@example.com"
	s.startLogin(ctx, email)
	wrong := "000000"
	if s.latestCode(email) == wrong {
		wrong = "111111"
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), wrong),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("code-error")),
	); err != nil {
		t.Fatal(err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("code-error")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(msg) == "" {
		t.Fatal("the code error is empty")
	}
	signedIn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const el = document.getElementById("signed-in"); return !!el && el.offsetParent !== null; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if signedIn {
		t.Fatal("the page shows the signed-in view after a wrong code")
	}
	if n := len(s.activeSessions(s.accountOf(email))); n != 0 {
		t.Fatalf("%d sessions after a wrong code", n)
	}
}
