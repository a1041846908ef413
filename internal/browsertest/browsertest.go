// Package browsertest starts headless Chromium for tests and benchmarks,
// with the flags this machine kind needs: a fresh profile per browser, no
// background networking (the network is closed), no GPU, and --no-sandbox
// when running as root, which Chromium otherwise refuses.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned by ExecPath and Launch when no Chromium is on
// PATH.
var ErrNoChromium = errors.New("Chromium is not installed: run `make test` (it installs it) or `apt-get install -y chromium`")

// ExecPath returns the Chromium binary on PATH: chromium (Debian's name),
// else chromium-browser. Looking it up rather than hard-coding a path keeps
// Debian's launcher script, which sets up the environment Chromium expects.
func ExecPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", ErrNoChromium
}

// Launch starts headless Chromium (execPath, or ExecPath() if it is empty)
// with its profile in userDataDir and returns the context of its first tab,
// ready for chromedp. The browser is started before Launch returns, so a
// start-up failure is its error rather than the first action's. cancel
// closes the browser and waits for it to exit; the caller removes
// userDataDir afterwards if it wants to. The browser also closes when ctx
// ends.
//
// Use a fresh userDataDir each time: a reused profile brings its HTTP and
// code caches along, which would make pages and wasm modules load warm.
//
// extra options come after these; the Lighthouse benchmark adds a
// debugging port with them, for a second program to drive the same browser.
func Launch(ctx context.Context, execPath, userDataDir string, extra ...chromedp.ExecAllocatorOption) (tab context.Context, cancel context.CancelFunc, err error) {
	if execPath == "" {
		if execPath, err = ExecPath(); err != nil {
			return nil, nil, err
		}
	}
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(userDataDir),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	cancel = func() {
		cancelTab()
		cancelAlloc()
	}
	if err := chromedp.Do(tab); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("start Chromium (%s): %w", execPath, err)
	}
	return tab, cancel, nil
}

// New starts a browser for one test and returns a tab context that ends
// after timeout. The browser closes in t.Cleanup; register servers the
// browser talks to before calling New, so that the browser closes first
// (LIFO) and its keep-alive connections do not hold up their shutdown.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	return NewWith(t, timeout)
}

// NewWith is New with extra browser options (a test that needs a feature
// switched on: chromedp.Flag("enable-features", …)).
func NewWith(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser is told to close, and
	// t.TempDir's removal then fails the test ("directory not empty").
	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := Launch(context.Background(), "", dir, extra...)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		removeProfile(t, dir)
	})
	if err := FixLocale(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Locale is the locale of the tabs of New and FixLocale: pages write
// amounts, numbers and times in it ("$1,234.56", "Nov 23, 2026, 9:41 AM").
const Locale = "en-US"

// FixLocale makes a tab read as a person of Locale, whatever the machine's
// own settings: navigator.languages (where the pages choose their language
// and the layout of money) and Intl's default locale (dates). New does it
// for its first tab; call it for each further tab (chromedp.NewContext) of
// a test that reads numbers, before it navigates.
func FixLocale(tab context.Context) error {
	v, err := chromedp.Call(tab, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return fmt.Errorf("fix the locale: %w", err)
	}
	if _, err := chromedp.Call(tab, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
		UserAgent:      v.UserAgent,
		AcceptLanguage: Locale + ",en",
	}); err != nil {
		return fmt.Errorf("fix the locale: %w", err)
	}
	if _, err := chromedp.Call(tab, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: Locale}); err != nil {
		return fmt.Errorf("fix the locale: %w", err)
	}
	return nil
}

// removeProfile deletes a closed browser's profile, trying again for a few
// seconds while its last writes land.
func removeProfile(t testing.TB, dir string) {
	if err := RemoveProfile(dir); err != nil {
		t.Logf("browser profile %s left behind: %v", dir, err)
	}
}

// RemoveProfile removes a browser's profile directory once the browser is
// closed, trying again for up to five seconds: Chromium's helper processes
// may still write to it for a moment after the browser is told to close.
func RemoveProfile(dir string) error {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
