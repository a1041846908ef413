package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// These tests drive the page's use of the stored session key (storeSession,
// resumeSession, deleteSession) against the wallet stub, whose stored key is
// shared by the tabs of the origin. e2e/vault_test.go does the same with the
// real module and IndexedDB.

// stubKey is the stub's public key of the n-th key of a tab (with no
// stubKeyBase).
func stubKey(n int) string { return fmt.Sprintf("02%064d", n) }

// sessionNow is the id of the session the fake BFF holds.
func (f *fakeAPI) sessionNow() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessionID()
}

func shownKey(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `document.getElementById("session-public-key").dataset.value`)
}

// TestVaultPageResumesAfterReload: the login stores its key for the
// session; after a reload the page resumes it and can sign with it.
func TestVaultPageResumesAfterReload(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	api.set(func(f *fakeAPI) { f.others = []string{otherSession} })
	ctx := newTab(t)
	signIn(t, ctx, site)
	session := api.sessionNow()
	if !called(walletCalls(t, ctx), "storeSession", "h1", session) {
		t.Fatalf("the login's key was not stored for %s: %v", session, walletCalls(t, ctx))
	}
	var stored struct {
		PublicKey, SessionID string
		ExpiresAtMs          float64
	}
	if err := json.Unmarshal([]byte(eval[string](t, ctx, storedSession)), &stored); err != nil || stored.PublicKey != stubKey(1) || stored.SessionID != session {
		t.Fatalf("stored %+v (%v)", stored, err)
	}
	if !eval[bool](t, ctx, shown("key-not-kept")+` === false`) {
		t.Error("the page says the key was not kept")
	}

	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("signed-in")))
	waitFor(t, ctx, `document.getElementById("session-public-key").dataset.value === `+quote(stubKey(1)))
	if calls := walletCalls(t, ctx); !called(calls, "resumeSession") || called(calls, "generateKey") {
		t.Errorf("after the reload the wallet was asked %v: want the stored key resumed, no new one", calls)
	}
	if !eval[bool](t, ctx, shown("key-missing")+` === false`) {
		t.Error("the page says the key is missing")
	}
	// It signs with the resumed key.
	goTo(t, ctx, "/security", "security")
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 2`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`button[data-revoke="`+otherSession+`"]`)))
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 1`)
	if !called(walletCalls(t, ctx), "stamp", "r1", fakePayload) {
		t.Errorf("the revoke was not signed with the resumed key: %v", walletCalls(t, ctx))
	}

	// Signing out deletes the stored key of the session.
	do(t, ctx, chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	if !called(walletCalls(t, ctx), "deleteSession", session) || eval[string](t, ctx, storedSession) != "null" {
		t.Errorf("the stored key outlived the sign-out: %s; calls %v", eval[string](t, ctx, storedSession), walletCalls(t, ctx))
	}
}

// TestVaultPageStoredKeyOfAnotherSession: a stored key of a session the BFF
// no longer reports is deleted, not used; with no session's key the tab
// shows the sign-in page.
func TestVaultPageStoredKeyOfAnotherSession(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	// The BFF's session changes behind the page's back (as after a login
	// in another browser window whose storage failed).
	api.set(func(f *fakeAPI) { f.logins++ })
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("email")))
	if got := eval[string](t, ctx, storedSession); got != "null" {
		t.Errorf("the key of the old session is still stored: %s", got)
	}
	calls := walletCalls(t, ctx)
	if !called(calls, "resumeSession") || !called(calls, "forget", "r1") {
		t.Errorf("wallet calls %v: want the stored key resumed, then wiped", calls)
	}
	if got := text(t, ctx, "status"); !strings.Contains(got, "Sign in again") {
		t.Errorf("status %q", got)
	}
	if n := len(api.requests("/api/logout")); n != 0 {
		t.Errorf("%d POST /api/logout: the cookie session is not this tab's to end", n)
	}
}

// TestVaultPageStoreRefused: where the browser keeps no keys, the login
// works, the page says once that a reload signs the person out, the tab
// signs with the key in its memory, and after a reload the sign-in page is
// shown.
func TestVaultPageStoreRefused(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	api.set(func(f *fakeAPI) { f.others = []string{otherSession} })
	ctx := newTab(t, refuseStore)
	signIn(t, ctx, site)
	waitFor(t, ctx, shown("key-not-kept"))
	if got := strings.Join(strings.Fields(text(t, ctx, "key-not-kept")), " "); !strings.Contains(got, "does not let the wallet keep your sign-in") || !strings.Contains(got, "reloading or closing this tab will sign you out") {
		t.Errorf("#key-not-kept %q", got)
	}
	if got := shownKey(t, ctx); got != stubKey(1) {
		t.Errorf("key %q", got)
	}
	goTo(t, ctx, "/security", "security")
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 2`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`button[data-revoke="`+otherSession+`"]`)))
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 1`)
	if !called(walletCalls(t, ctx), "stamp", "h1", fakePayload) {
		t.Errorf("the revoke was not signed: %v", walletCalls(t, ctx))
	}
	if !eval[bool](t, ctx, shown("key-not-kept")) {
		t.Error("the note went away while the key is still not kept")
	}

	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("email")))
	waitFor(t, ctx, `document.getElementById("status").textContent.includes("not kept in this browser")`)
	if eval[bool](t, ctx, shown("signed-in")) {
		t.Error("the wallet is shown without a key")
	}
}

// TestVaultPageTwoTabsRefreshOnce: two tabs whose session nears its end
// make one refresh between them (Web Lock): the one that comes second takes
// the key the first stored, and both then sign with it.
func TestVaultPageTwoTabsRefreshOnce(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	a := newTab(t)
	signIn(t, a, site)
	old := shownKey(t, a)
	b := anotherTab(t, a, `globalThis.stubKeyBase = 500;`)
	do(t, b, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.ID("signed-in")))
	// The wallet is drawn before the key is resumed (draw first, keys after).
	waitFor(t, b, `document.getElementById("session-public-key").dataset.value !== ""`)
	if got := shownKey(t, b); got != old {
		t.Fatalf("tab B shows key %q, want %q", got, old)
	}

	// A minute left, seen by both tabs at once.
	api.set(func(f *fakeAPI) { f.expiresIn = 60 })
	for _, tab := range []context.Context{a, b} {
		do(t, tab, chromedp.Evaluate[chromedp.Void](`document.dispatchEvent(new Event("visibilitychange"))`))
	}
	waitFor(t, a, `document.getElementById("session-public-key").dataset.value !== `+quote(old))
	fresh := shownKey(t, a)
	waitFor(t, b, `document.getElementById("session-public-key").dataset.value === `+quote(fresh))

	var refreshes []apiCall
	for _, c := range api.requests("") {
		if strings.HasSuffix(c.path, "/refresh") {
			refreshes = append(refreshes, c)
		}
	}
	if len(refreshes) != 2 || refreshes[1].header.Get("Service-Wallet-Signature") == "" {
		var seen []string
		for _, c := range refreshes {
			seen = append(seen, c.body+" signed="+c.header.Get("Service-Wallet-Signature"))
		}
		t.Errorf("%d refresh calls, want one signed retry (2 calls):\n%s", len(refreshes), strings.Join(seen, "\n"))
	}
	var stored struct{ PublicKey, SessionID string }
	if err := json.Unmarshal([]byte(eval[string](t, b, storedSession)), &stored); err != nil || stored.PublicKey != fresh || stored.SessionID != api.sessionNow() {
		t.Errorf("stored %+v (%v), want key %s of %s", stored, err, fresh, api.sessionNow())
	}
	// Both countdowns start again from the new session.
	for _, tab := range []context.Context{a, b} {
		waitFor(t, tab, `document.getElementById("session-expiry").textContent.startsWith("14:") || document.getElementById("session-expiry").textContent.startsWith("15:")`)
	}
}
