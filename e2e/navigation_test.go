package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/service"
)

// TestPageLoadsDoNotQueueBehindStreams loads the views by their addresses,
// one full page load after another, as a person typing addresses or
// following bookmarks does. Each page opens its event stream; a page left
// may sit in the back/forward cache, and before, its stream stayed open
// there: after five such pages the sixth load waited for one of HTTP/1.1's
// six connections to the site, and /send took 57 s to load. Each load here
// must finish well within 20 s (it takes under a second).
func TestPageLoadsDoNotQueueBehindStreams(t *testing.T) {
	s := startStack(t, service.ModeSandbox)
	ctx := newBrowser(t)
	s.signIn(ctx, "many-pages@example.com")
	views := []struct{ path, name string }{
		{"/recipients", "recipients"}, {"/", "home"}, {"/recipients/new", "recipient-new"},
		{"/activity", "activity"}, {"/security", "security"}, {"/send", "send"}, {"/recipients", "recipients"}, {"/", "home"},
	}
	for _, v := range views {
		load, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := chromedp.Do(load, chromedp.Navigate(s.url+v.path))
		if err == nil {
			_, err = chromedp.Run(load, chromedp.Poll[bool](`document.body.dataset.view === "`+v.name+`"`, chromedp.WithPollingInterval(50*time.Millisecond)))
		}
		cancel()
		if err != nil {
			t.Fatalf("loading %s: %v", v.path, err)
		}
	}
}
