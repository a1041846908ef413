package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"paywallet/service/payments"
	"paywallet/shared/webhooksig"
)

// runListen is `paymentsd listen`: a developer's local loop. It starts a
// small receiver, registers it with the service as a temporary webhook
// endpoint, and forwards every delivery to the developer's own receiver
// (--forward-to) with the same body and the same signature headers, so
// that receiver verifies them exactly as it would in production (the
// timestamps stay valid for webhooksig.Tolerance). Before forwarding it
// checks the signatures itself against the service's JWKS, so a
// forwarded event is one the service sent. It prints one line per
// delivery and answers the service with the developer's status, so a
// failing receiver shows up as the service's retries. When it stops
// (SIGINT, SIGTERM) it deletes the endpoint.
//
// ready, when set, is called with the endpoint's id once it is
// registered (tests).
func runListen(ctx context.Context, args []string, out, errOut io.Writer, ready func(endpointID string)) error {
	fs := flag.NewFlagSet("paymentsd listen", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: paymentsd listen --forward-to URL [--events TYPE,TYPE] [--payload thin|snapshot]
                        [--service URL] [--credential ID:SECRET] [--listen-addr ADDR] [--public-url URL]

Registers a temporary webhook endpoint with the service, checks each
delivery's signatures against the service's JWKS, and forwards it to
--forward-to with the same body and signature headers; prints one line per
delivery and answers the service with your receiver's status (so a failure
is retried by the service). Ctrl-C deletes the endpoint.

The receiver listens on 127.0.0.1 (a free port) by default: the service must
reach it there, which it does when it runs on the same machine. For a service
elsewhere, listen on an address it can reach (--listen-addr 0.0.0.0:4242) and
give the URL it reaches it by (--public-url https://tunnel.example/).

Flags:
`)
		fs.PrintDefaults()
	}
	var cf clientFlags
	cf.register(fs)
	var forward, events, payload, listenAddr, publicURL string
	fs.StringVar(&forward, "forward-to", "", "your receiver's URL, such as http://localhost:3000/hook (required)")
	fs.StringVar(&events, "events", "*", "the event types to receive, comma-separated; * for all")
	fs.StringVar(&payload, "payload", "snapshot", "snapshot (the resource in data) or thin (its id only)")
	fs.StringVar(&listenAddr, "listen-addr", "127.0.0.1:0", "the address this command's receiver listens on (port 0: a free one)")
	fs.StringVar(&publicURL, "public-url", "", "the URL the service delivers to; http://<listen-addr>/webhooks when empty")
	positional, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("listen: unexpected arguments %q", positional)
	}
	if u, err := url.Parse(forward); forward == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("listen: --forward-to is required: your receiver's http(s) URL, such as http://localhost:3000/hook")
	}
	var types []string
	for _, t := range strings.Split(events, ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	if payload != "snapshot" && payload != "thin" {
		return errors.New("listen: --payload must be snapshot or thin")
	}
	c, err := cf.newClient()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	l := &listener{c: c, forward: forward, out: out, errOut: errOut,
		fwd: &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // as the service: a redirect is an answer
		}}}
	if err := l.fetchKeys(ctx); err != nil {
		return fmt.Errorf("listen: fetch the service's webhook keys: %w", err)
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String() + "/webhooks"
	}
	host, _ := os.Hostname()
	var ep payments.WebhookEndpoint
	err = c.call(ctx, "POST", "/webhooks/endpoints", payments.CreateWebhookEndpointRequest{URL: publicURL,
		Description: "paymentsd listen " + host, EventTypes: types, PayloadStyle: payload}, &ep)
	if err != nil {
		return fmt.Errorf("listen: register the endpoint: %w", err)
	}
	defer func() {
		// The endpoint goes with the command, even when ctx ended.
		del, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.call(del, "DELETE", "/webhooks/endpoints/"+ep.ID, nil, nil); err != nil {
			fmt.Fprintf(errOut, "paymentsd listen: delete endpoint %s: %v (delete it with DELETE /webhooks/endpoints/%s)\n", ep.ID, err, ep.ID)
			return
		}
		l.printf("Deleted endpoint %s.\n", ep.ID)
	}()
	l.printf("Ready. Endpoint %s (%s, %s) receives at %s and forwards to %s. Ctrl-C to stop.\n",
		ep.ID, strings.Join(ep.EventTypes, ","), ep.PayloadStyle, publicURL, forward)
	if ready != nil {
		ready(ep.ID)
	}
	<-ctx.Done()
	return nil
}

// listener is listen's receiver.
type listener struct {
	c       *client
	forward string
	fwd     *http.Client
	out     io.Writer
	errOut  io.Writer

	outMu sync.Mutex
	mu    sync.Mutex
	keys  webhooksig.JWKS
	// fetched is when the keys were last fetched: an unknown kid fetches
	// them again, at most once a second.
	fetched time.Time
}

func (l *listener) printf(format string, args ...any) {
	l.outMu.Lock()
	defer l.outMu.Unlock()
	fmt.Fprintf(l.out, format, args...)
}

// fetchKeys reads the service's JWKS (no credential).
func (l *listener) fetchKeys(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, "GET", l.c.base+"/webhooks/jwks.json", nil)
	if err != nil {
		return err
	}
	resp, err := l.c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /webhooks/jwks.json: %d", resp.StatusCode)
	}
	keys, err := webhooksig.ParseJWKS(raw)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.keys, l.fetched = keys, time.Now()
	l.mu.Unlock()
	return nil
}

// verify checks the delivery's Service-Webhook-Signature (and its
// Standard Webhooks signature when present) against the service's keys,
// fetching them again on an unknown kid.
func (l *listener) verify(ctx context.Context, h http.Header, body []byte) error {
	for attempt := 0; ; attempt++ {
		l.mu.Lock()
		keys, fetched := l.keys, l.fetched
		l.mu.Unlock()
		now := time.Now()
		_, err := webhooksig.Verify(h.Get(webhooksig.Header), body, keys, now)
		if err == nil && h.Get(webhooksig.StdSignatureHeader) != "" {
			err = webhooksig.VerifyStandard(h.Get(webhooksig.StdIDHeader), h.Get(webhooksig.StdTimestampHeader),
				h.Get(webhooksig.StdSignatureHeader), body, keys.Ed25519Keys(), now)
		}
		if err == nil || !errors.Is(err, webhooksig.ErrUnknownKey) || attempt > 0 || time.Since(fetched) < time.Second {
			return err
		}
		if ferr := l.fetchKeys(ctx); ferr != nil {
			return fmt.Errorf("%w (fetching the keys again: %v)", err, ferr)
		}
	}
}

// forwarded are the request headers a delivery keeps when forwarded: the
// body's type and every signature header.
var forwarded = []string{"Content-Type", "User-Agent", webhooksig.CompatHeader, webhooksig.Header,
	webhooksig.StdIDHeader, webhooksig.StdTimestampHeader, webhooksig.StdSignatureHeader}

// ServeHTTP receives one delivery: it verifies it, forwards it, prints a
// line and answers with the developer's status.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST webhooks here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	var ev webhooksig.Event
	_ = json.Unmarshal(body, &ev)
	stamp := time.Now().Format("15:04:05")
	if err := l.verify(r.Context(), r.Header, body); err != nil {
		// Not the service's (or a key it no longer publishes): not
		// forwarded, and the service, if it was the sender, retries.
		// The body is not the service's: quoted, so that it cannot
		// send escape sequences to the terminal.
		l.printf("%s  %-34q %q  refused, not forwarded: %v\n", stamp, ev.Type, ev.ID, err)
		http.Error(w, "signature does not verify: "+err.Error(), http.StatusUnauthorized)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.forward, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for _, k := range forwarded {
		if v := r.Header.Values(k); len(v) > 0 {
			req.Header[http.CanonicalHeaderKey(k)] = v
		}
	}
	start := time.Now()
	resp, err := l.fwd.Do(req)
	took := time.Since(start)
	if took >= time.Millisecond {
		took = took.Round(time.Millisecond)
	} else {
		took = took.Round(time.Microsecond)
	}
	if err != nil {
		l.printf("%s  %-34s %s  -> failed after %s: %v\n", stamp, ev.Type, ev.ID, took, err)
		http.Error(w, "the forward failed: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	l.printf("%s  %-34s %s  -> %d (%s)\n", stamp, ev.Type, ev.ID, resp.StatusCode, took)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}
