package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/service"
)

// TestSessionDeviceNamed: signed in from (headless) Chromium through the
// whole stack, the session list names this browser as the BFF read its
// User-Agent at sign-in ("Chrome on Linux" and the like), and the Security
// view shows that name as the session's main line.
func TestSessionDeviceNamed(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	b := newBrowser(t)
	s.signIn(b, "device-name@example.com")

	ua, err := chromedp.Run(b, chromedp.Evaluate[string](`navigator.userAgent`))
	if err != nil {
		t.Fatal(err)
	}
	label, err := chromedp.Run(b, chromedp.Poll[string](`(() => {
  const own = [...document.querySelectorAll("#sessions-list > li")].find((li) => li.querySelector(".badge"));
  const main = own && own.querySelector(".session-device");
  return main ? main.textContent : null;
})()`, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("no device name on this browser's session (User-Agent %q): %v", ua, err)
	}
	if !strings.HasPrefix(label, "Chrome on ") && !strings.HasPrefix(label, "Chromium on ") {
		t.Errorf("this browser's session reads %q; want Chrome on its system (User-Agent %q)", label, ua)
	}
}
