package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// intoWalletWorker runs prelude at the top of the wallet module's Worker
// (web/static/js/wallet-worker.js) in every page of ctx from now on, as
// page.AddScriptToEvaluateOnNewDocument does for a page: the module's
// IndexedDB, WebCrypto and timers are the worker's, which a script added to
// the page cannot reach. The worker's script is rewritten on its way in
// (the Fetch domain), and the browser's cache is turned off so that every
// load comes that way. wallet-worker.js imports nothing statically, so the
// prelude runs before anything of the module.
func intoWalletWorker(t *testing.T, ctx context.Context, prelude string) {
	t.Helper()
	paused := make(chan *fetch.EventRequestPaused, 16)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			paused <- e
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-paused:
				patchWorker(ctx, e, prelude)
			}
		}
	}()
	max := int64(0)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{MaxPostDataSize: &max}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	pattern := []*fetch.RequestPattern{{URLPattern: "*/js/wallet-worker.*", RequestStage: fetch.RequestStageResponse}}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: pattern}); err != nil {
		t.Fatal(err)
	}
}

// patchWorker answers the paused response of the worker's script with
// prelude before its body (the body as the browser decoded it).
func patchWorker(ctx context.Context, e *fetch.EventRequestPaused, prelude string) {
	body, err := chromedp.Call(ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: e.RequestID})
	if err != nil || e.ResponseStatusCode != 200 {
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	var headers []*fetch.HeaderEntry
	for _, h := range e.ResponseHeaders {
		switch strings.ToLower(h.Name) {
		case "content-encoding", "content-length", "etag":
		default:
			headers = append(headers, h)
		}
	}
	_, _ = chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:       e.RequestID,
		ResponseCode:    200,
		ResponseHeaders: headers,
		Body:            []byte(prelude + "\n" + string(body.Body)),
	})
}
