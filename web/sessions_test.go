package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const otherSession = "Session:0199a000-0000-7000-8000-0000000000ff"

// TestSessionsPanel: the panel lists this device's session and another one;
// "Sign out" on the other revokes it with a signed retry stamped by this
// tab's key, and the list follows.
func TestSessionsPanel(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	api.set(func(f *fakeAPI) { f.others = []string{otherSession} })
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/security", "security")
	waitFor(t, ctx, shown("sessions"))
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 2`)
	if got := eval[string](t, ctx, `document.querySelector("#sessions-list > li:first-child .badge").textContent`); got != "This device" {
		t.Errorf("first session badge %q", got)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`button[data-revoke="`+otherSession+`"]`)))
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 1`)

	deletes := api.requests("/api/auth/sessions/" + otherSession)
	if len(deletes) != 2 || deletes[0].method != "DELETE" || deletes[0].header.Get("Service-Wallet-Signature") != "" {
		t.Fatalf("calls %+v: want an unsigned DELETE then the signed retry", deletes)
	}
	if got := deletes[1].header.Get("Service-Wallet-Signature"); got != "stamp-of-"+fakePayload || deletes[1].header.Get("Request-Id") != fakeReqID {
		t.Errorf("retry headers %q %q", got, deletes[1].header.Get("Request-Id"))
	}
	if !called(walletCalls(t, ctx), "stamp", "h1", fakePayload) {
		t.Error("the revoke was not stamped with this tab's key")
	}
	if !eval[bool](t, ctx, shown("signed-in")) {
		t.Error("revoking another session signed this tab out")
	}
}

// TestSessionsShowDevices: each session reads as the device the BFF named
// ("Chrome on macOS"), this tab's own with its badge; a session without a
// device (signed in from the CLI) reads as before; the revoke button says
// which device it signs out.
func TestSessionsShowDevices(t *testing.T) {
	t.Parallel()
	const cliSession = "Session:0199a000-0000-7000-8000-0000000000fe"
	site, api := startSite(t)
	api.set(func(f *fakeAPI) {
		f.others = []string{otherSession, cliSession}
		f.devices = map[string]string{
			"":           `{"browser":"Chrome 131","os":"macOS","label":"Chrome on macOS"}`,
			otherSession: `{"browser":"Firefox 133","os":"Windows","label":"Firefox on Windows"}`,
		}
	})
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/security", "security")
	waitFor(t, ctx, shown("sessions"))
	waitFor(t, ctx, `document.querySelectorAll("#sessions-list > li").length === 3`)

	type item struct{ Main, When, Badge, Revoke string }
	items := eval[map[string]item](t, ctx, `Object.fromEntries([...document.querySelectorAll("#sessions-list > li")].map((li) => [li.dataset.id, {
		Main: li.querySelector(".session-kind").textContent,
		When: li.querySelector(".session-when").textContent,
		Badge: li.querySelector(".badge") ? li.querySelector(".badge").textContent : "",
		Revoke: li.querySelector("button[data-revoke]") ? li.querySelector("button[data-revoke]").getAttribute("aria-label") : "",
	}]))`)
	own := eval[string](t, ctx, `document.querySelector("#sessions-list > li:first-child").dataset.id`)

	if it := items[own]; it.Main != "Chrome on macOS" || it.Badge != "This device" || !strings.HasPrefix(it.When, "E-mail code, signed in ") {
		t.Errorf("this tab's session reads %+v; want Chrome on macOS, This device, then the kind and times", it)
	}
	if it := items[otherSession]; it.Main != "Firefox on Windows" || it.Badge != "" || !strings.HasPrefix(it.Revoke, "Sign out the session on Firefox on Windows, E-mail code, signed in ") {
		t.Errorf("another device's session reads %+v; want Firefox on Windows and a button naming it", it)
	}
	if it := items[cliSession]; it.Main != "E-mail code" || !strings.HasPrefix(it.When, "signed in ") || !strings.HasPrefix(it.Revoke, "Sign out the e-mail code session signed in ") {
		t.Errorf("a session without a device reads %+v; want the kind of sign-in, as before", it)
	}
	// An end on another day than the start is dated, not a bare time.
	if it := items[own]; !strings.Contains(it.When, "2099") {
		t.Errorf("this tab's session reads %q: its end (1 Jan 2099) without its date", it.When)
	}
}

// TestLogoutRevokesSession: "Sign out" first revokes this tab's wallet
// session with a signed DELETE, then ends the cookie session.
func TestLogoutRevokesSession(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	// The list of sessions is asked for once the signed-in page is drawn.
	waitFor(t, ctx, `!!document.querySelector("#sessions-list > li")`)
	own := eval[string](t, ctx, `document.querySelector("#sessions-list > li").dataset.id`)
	do(t, ctx, chromedp.Click(chromedp.ID("logout")))
	waitFor(t, ctx, shown("login"))
	// The login is shown first, then the cookie session is ended: wait for
	// that request to arrive.
	for deadline := time.Now().Add(5 * time.Second); len(api.requests("/api/logout")) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}

	var order []string
	for _, c := range api.requests("") {
		if c.method == "DELETE" || c.path == "/api/logout" {
			order = append(order, c.method+" "+c.path+" "+c.header.Get("Service-Wallet-Signature"))
		}
	}
	want := []string{
		"DELETE /api/auth/sessions/" + own + " ",
		"DELETE /api/auth/sessions/" + own + " stamp-of-" + fakePayload,
		"POST /api/logout ",
	}
	if own == "" || strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	if !called(walletCalls(t, ctx), "forget", "h1") {
		t.Error("the key was not wiped")
	}
}

// TestSessionRefreshedBeforeExpiry: with a minute left, the page makes a new
// key, refreshes the session with a retry signed by the old key, switches to
// the new key and wipes the old one; the countdown starts again.
func TestSessionRefreshedBeforeExpiry(t *testing.T) {
	t.Parallel()
	site, api := startSite(t)
	api.set(func(f *fakeAPI) { f.expiresIn = 60 })
	ctx := newTab(t)
	signIn(t, ctx, site)
	waitFor(t, ctx, `document.getElementById("session-public-key").dataset.value === "02`+strings.Repeat("0", 63)+`2"`)

	var refreshes []apiCall
	for _, c := range api.requests("") {
		if strings.HasSuffix(c.path, "/refresh") {
			refreshes = append(refreshes, c)
		}
	}
	if len(refreshes) != 2 || refreshes[1].header.Get("Service-Wallet-Signature") != "stamp-of-"+fakePayload {
		t.Fatalf("refresh calls %+v", refreshes)
	}
	var body struct{ ClientPublicKey string }
	if err := json.Unmarshal([]byte(refreshes[1].body), &body); err != nil || body.ClientPublicKey != "02"+strings.Repeat("0", 63)+"2" {
		t.Errorf("refresh body %s", refreshes[1].body)
	}
	if refreshes[0].body != refreshes[1].body {
		t.Errorf("the legs' bodies differ: %s / %s", refreshes[0].body, refreshes[1].body)
	}
	calls := walletCalls(t, ctx)
	if !called(calls, "stamp", "h1", fakePayload) || !called(calls, "forget", "h1") {
		t.Errorf("wallet calls %v: want the old key h1 to sign, then be wiped", calls)
	}
	waitFor(t, ctx, `document.getElementById("session-expiry").textContent.startsWith("14:") || document.getElementById("session-expiry").textContent.startsWith("15:")`)
	if n := len(refreshes); n != 2 {
		t.Errorf("%d refresh calls", n)
	}
}
