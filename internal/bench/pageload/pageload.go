// Package pageload measures how the wallet's real page loads in Chromium
// for `make bench`, as a person on a phone meets it: the page served by the
// real wallet (cmd/wallet, as `make run` starts it, see package site), a
// phone-sized viewport and the CPU slowed four times (Lighthouse's mobile
// setting, through the DevTools protocol), every load traced.
//
// The loads, in one browser profile:
//
//  1. the sign-in page, signed out, on an empty HTTP cache (a first visit);
//  2. Home, signed in, on an emptied HTTP cache (a first visit signed in);
//  3. Home again, the page reloaded;
//  4. Home after the browser was closed and started again on the same
//     profile (a second visit): what the cache kept is what it need not
//     fetch.
//
// Each is read from a Chromium trace (CDP Tracing) of the load: the page's
// main-thread tasks (RunTask), the ones over 50 ms with what they did and
// whether the wallet module had a part in them (DESIGN.md's budget: none
// may), their time over 50 ms summed (Lighthouse's Total Blocking Time
// counts the same, from first paint to quiet), the longest task of the
// module's Worker, and every request with where its answer came from
// (network, cache, revalidated) and its bytes on the wire. The page's own
// clock gives first contentful paint, the moment the view was shown and
// the moment the module was ready. The DevTools network domain stays off:
// it makes the renderer copy every response body, work a visitor never
// pays (see internal/bench/browser), and the trace has the requests.
package pageload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"paywallet/internal/bench/site"
	"paywallet/internal/browsertest"
)

// Options say where things go; the zero value is right when run from the
// repository root.
type Options struct {
	// TempDir holds the wallet binary, its database and the browser
	// profile; default a new folder, removed at the end.
	TempDir string
	// TraceDir, when set, receives each load's trace
	// (<n>-<visit>.trace.json), to open in DevTools' Performance panel or
	// Perfetto for the details behind the figures.
	TraceDir string
	// CPUSlowdown is the CPU throttling rate; 0 is 4, Lighthouse's mobile.
	CPUSlowdown float64
	// Log reports progress; nil is quiet.
	Log func(format string, args ...any)
}

// Result is one run: the loads in the order they were made.
type Result struct {
	Chromium    string  `json:"chromium"`
	CPUSlowdown float64 `json:"cpuSlowdown"`
	Viewport    string  `json:"viewport"`
	Loads       []Load  `json:"loads"`
}

// Load is one traced page load. Times are milliseconds since the
// navigation started.
type Load struct {
	Name string `json:"name"` // "sign-in, signed out"
	// Visit is "first" (empty HTTP cache), "reload" or "second" (the
	// browser restarted on the same profile).
	Visit string `json:"visit"`
	Path  string `json:"path"`
	View  string `json:"view"` // document.body.dataset.view once shown

	FCPMs   float64 `json:"fcpMs"`   // first contentful paint
	ViewMs  float64 `json:"viewMs"`  // the view shown (data-view set)
	ReadyMs float64 `json:"readyMs"` // the wallet module ready (globalThis.paywallet set by wallet.js)

	Tasks     int     `json:"tasks"`     // main-thread tasks, from the navigation to a second after ready
	LongTasks []Task  `json:"longTasks"` // those over 50 ms, in time order
	LongestMs float64 `json:"longestMs"` // the longest main-thread task
	// BlockingMs sums every main-thread task's time over 50 ms, over the
	// whole load (Lighthouse's TBT counts the same from first paint).
	BlockingMs float64 `json:"blockingMs"`
	// WorkerLongestMs is the longest task of the module's Worker thread:
	// where compiling and starting the module now goes.
	WorkerLongestMs float64 `json:"workerLongestMs"`

	Resources []Resource `json:"resources"`
	// Partial says the trace missed the start of the navigation in the
	// page's renderer (Chromium committed it in a spare renderer not yet
	// traced): the tasks and requests are counted from the first event the
	// trace has of that renderer, and the first ones may be missing.
	Partial bool `json:"partial,omitempty"`
}

// Task is a main-thread task over 50 ms.
type Task struct {
	AtMs   float64 `json:"atMs"`
	DurMs  float64 `json:"durMs"`
	Module bool    `json:"module"` // the wallet module had a part in it (see describe)
	// ModuleMs is the time of the module's part: its script (wallet.js's
	// message handler, say), wasm work, the worker's start. The rest of
	// the task is the page's, even when the module's part set it off.
	ModuleMs float64 `json:"moduleMs"`
	What     string  `json:"what"` // its heaviest kinds of work
	// Caused says the module's part made the task long: without it the
	// task would take 50 ms or less. This is what DESIGN.md's budget
	// counts; a task the module only had a small part in (a message
	// handler that sets off the page's own drawing) is not.
	Caused bool `json:"caused"`
}

// Resource is one request of a load.
type Resource struct {
	URL    string `json:"url"` // the path
	Status int    `json:"status"`
	// Source is "network", "cache" (the HTTP cache answered, nothing was
	// sent) or "revalidated" (a 304: the cache's copy, after a round trip).
	Source string `json:"source"`
	Bytes  int64  `json:"bytes"` // on the wire, headers included; 0 from the cache
}

// ModuleLongTasks counts the long tasks the wallet module caused (Task.Caused).
func (l *Load) ModuleLongTasks() int {
	n := 0
	for _, t := range l.LongTasks {
		if t.Caused {
			n++
		}
	}
	return n
}

// Count returns the requests answered from source and their bytes.
func (l *Load) Count(source string) (n int, bytes int64) {
	for _, r := range l.Resources {
		if r.Source == source {
			n++
			bytes += r.Bytes
		}
	}
	return n, bytes
}

// The phone the loads are made on: Lighthouse's mobile screen (a Moto G
// Power), so that layout works on the width a phone has.
const (
	phoneWidth, phoneHeight = 412, 823
	phoneScale              = 1.75
)

// probe is evaluated in every new document before the page's own scripts.
// It notes, on the page's clock, when the view is first shown
// (document.body.dataset.view set; web/static/js/app.js) and when the
// wallet module is ready (wallet.js sets globalThis.paywallet to its
// client then; the accessor keeps the value and the page sees no
// difference), and offers both as a Promise for the driver to await.
const probe = `(() => {
  let wallet, readyAt = 0, viewAt = 0, view = "", resolveReady, resolveView;
  const ready = new Promise((r) => { resolveReady = r; });
  const shown = new Promise((r) => { resolveView = r; });
  Object.defineProperty(globalThis, "paywallet", {
    configurable: true,
    get() { return wallet; },
    set(v) { wallet = v; if (v && !readyAt) { readyAt = performance.now(); resolveReady(); } },
  });
  new MutationObserver(() => {
    const v = document.body && document.body.dataset.view;
    if (v && !viewAt) { viewAt = performance.now(); view = v; resolveView(); }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-view"] });
  Object.defineProperty(globalThis, "__pageloadBench", { value: {
    done: () => Promise.all([ready, shown]).then(() => {
      const fcp = performance.getEntriesByName("first-contentful-paint")[0];
      return { readyMs: readyAt, viewMs: viewAt, view, fcpMs: fcp ? fcp.startTime : 0 };
    }),
  } });
})();`

// pageTimes is what the probe's done() resolves with.
type pageTimes struct {
	ReadyMs float64 `json:"readyMs"`
	ViewMs  float64 `json:"viewMs"`
	View    string  `json:"view"`
	FCPMs   float64 `json:"fcpMs"`
}

// settle is how long a trace goes on after the module is ready and the
// view shown: the tasks that finish the view's drawing land in it.
const settle = time.Second

// Run makes the four loads (see the package doc) and returns them.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.CPUSlowdown <= 0 {
		o.CPUSlowdown = 4
	}
	if o.TraceDir != "" {
		if err := os.MkdirAll(o.TraceDir, 0o755); err != nil {
			return nil, err
		}
	}
	if o.TempDir == "" {
		dir, err := os.MkdirTemp("", "paywallet-pageload-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.TempDir = dir
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	base, stop, err := site.Start(ctx, o.TempDir)
	if err != nil {
		return nil, err
	}
	defer stop()

	res := &Result{CPUSlowdown: o.CPUSlowdown, Viewport: fmt.Sprintf("%d×%d at %g×, mobile", phoneWidth, phoneHeight, phoneScale)}
	profile := filepath.Join(o.TempDir, "profile")
	tab, closeBrowser, err := open(ctx, profile, res)
	if err != nil {
		return nil, err
	}
	defer func() { closeBrowser() }()

	home := base + "/"
	load := func(tab context.Context, name, visit, path string, how chromedp.Action[chromedp.Void]) error {
		o.Log("pageload: %s", name)
		keep := ""
		if o.TraceDir != "" {
			keep = filepath.Join(o.TraceDir, fmt.Sprintf("%d-%s.trace.json", len(res.Loads)+1, visit))
		}
		l, err := traced(tab, base+path, how, o.CPUSlowdown, keep)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		l.Name, l.Visit, l.Path = name, visit, path
		res.Loads = append(res.Loads, l)
		return nil
	}
	if err := load(tab, "sign-in, signed out", "first", "/", chromedp.Navigate(home)); err != nil {
		return res, err
	}
	if res.Loads[0].View != "signin" {
		return res, fmt.Errorf("signed out, the page showed the %q view, not the sign-in", res.Loads[0].View)
	}
	if err := site.SignIn(tab, base, "pageload@example.com"); err != nil {
		return res, fmt.Errorf("signing in: %w", err)
	}
	// A first visit signed in: the session (cookie, key in IndexedDB)
	// stays, the HTTP cache goes.
	if _, err := chromedp.Call(tab, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		return res, fmt.Errorf("emptying the HTTP cache: %w", err)
	}
	if err := load(tab, "Home, signed in", "first", "/", chromedp.Navigate(home)); err != nil {
		return res, err
	}
	if err := load(tab, "Home, signed in, reloaded", "reload", "/", chromedp.Reload()); err != nil {
		return res, err
	}

	// The second visit: the browser closed as a person closes it, through
	// Browser.close (chromedp.Cancel; which writes the cookies and the
	// cache index out: a killed browser loses the cookie and looks signed
	// out), and started again on the same profile.
	if err := chromedp.Cancel(tab); err != nil {
		o.Log("pageload: closing the browser: %v", err)
	}
	closeBrowser()
	time.Sleep(500 * time.Millisecond)
	tab, closeBrowser, err = open(ctx, profile, res)
	if err != nil {
		return res, fmt.Errorf("starting the browser again on the same profile: %w", err)
	}
	if err := load(tab, "Home, signed in, browser restarted", "second", "/", chromedp.Navigate(home)); err != nil {
		return res, err
	}
	for _, l := range res.Loads[1:] {
		if l.View != "home" {
			return res, fmt.Errorf("%s: the page showed the %q view, not Home", l.Name, l.View)
		}
	}
	return res, nil
}

// open starts Chromium on profile and makes its tab a phone: the screen,
// the probe in every document, the network domain off.
func open(ctx context.Context, profile string, res *Result) (context.Context, func(), error) {
	tab, closeBrowser, err := browsertest.Launch(ctx, "", profile)
	if err != nil {
		return nil, nil, err
	}
	if v, err := chromedp.CallBrowser(tab, browser.GetVersion, cdp.Empty{}); err == nil {
		res.Chromium = v.Product
	}
	steps := []error{
		browsertest.FixLocale(tab),
		call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: phoneWidth, Height: phoneHeight, DeviceScaleFactor: phoneScale, Mobile: true}),
		call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: probe}),
		call(tab, network.Disable, cdp.Empty{}),
	}
	if err := errors.Join(steps...); err != nil {
		closeBrowser()
		return nil, nil, fmt.Errorf("preparing the tab: %w", err)
	}
	return tab, closeBrowser, nil
}

// call runs one DevTools command for its error alone.
func call[P, R any](tab context.Context, cmd cdp.Command[P, R], params P) error {
	_, err := chromedp.Call(tab, cmd, params)
	return err
}

// traced makes one load with how (a navigation or a reload) with the CPU
// slowed, traced from before it starts until a second after the module is
// ready and the view shown, and reads the trace.
func traced(tab context.Context, pageURL string, how chromedp.Action[chromedp.Void], slowdown float64, keep string) (Load, error) {
	if err := call(tab, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: slowdown}); err != nil {
		return Load{}, err
	}
	defer func() { _ = call(tab, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: 1}) }()
	stop, err := startTrace(tab)
	if err != nil {
		return Load{}, err
	}
	times, err := func() (pageTimes, error) {
		ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, how); err != nil {
			return pageTimes{}, err
		}
		v, err := chromedp.Run(ctx, chromedp.Evaluate[pageTimes](`__pageloadBench.done()`, chromedp.EvalAwaitPromise))
		if err != nil {
			return v, fmt.Errorf("waiting for the view and the wallet module: %w", err)
		}
		time.Sleep(settle)
		return v, nil
	}()
	events, stopErr := stop()
	if err != nil {
		return Load{}, err
	}
	if stopErr != nil {
		return Load{}, stopErr
	}
	if keep != "" {
		if err := writeTrace(keep, events); err != nil {
			return Load{}, err
		}
	}
	a, err := analyze(events, pageURL)
	if err != nil {
		return Load{}, err
	}
	l := Load{View: times.View, FCPMs: times.FCPMs, ViewMs: times.ViewMs, ReadyMs: times.ReadyMs,
		Tasks: a.taskCount, LongTasks: a.tasks, LongestMs: a.longest, WorkerLongestMs: a.workerLong, Resources: a.resources,
		Partial: a.partial}
	for _, t := range a.tasks {
		l.BlockingMs += t.DurMs - LongTask
	}
	if a.threads < 2 {
		return l, errors.New("the trace shows no Worker thread in the page's renderer: the wallet module did not start in its Worker")
	}
	return l, nil
}
