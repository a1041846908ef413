package hatest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// balancer is the load balancer in front of the service instances that the
// BFFs call, as in production: it sends each request to an instance that is
// up, takes an instance out when its /readyz answers 503 (draining, or its
// database not ready) or it refuses connections, and back in when it
// answers again. A request that could not reach an instance (connection
// refused) goes to another one: nothing was sent, so nothing was done.
type balancer struct {
	backends []string
	up       []atomic.Bool
	next     atomic.Uint64
	rt       http.RoundTripper
	srv      *http.Server
	ln       net.Listener
	wg       sync.WaitGroup
	stop     chan struct{}
}

func newBalancer(backends []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{backends: backends, up: make([]atomic.Bool, len(backends)), ln: ln, stop: make(chan struct{}),
		rt: &http.Transport{MaxIdleConnsPerHost: 32, ResponseHeaderTimeout: 60 * time.Second}}
	for i := range b.up {
		b.up[i].Store(true)
	}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	b.wg.Go(func() { _ = b.srv.Serve(ln) })
	b.wg.Go(b.check)
	return b, nil
}

// URL is the balancer's base URL.
func (b *balancer) URL() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) Close() {
	close(b.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.srv.Shutdown(ctx)
	b.wg.Wait()
}

// check polls each instance's /readyz four times a second. An instance
// without /readyz (404: an older paymentsd) counts as ready when it
// answers at all.
func (b *balancer) check() {
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-b.stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
		for i, be := range b.backends {
			resp, err := hc.Get(be + "/readyz")
			if err != nil {
				b.up[i].Store(false)
				continue
			}
			resp.Body.Close()
			b.up[i].Store(resp.StatusCode != http.StatusServiceUnavailable)
		}
	}
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	start := int(b.next.Add(1))
	var last error
	for n := range 2 * len(b.backends) {
		i := (start + n) % len(b.backends)
		if !b.up[i].Load() && n < len(b.backends) {
			continue // the first pass only tries instances that are up
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, b.backends[i]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := b.rt.RoundTrip(out)
		if err != nil {
			last = err
			if errors.Is(err, syscall.ECONNREFUSED) {
				b.up[i].Store(false)
				continue
			}
			break // the request may have reached it: not safe to send again
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	// As a load balancer does when no instance could take the request.
	http.Error(w, "balancer: no instance answered: "+errString(last), http.StatusBadGateway)
}

func errString(err error) string {
	if err == nil {
		return "none is up"
	}
	return err.Error()
}
