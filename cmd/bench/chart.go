package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// screenshot renders page (an HTML document whose #chart element is the
// picture) in headless Chromium and returns that element as a PNG.
func screenshot(ctx context.Context, page string) ([]byte, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	defer srv.Close()

	profile, err := os.MkdirTemp("", "paywallet-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tab, closeBrowser, err := browsertest.Launch(ctx, "", profile)
	if err != nil {
		return nil, err
	}
	defer closeBrowser()
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		return nil, err
	}
	return chromedp.Run(tab, chromedp.Screenshot(chromedp.ID("chart")))
}
