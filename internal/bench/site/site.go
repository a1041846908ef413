// Package site runs the wallet as a person meets it, for the benchmarks
// that load its pages in Chromium (internal/bench/lighthouse,
// internal/bench/pageload): cmd/wallet built and started in sandbox mode
// with the dev mailbox, as `make run` does, and an e-mail code sign-in in a
// tab with the code read from that mailbox.
package site

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Start builds cmd/wallet and runs it on a loopback port with a new
// SQLite database, in sandbox mode with the dev mailbox (the e-mail codes
// are read from it); it returns the wallet's URL and a function that stops
// it.
func Start(ctx context.Context, dir string) (string, func(), error) {
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

// SignIn runs the e-mail code sign-in in the tab, with the code from the
// wallet's dev mailbox, and waits for Home.
func SignIn(tab context.Context, base, email string) error {
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
	return WaitView(tab, "home")
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

// ShowView opens u in the tab and waits for the view.
func ShowView(tab context.Context, u, view string) error {
	if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
		return err
	}
	return WaitView(tab, view)
}

// WaitView waits up to 20 s for document.body.dataset.view to be view.
func WaitView(tab context.Context, view string) error {
	js := `document.body.dataset.view === ` + strconv.Quote(view)
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		shown, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.dataset.view || "(none)"`))
		return fmt.Errorf("waiting for the %s view (shown: %s): %w", view, shown, err)
	}
	return nil
}
