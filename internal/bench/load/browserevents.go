package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"paywallet/bff"
	"paywallet/internal/browsertest"
	"paywallet/shared/webhooksig"
)

// streamTypes are the event types the latency run listens for: every
// type a payment and its settlement produce (the stream names each event
// by its type, so an EventSource hears only the types it listens for).
var streamTypes = []string{
	webhooksig.OutgoingPaymentPending, webhooksig.OutgoingPaymentProcessing, webhooksig.OutgoingPaymentCompleted,
	webhooksig.OutgoingPaymentFailed, webhooksig.OutgoingPaymentExpired, webhooksig.OutgoingPaymentRefundCompleted,
	webhooksig.IncomingPaymentCompleted, webhooksig.InternalAccountBalanceUpdated, webhooksig.InternalAccountStatusUpdated,
}

// bindingName is the page function that hands each event to Go (a CDP
// binding: the page calls it, the harness hears Runtime.bindingCalled).
const bindingName = "benchEventArrived"

// openBrowserEvents opens GET /api/events in a headless Chromium page with
// an EventSource, as the wallet page does, signed in with cookie (the
// BFF's session cookie, set in the browser as the BFF set it: Secure,
// HttpOnly, SameSite=Strict), and passes each event on. The arrival time
// is taken in the page when the EventSource delivers the event
// (performance.timeOrigin + performance.now(), the machine's clock, as the
// event's timestamp is), so the time the harness takes to hear of it does
// not count. The channel closes when ctx ends or the stream fails; close
// stops the browser.
func openBrowserEvents(ctx context.Context, base, cookie string) (<-chan arrival, func(), error) {
	name, value, ok := strings.Cut(cookie, "=")
	if !ok || name != bff.CookieName {
		return nil, nil, fmt.Errorf("not a session cookie: %q", cookie)
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, nil, err
	}
	profile, err := os.MkdirTemp("", "paywallet-events-browser-")
	if err != nil {
		return nil, nil, err
	}
	tab, cancel, err := browsertest.Launch(ctx, "", profile)
	if err != nil {
		os.RemoveAll(profile)
		return nil, nil, err
	}
	closeAll := func() {
		cancel()
		os.RemoveAll(profile)
	}
	out := make(chan arrival, 1024)
	listenErr := chromedp.Listen(tab, func(ev any) {
		b, ok := ev.(*cdpruntime.EventBindingCalled)
		if !ok || b.Name != bindingName {
			return
		}
		var got struct {
			At   float64 `json:"at"`
			Type string  `json:"type"`
			Data string  `json:"data"`
		}
		if json.Unmarshal([]byte(b.Payload), &got) != nil {
			return
		}
		var event struct {
			Timestamp string
			Data      struct{ ID string }
		}
		if json.Unmarshal([]byte(got.Data), &event) != nil {
			return
		}
		ts, err := time.Parse(time.RFC3339Nano, event.Timestamp)
		if err != nil {
			return
		}
		a := arrival{at: time.UnixMicro(int64(got.At * 1000)), timestamp: ts, typ: got.Type, resource: event.Data.ID}
		select {
		case out <- a:
		default: // the run reads far faster than events come; never block the CDP reader
		}
	})
	fail := func(what string, err error) (<-chan arrival, func(), error) {
		closeAll()
		return nil, nil, fmt.Errorf("events in the browser: %s: %w", what, err)
	}
	if listenErr != nil {
		return fail("listen to the page", listenErr)
	}
	yes := true
	if _, err := chromedp.Call(tab, network.SetCookie, network.SetCookieParams{
		Name: name, Value: value, URL: base, Domain: u.Hostname(), Path: "/",
		Secure: &yes, HTTPOnly: &yes, SameSite: network.CookieSameSiteStrict,
	}); err != nil {
		return fail("set the session cookie", err)
	}
	// A page of the BFF's origin (the wallet's icon: nothing in it runs),
	// so that the EventSource is same-origin and sends the cookie.
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/favicon.svg")); err != nil {
		return fail("open a page of the BFF", err)
	}
	if _, err := chromedp.Call(tab, cdpruntime.AddBinding, cdpruntime.AddBindingParams{Name: bindingName}); err != nil {
		return fail("add the binding", err)
	}
	types, _ := json.Marshal(streamTypes)
	script := fmt.Sprintf(`new Promise((resolve, reject) => {
  const es = new EventSource("/api/events");
  for (const type of %s) {
    es.addEventListener(type, (e) => {
      const at = performance.timeOrigin + performance.now();
      globalThis[%q](JSON.stringify({ at, type, data: e.data }));
    });
  }
  es.addEventListener("open", () => resolve(true), { once: true });
  es.addEventListener("error", () => { if (es.readyState === EventSource.CLOSED) reject(new Error("the event stream was refused")); }, { once: true });
})`, types, bindingName)
	octx, ocancel := context.WithTimeout(tab, 30*time.Second)
	defer ocancel()
	if _, err := chromedp.Run(octx, chromedp.Evaluate[bool](script, chromedp.EvalAwaitPromise)); err != nil {
		return fail("open the EventSource", err)
	}
	return out, closeAll, nil
}
