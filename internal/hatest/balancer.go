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
// The round has two: one in front of the service instances for the BFFs,
// one in front of the BFFs for the services' webhooks.
type balancer struct {
	pool atomic.Pointer[pool]
	next atomic.Uint64
	rt   http.RoundTripper
	srv  *http.Server
	ln   net.Listener
	wg   sync.WaitGroup
	stop chan struct{}
}

// pool is the balancer's instances and whether each is up.
type pool struct {
	backends []string
	up       []atomic.Bool
}

// newBalancer listens at once (so its address can be handed out before
// the instances behind it exist) and answers 503 until setBackends.
func newBalancer(backends []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{ln: ln, stop: make(chan struct{}),
		rt: &http.Transport{MaxIdleConnsPerHost: 32, ResponseHeaderTimeout: 60 * time.Second}}
	b.setBackends(backends)
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	b.wg.Go(func() { _ = b.srv.Serve(ln) })
	b.wg.Go(b.check)
	return b, nil
}

// setBackends puts the instances at these base URLs behind the balancer.
func (b *balancer) setBackends(backends []string) {
	p := &pool{backends: backends, up: make([]atomic.Bool, len(backends))}
	for i := range p.up {
		p.up[i].Store(true)
	}
	b.pool.Store(p)
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
		p := b.pool.Load()
		for i, be := range p.backends {
			resp, err := hc.Get(be + "/readyz")
			if err != nil {
				p.up[i].Store(false)
				continue
			}
			resp.Body.Close()
			p.up[i].Store(resp.StatusCode != http.StatusServiceUnavailable)
		}
	}
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := b.pool.Load()
	if len(p.backends) == 0 {
		http.Error(w, "balancer: no instances yet", http.StatusServiceUnavailable)
		return
	}
	start := int(b.next.Add(1))
	var last error
	for n := range 2 * len(p.backends) {
		i := (start + n) % len(p.backends)
		if !p.up[i].Load() && n < len(p.backends) {
			continue // the first pass only tries instances that are up
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, p.backends[i]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := b.rt.RoundTrip(out)
		if err != nil {
			last = err
			if errors.Is(err, syscall.ECONNREFUSED) {
				p.up[i].Store(false)
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
