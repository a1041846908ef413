package lighthouse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"paywallet/internal/bench/site"
	"paywallet/internal/browsertest"
)

// Options say where things are; the zero value is right when run from the
// repository root.
type Options struct {
	// Lighthouse is the CLI; default bench/lighthouse/node_modules/.bin/lighthouse.
	Lighthouse string
	// TempDir holds the wallet binary, its database, the browser profile
	// and the JSON reports; default a new folder, removed at the end.
	TempDir string
	// ReportDir, when set, receives Lighthouse's own reports of every run
	// (<page>-<form factor>.report.html and .report.json), to open in a
	// browser for the details behind the scores.
	ReportDir string
	// Quick audits Home once, on mobile only (a smoke run).
	Quick bool
	// Log reports progress; nil is quiet.
	Log func(format string, args ...any)
}

// page is a view Lighthouse audits: its address, the name
// document.body.dataset.view takes once it is shown (web/static/js/app.js)
// and whether it is audited signed in.
type page struct {
	name, path, view string
	signedIn         bool
}

// pages are audited in this order: the sign-in page before the browser
// signs in, then the signed-in views.
var pages = []page{{"Sign-in", "/", "signin", false}, {"Home", "/", "home", true}, {"Send", "/send", "send", true}}

// formFactors are Lighthouse's two presets: its default (a phone on slow
// 4G with a 4× slower CPU, simulated) and "desktop".
var formFactors = []string{"mobile", "desktop"}

// Run starts the wallet (cmd/wallet in sandbox mode with the dev mailbox,
// as `make run` does) and runs the Lighthouse CLI against a headless
// Chromium on each page and form factor: the sign-in page signed out, then,
// after an e-mail code sign-in in that browser, the signed-in views.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Lighthouse == "" {
		o.Lighthouse = filepath.Join("bench", "lighthouse", "node_modules", ".bin", "lighthouse")
	}
	if _, err := os.Stat(o.Lighthouse); err != nil {
		return nil, fmt.Errorf("Lighthouse is not installed (%w): run `sh bench/lighthouse/install.sh` (make bench does it)", err)
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.ReportDir != "" {
		if err := os.MkdirAll(o.ReportDir, 0o755); err != nil {
			return nil, err
		}
	}
	if o.TempDir == "" {
		dir, err := os.MkdirTemp("", "paywallet-lighthouse-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.TempDir = dir
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()

	base, stop, err := site.Start(ctx, o.TempDir)
	if err != nil {
		return nil, err
	}
	defer stop()

	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// chromedp talks to the browser over a pipe; the port is for Lighthouse.
	// It is added to the command line rather than as a chromedp flag, which
	// would make chromedp want a websocket of its own.
	withPort := chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		cmd.Args = append(cmd.Args[:len(cmd.Args)-1], "--remote-debugging-port="+strconv.Itoa(port), cmd.Args[len(cmd.Args)-1])
	})
	profile := filepath.Join(o.TempDir, "profile")
	tab, closeBrowser, err := browsertest.Launch(ctx, "", profile, withPort)
	if err != nil {
		return nil, err
	}
	defer closeBrowser()
	res := &Result{Reports: o.ReportDir}
	if v, err := chromedp.CallBrowser(tab, browser.GetVersion, cdp.Empty{}); err == nil {
		res.Chromium = v.Product
	}
	runPages, runForms := pages, formFactors
	if o.Quick {
		runPages, runForms = pages[1:2], formFactors[:1]
	}
	var errs []error
	signedIn := false
	for _, p := range runPages {
		if p.signedIn && !signedIn {
			if err := site.SignIn(tab, base, "lighthouse@example.com"); err != nil {
				return res, fmt.Errorf("signing in: %w", err)
			}
			signedIn = true
		}
		for _, ff := range runForms {
			o.Log("lighthouse: %s (%s)", p.name, ff)
			// With two outputs Lighthouse writes <path>.report.json and
			// <path>.report.html.
			dir := o.TempDir
			if o.ReportDir != "" {
				dir = o.ReportDir
			}
			out := filepath.Join(dir, fmt.Sprintf("%s-%s", strings.ToLower(p.name), ff))
			args := []string{base + p.path, "--port=" + strconv.Itoa(port), "--disable-storage-reset",
				"--only-categories=" + strings.Join(Categories, ","), "--output=json", "--output=html", "--output-path=" + out, "--quiet"}
			if ff == "desktop" {
				args = append(args, "--preset=desktop")
			}
			// A run Lighthouse gives up on (it waits 30 s at most for an
			// answer of the browser) is tried once more, and the report
			// says so: one failed attempt is a finding, not noise.
			run, version, err := audit(ctx, tab, o.Lighthouse, args, out)
			if err != nil {
				o.Log("lighthouse: %s (%s) failed, once more: %v", p.name, ff, err)
				first := err
				run, version, err = audit(ctx, tab, o.Lighthouse, args, out)
				if err == nil {
					run.Warnings = append(run.Warnings, "a first attempt failed: "+first.Error())
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", p.name, ff, err))
				continue
			}
			run.Page, run.Path, run.SignedIn = p.name, p.path, p.signedIn
			res.Version = version
			res.Runs = append(res.Runs, run)
			// Lighthouse audited in a tab of its own: that this one still
			// shows the view (the session still there, or still none) says
			// the audited page was that view.
			if err := site.ShowView(tab, base+p.path, p.view); err != nil {
				return res, fmt.Errorf("after auditing %s (%s): %w", p.name, ff, err)
			}
		}
	}
	return res, errors.Join(errs...)
}

// audit runs the Lighthouse CLI once with args, on an empty HTTP cache, and
// reads its JSON report from out.report.json.
func audit(ctx, tab context.Context, bin string, args []string, out string) (PageResult, string, error) {
	// A cold load, as Lighthouse measures by default, signed in or not: the
	// HTTP cache goes (the wasm module, scripts and styles are fetched
	// again), the cookie and IndexedDB stay.
	if _, err := chromedp.Call(tab, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		return PageResult{}, "", fmt.Errorf("clearing the HTTP cache: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return PageResult{}, "", fmt.Errorf("%w: %s", err, lastLines(stderr.String(), 3))
	}
	b, err := os.ReadFile(out + ".report.json")
	if err != nil {
		return PageResult{}, "", err
	}
	return Parse(b)
}

// freePort asks the kernel for a loopback port nobody uses now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// lastLines is the end of a command's output, for an error message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
