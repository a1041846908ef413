package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
	"paywallet/web"
)

// screenSize is a viewport every view is checked at.
type screenSize struct {
	width, height int64
	phone         bool // mobile emulation: touch, portrait, the meta viewport honoured
}

// screenSizes are a laptop's and a phone's (an iPhone 12 to 15's CSS pixels).
var screenSizes = []screenSize{{1280, 800, false}, {390, 844, true}}

func (z screenSize) emulate() chromedp.Action[chromedp.Void] {
	if z.phone {
		return chromedp.EmulateViewport(z.width, z.height, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	return chromedp.EmulateViewport(z.width, z.height)
}

// settleJS resolves once the page has stopped changing: fonts loaded and no
// DOM mutation for 300 ms (data fetched after the view is shown, a list
// filled), or after 3 s whatever happens, since a countdown never rests.
const settleJS = `Promise.all([document.fonts.ready, new Promise((ok) => {
  let quiet;
  const done = () => { observer.disconnect(); clearTimeout(quiet); ok(); };
  const observer = new MutationObserver(() => { clearTimeout(quiet); quiet = setTimeout(done, 300); });
  observer.observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
  quiet = setTimeout(done, 300);
  setTimeout(done, 3000);
})]).then(() => true)`

// settle waits for the page to stop changing (settleJS).
func settle(t *testing.T, ctx context.Context, view string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](settleJS, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("waiting for %s to settle: %v", view, err)
	}
}

// openView loads url in the tab as a typed address, a reload or a shared
// link does, and waits until the wallet shows view and has settled. The
// document must come with HTTP status wantStatus.
func openView(t *testing.T, ctx context.Context, url, view string, wantStatus int64) {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	if resp == nil || resp.Status != wantStatus {
		got := int64(0)
		if resp != nil {
			got = resp.Status
		}
		t.Errorf("%s: HTTP status %d, want %d", url, got, wantStatus)
	}
	waitJS(t, ctx, "the "+view+" view at "+url, `document.body.dataset.view === `+jsString(view))
	settle(t, ctx, view)
}

// TestViewsChecked visits every view of the wallet, at a laptop's and a
// phone's size, with content in every list and detail (a funded sandbox
// wallet, a recipient, a completed payment): each is screenshotted into
// artifacts/e2e and must pass axe-core's WCAG 2.2 AA rules (checkView). The
// signed-out sign-in page and the 404 page are checked too.
//
// At the laptop size every view is loaded from its address (a deep link:
// the wallet starts again on it); at the phone size the views are reached
// by following links inside the running wallet (the History API), so both
// ways a view comes on screen, and what each leaves behind, are checked.
func TestViewsChecked(t *testing.T) {
	s := moneyStack(t)
	ctx := browsertest.New(t, 8*time.Minute)

	for _, z := range screenSizes {
		if err := chromedp.Do(ctx, z.emulate()); err != nil {
			t.Fatal(err)
		}
		// Signed out, any address shows the sign-in.
		openView(t, ctx, s.url+"/activity", "signin", http.StatusOK)
		checkView(t, ctx, "signin")
	}

	if err := chromedp.Do(ctx, screenSizes[0].emulate()); err != nil {
		t.Fatal(err)
	}
	const email = "looker@example.com"
	s.signIn(ctx, email)
	addFunds(t, ctx, "1,000", 100000)
	recipient := addActiveUSDAccount(t, ctx, "12345678", 1)
	payment := sendMoney(t, s, ctx, recipient, "25.00")

	count := func(sel string) string { return `document.querySelectorAll(` + jsString(sel) + `).length > 0` }
	views := []struct {
		path, view string
		status     int64  // of the document, when loaded from the address
		ready      string // what the view shows once its data came
	}{
		{"/", "home", http.StatusOK, count("#recent-list > li")},
		{"/send", "send", http.StatusOK, count("#send-account option:not([value=''])")},
		{"/activity", "activity", http.StatusOK, count("#transactions-list > li")},
		{"/activity/statement", "statement", http.StatusOK, count("#statement-lines > tr")},
		{"/activity/" + payment.ID, "payment", http.StatusOK, count("#tx-facts > div")},
		{"/activity/" + payment.ID + "/receipt", "receipt", http.StatusOK, count("#receipt-facts > div")},
		{"/recipients", "recipients", http.StatusOK, count("#accounts-list > li")},
		{"/recipients/new", "recipient-new", http.StatusOK, count("#account-fields input")},
		{"/recipients/" + recipient, "recipient", http.StatusOK, count("#recipient-detail > *")},
		{"/security", "security", http.StatusOK, count("#sessions-list > li") + " && " + count("#credentials-list > li") + " && " + count("#security-log-list > li") + " && " + count("#limits-current > div")},
		// Signed in, the e-mail's link without its token (the view with a
		// token, signed out, is checked by TestSignOutEverywhereLink).
		{"/sign-out-everywhere", "sign-out-everywhere", http.StatusOK, `!document.getElementById("soe-missing").hidden`},
		{"/no-such-page", "notfound", http.StatusNotFound, "true"},
	}
	// Every view of the table (web.Views) is visited: a new view cannot be
	// left out of the accessibility check.
	listed := map[string]bool{}
	for _, v := range views {
		listed[v.view] = true
	}
	for _, v := range web.Views() {
		if !listed[v.Name] {
			t.Errorf("view %q (%s) of the table of views is not checked here", v.Name, v.Path)
		}
	}

	for _, v := range views {
		openView(t, ctx, s.url+v.path, v.view, v.status)
		waitJS(t, ctx, "the "+v.view+" view's data", v.ready)
		checkView(t, ctx, v.view)
	}

	if err := chromedp.Do(ctx, screenSizes[1].emulate()); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.status == http.StatusNotFound {
			// The router leaves a link to an address that is no view to
			// the browser, which loads it.
			openView(t, ctx, s.url+v.path, v.view, v.status)
		} else {
			goTo(t, ctx, v.path, v.view)
			settle(t, ctx, v.view)
		}
		waitJS(t, ctx, "the "+v.view+" view's data", v.ready)
		checkView(t, ctx, v.view)
	}
}
