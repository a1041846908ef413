package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"paywallet/service"
)

// TestOAuthPopupClosedLeavesSignInUsable: a person opens the single
// sign-on pop-up and closes it without signing in. Before, every sign-in
// button stayed disabled under "Waiting for Dev sign-in…" for five minutes
// (the page cannot see a cross-origin pop-up close); now the other ways of
// signing in stay usable, Cancel ends the wait, and an e-mail sign-in
// started during a wait takes over.
func TestOAuthPopupClosedLeavesSignInUsable(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.ID("oauth-login"))); err != nil {
		t.Fatal(err)
	}
	openAndClose := func() {
		t.Helper()
		opened := make(chan target.ID, 1)
		listenCtx, stop := context.WithCancel(ctx)
		defer stop()
		chromedp.ListenBrowser(listenCtx, func(ev any) {
			if e, ok := ev.(*target.EventTargetCreated); ok && e.TargetInfo.Type == "page" && e.TargetInfo.OpenerID != "" {
				select {
				case opened <- e.TargetInfo.TargetID:
				default:
				}
			}
		})
		click(t, ctx, "oauth-login")
		var id target.ID
		select {
		case id = <-opened:
		case <-time.After(15 * time.Second):
			t.Fatal("no sign-in pop-up opened")
		}
		if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			t.Fatalf("closing the pop-up: %v", err)
		}
	}

	openAndClose()
	// At once, not after five minutes: e-mail and Cancel are usable.
	waitJS(t, ctx, "the page to offer Cancel", `!document.getElementById("oauth-cancel").hidden`)
	usable, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("email-submit").disabled && !document.getElementById("email").disabled`))
	if err != nil || !usable {
		t.Fatalf("the e-mail sign-in is disabled while the closed pop-up is waited for (%v)", err)
	}
	click(t, ctx, "oauth-cancel")
	waitJS(t, ctx, "the wait to end", `!document.getElementById("oauth-login").disabled && document.getElementById("oauth-cancel").hidden`)
	if got := textOf(t, ctx, "status"); !strings.Contains(got, "cancelled") {
		t.Errorf("status after Cancel %q", got)
	}

	// Closed again, then the person signs in with an e-mail code instead.
	openAndClose()
	waitJS(t, ctx, "the page to offer Cancel", `!document.getElementById("oauth-cancel").hidden`)
	const email = "changed-mind@example.com"
	typeIn(t, ctx, "email", email)
	click(t, ctx, "email-submit")
	waitJS(t, ctx, "the code step", `!document.getElementById("code-form").hidden`)
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("oauth-cancel").hidden`)); err != nil || !hidden {
		t.Errorf("the single sign-on wait outlived the e-mail sign-in (%v)", err)
	}
	typeIn(t, ctx, "code", s.latestCode(email))
	click(t, ctx, "code-submit")
	waitJS(t, ctx, "Home", `document.body.dataset.view === "home"`)
}
