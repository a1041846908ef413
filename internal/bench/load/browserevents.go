package load

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
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

// browserStream is GET /api/events held open in a Chromium page.
type browserStream struct {
	// events carries each event the page's EventSource delivered; it is
	// never closed (a failed stream shows in problems).
	events <-chan arrival
	close  func()

	mu     sync.Mutex
	issues []string // what went wrong with the stream, in order
}

// problems lists what went wrong with the stream since it opened: the
// EventSource's errors (a dropped connection, which it would reconnect
// after a pause counted as latency), the BFF's resync and signed-out
// events, and events the harness could not keep.
func (b *browserStream) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.issues)
}

func (b *browserStream) problem(s string) {
	b.mu.Lock()
	b.issues = append(b.issues, s)
	b.mu.Unlock()
}

// openBrowserEvents opens GET /api/events in a headless Chromium page with
// an EventSource, as the wallet page does, signed in with cookie (the
// BFF's session cookie, set in the browser as the BFF set it: Secure,
// HttpOnly, SameSite=Strict, host-only), and passes each event on. The
// arrival time is taken in the page when the EventSource delivers the
// event (performance.timeOrigin + performance.now(), the machine's clock,
// as the event's timestamp is), so the time the harness takes to hear of
// it does not count.
func openBrowserEvents(ctx context.Context, base, cookie string) (*browserStream, error) {
	name, value, ok := strings.Cut(cookie, "=")
	if !ok || name != bff.CookieName {
		return nil, fmt.Errorf("not a session cookie: %q", cookie)
	}
	profile, err := os.MkdirTemp("", "paywallet-events-browser-")
	if err != nil {
		return nil, err
	}
	tab, cancel, err := browsertest.Launch(ctx, "", profile)
	if err != nil {
		_ = browsertest.RemoveProfile(profile)
		return nil, err
	}
	out := make(chan arrival, 4096)
	b := &browserStream{events: out, close: func() {
		cancel()
		_ = browsertest.RemoveProfile(profile)
	}}
	listenErr := chromedp.Listen(tab, func(ev any) {
		call, ok := ev.(*cdpruntime.EventBindingCalled)
		if !ok || call.Name != bindingName {
			return
		}
		var got struct {
			At      float64 `json:"at"`
			Type    string  `json:"type"`
			Data    string  `json:"data"`
			Problem string  `json:"problem"`
		}
		if err := json.Unmarshal([]byte(call.Payload), &got); err != nil {
			b.problem("an unreadable message from the page: " + err.Error())
			return
		}
		if got.Problem != "" {
			b.problem(got.Problem)
			return
		}
		var event struct {
			Timestamp string
			Data      struct{ ID string }
		}
		if err := json.Unmarshal([]byte(got.Data), &event); err != nil {
			b.problem("a " + got.Type + " event that is not JSON: " + err.Error())
			return
		}
		ts, err := time.Parse(time.RFC3339Nano, event.Timestamp)
		if err != nil {
			b.problem("a " + got.Type + " event without a timestamp: " + err.Error())
			return
		}
		select {
		case out <- arrival{at: time.UnixMicro(int64(got.At * 1000)), timestamp: ts, typ: got.Type, resource: event.Data.ID}:
		default:
			// Never block the CDP reader; the run reads far faster than
			// events come, so this is a failure, not a sample to lose.
			b.problem("the harness fell behind and dropped an event")
		}
	})
	fail := func(what string, err error) (*browserStream, error) {
		b.close()
		return nil, fmt.Errorf("events in the browser: %s: %w", what, err)
	}
	if listenErr != nil {
		return fail("listen to the page", listenErr)
	}
	yes := true
	if _, err := chromedp.Call(tab, network.SetCookie, network.SetCookieParams{
		Name: name, Value: value, URL: base, Path: "/",
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
  const tell = (message) => globalThis[%[2]q](JSON.stringify(message));
  const es = new EventSource("/api/events");
  for (const type of %[1]s) {
    es.addEventListener(type, (e) => {
      const at = performance.timeOrigin + performance.now();
      tell({ at, type, data: e.data });
    });
  }
  // The BFF's own events: the stream lost events (resync) or the session ended.
  for (const type of ["resync", "signed-out"]) {
    es.addEventListener(type, () => tell({ problem: "the stream sent " + type }));
  }
  let opened = false;
  es.addEventListener("open", () => { opened = true; resolve(true); }, { once: true });
  es.addEventListener("error", () => {
    if (!opened) {
      if (es.readyState === EventSource.CLOSED) reject(new Error("the event stream was refused"));
      return;
    }
    tell({ problem: "the event stream failed (EventSource readyState " + es.readyState + ")" });
  });
})`, types, bindingName)
	octx, ocancel := context.WithTimeout(tab, 30*time.Second)
	defer ocancel()
	if _, err := chromedp.Run(octx, chromedp.Evaluate[bool](script, chromedp.EvalAwaitPromise)); err != nil {
		return fail("open the EventSource", err)
	}
	return b, nil
}
