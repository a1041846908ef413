// Package browsertest starts headless Chromium for tests, with the flags this
// machine kind needs: a fresh profile per test, no background networking (the
// network is closed), no GPU, and --no-sandbox when running as root, which
// Chromium otherwise refuses.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// New starts a browser for one test and returns a tab context that ends
// after timeout. The browser closes in t.Cleanup; register servers the
// browser talks to before calling New, so that the browser closes first
// (LIFO) and its keep-alive connections do not hold up their shutdown.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if path, err = exec.LookPath("chromium-browser"); err != nil {
			t.Fatal("Chromium is not installed: run `make test` (it installs it) or `apt-get install -y chromium`")
		}
	}
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now so a start-up failure is reported here.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}
