package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"paywallet/service"
)

// TestWalletModulePreloaded: the page preloads the wallet module (a link
// in its head, fetched while the page and its scripts load) and the loader
// uses that response: the module is requested once, by the link, and the
// sign-in that needs it works.
func TestWalletModulePreloaded(t *testing.T) {
	s := startStack(t, service.ModeSandbox)
	ctx := newBrowser(t)
	var log requestLog
	captureRequests(t, ctx, &log)
	s.signIn(ctx, "preloaded@example.com")

	var fetched []string
	for _, r := range log.all() {
		if isModuleURL(r.URL) {
			fetched = append(fetched, r.URL)
		}
	}
	if len(fetched) != 1 {
		t.Errorf("the module was requested %d times: %v, want once", len(fetched), fetched)
	}
	initiators, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`performance.getEntriesByType("resource")
		.filter((e) => /\/wasm\/wallet\.[0-9a-f]+\.wasm$/.test(new URL(e.name).pathname))
		.map((e) => e.initiatorType)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(initiators) != 1 || initiators[0] != "link" {
		t.Errorf("the module's resource timing initiators %v, want one \"link\" (the preload)", initiators)
	}
}

// isModuleURL reports whether url is the wallet module's content-hashed
// address.
func isModuleURL(url string) bool {
	path, _, _ := strings.Cut(url, "?")
	i := strings.Index(path, "/wasm/wallet.")
	return i >= 0 && strings.HasSuffix(path, ".wasm") && path[i:] != "/wasm/wallet.wasm"
}
