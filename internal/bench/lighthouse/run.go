package lighthouse

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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

// page is a view Lighthouse audits: its address and the name
// document.body.dataset.view takes once it is shown (web/static/js/router.js).
type page struct{ name, path, view string }

var pages = []page{{"Home", "/", "home"}, {"Send", "/send", "send"}}

// formFactors are Lighthouse's two presets: its default (a phone on slow
// 4G with a 4× slower CPU, simulated) and "desktop".
var formFactors = []string{"mobile", "desktop"}

// Run starts the wallet (cmd/wallet in sandbox mode with the dev mailbox,
// as `make run` does), signs in with an e-mail code in headless Chromium,
// and runs the Lighthouse CLI against that browser on each page and form
// factor.
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

	base, stop, err := startWallet(ctx, o.TempDir)
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
	if err := signIn(tab, base, "lighthouse@example.com"); err != nil {
		return nil, fmt.Errorf("signing in: %w", err)
	}

	runPages, runForms := pages, formFactors
	if o.Quick {
		runPages, runForms = pages[:1], formFactors[:1]
	}
	var errs []error
	for _, ff := range runForms {
		for _, p := range runPages {
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
			run.Page, run.Path = p.name, p.path
			res.Version = version
			res.Runs = append(res.Runs, run)
			// Lighthouse audited in a tab of its own: that the session is
			// still there and the page shows its view in this one says the
			// audited page was the signed-in view, not the sign-in.
			if err := showView(tab, base+p.path, p.view); err != nil {
				return res, fmt.Errorf("after auditing %s (%s): %w", p.name, ff, err)
			}
		}
	}
	return res, errors.Join(errs...)
}

// audit runs the Lighthouse CLI once with args, on an empty HTTP cache, and
// reads its JSON report from out.report.json.
func audit(ctx, tab context.Context, bin string, args []string, out string) (PageResult, string, error) {
	// A cold load, as Lighthouse measures by default, but signed in: the
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

// startWallet builds cmd/wallet and runs it on a loopback port with a new
// SQLite database, in sandbox mode with the dev mailbox (the e-mail codes
// are read from it); it returns the wallet's URL and a function that stops
// it.
func startWallet(ctx context.Context, dir string) (string, func(), error) {
	bin := filepath.Join(dir, "wallet")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/wallet")
	if out, err := build.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("go build ./cmd/wallet: %w: %s", err, out)
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--log-level", "warn", "--mode", "sandbox", "--dev-mailbox",
		"--database", filepath.Join(dir, "wallet.db"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	// The wallet prints "  Wallet:     http://localhost:PORT" once it
	// listens; what it logs afterwards is drained so it never blocks.
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Wallet:"); ok && !found {
				found = true
				urls <- strings.TrimSpace(rest)
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			stop()
			return "", nil, errors.New("the wallet exited before listening")
		}
		return u, stop, nil
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, errors.New("the wallet did not start in 60 s")
	}
}

// signIn runs the e-mail code sign-in in the tab, with the code from the
// wallet's dev mailbox, and waits for Home.
func signIn(tab context.Context, base, email string) error {
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	); err != nil {
		return err
	}
	code, err := mailboxCode(tab, base, email)
	if err != nil {
		return err
	}
	if err := chromedp.Do(tab,
		chromedp.SendKeys(chromedp.ID("code"), code),
		chromedp.Click(chromedp.ID("code-submit")),
	); err != nil {
		return err
	}
	return waitView(tab, "home")
}

// mailboxCode polls the dev mailbox for the newest code sent to address.
func mailboxCode(ctx context.Context, base, address string) (string, error) {
	for {
		resp, err := http.Get(base + "/dev/mailbox/latest?address=" + url.QueryEscape(address))
		if err != nil {
			return "", err
		}
		var m struct {
			Code string `json:"code"`
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil && len(m.Code) == 6 {
			return m.Code, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no code for %s in the dev mailbox: %w", address, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// showView opens u in the tab and waits for the view.
func showView(tab context.Context, u, view string) error {
	if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
		return err
	}
	return waitView(tab, view)
}

// waitView waits up to 20 s for document.body.dataset.view to be view.
func waitView(tab context.Context, view string) error {
	js := `document.body.dataset.view === ` + strconv.Quote(view)
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		shown, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.dataset.view || "(none)"`))
		return fmt.Errorf("waiting for the %s view (shown: %s): %w", view, shown, err)
	}
	return nil
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
