// Package load is the load benchmark of `make bench`: a closed-loop load
// generator ([Run]) and three scenarios that drive the real payments service
// (and the BFF in front of it) over loopback TCP with it:
//
//   - [RunService]: throughput and latency of creating external accounts,
//     creating quotes, executing them (one wallet per client, and all
//     clients on one hot wallet) and reading transactions, on SQLite and on
//     PostgreSQL, at several client counts;
//   - [RunScale]: how listing and reading external accounts slow down as the
//     store fills up (10^3 … 10^5 accounts);
//   - [RunBFF]: what the BFF adds to a forwarded read and to the login
//     verify leg, against the same calls made to the service directly.
//
// Everything runs in this process on a 2-core machine shared with the load
// generator, so the figures compare configurations with each other; they are
// not capacity figures for a production host. Nothing here asserts a time:
// the smoke test only checks that every request got the answer it should.
//
// # Production path
//
// The service runs in production mode (signatures are checked for real, no
// sandbox literal), served by net/http on 127.0.0.1:0 with its background
// workers running as the binaries run them. Wallet sessions come from real
// e-mail OTP logins through the service API, and executes carry real stamps
// made with shared/walletcrypto. The one shortcut is funding: production
// mode refuses the sandbox funding endpoint, so wallets are credited through
// the store API in one transaction that also records the INCOMING
// transaction, as the sandbox endpoint would.
//
// Work a real client would do on its own device (stamping a payload,
// sealing an OTP code) is done before the timed part, so that it does not
// take CPU from the server while it is measured.
package load

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats summarises one measured run of [Run].
type Stats struct {
	Clients  int
	Requests int // calls of op in the measured part, failed ones included
	// Errors counts failed calls: those of the measured part and those of
	// the warm-up (which are not in Requests), so that no failure goes
	// unseen. The scenarios add failed correctness checks made after a run.
	Errors int
	RPS    float64 // Requests per second of the measured part's wall time
	// Latency percentiles and maximum of the measured calls, in
	// milliseconds, exact: nearest rank in the sorted sample.
	P50Ms, P90Ms, P99Ms, MaxMs float64
	// FirstError is the message of the first failure, "" when none.
	FirstError string `json:",omitempty"`
}

// WarmupCalls bounds the calls each client makes before the measured part:
// at least one (which opens its keep-alive connection and, with the
// others, fills the database connection pool), and more only while the
// warm-up's time (a fifth of the run's duration, at most 250 ms) lasts.
// The clients warm up all at once and are waited for, so the measured part
// starts with every client ready. A scenario that hands out prepared work
// items (quotes, pending logins) must have clients*WarmupCalls of them on
// top of what it wants measured.
const WarmupCalls = 3

// ErrStop is what op returns, without making a request, when it has no work
// left for the client (its prepared items are used up). The client then
// ends; the call counts neither as a request nor as an error.
var ErrStop = errors.New("load: no more work for this client")

// Run is a closed-loop load generator: clients goroutines each call op back
// to back, first a short unmeasured warm-up (see WarmupCalls), then
// measured until dur has passed, maxRequests measured calls have been
// started by all clients together (0: no limit), ctx ends, or op returns
// ErrStop. A call that is running when dur passes is finished and counted.
//
// seq numbers the calls of one client from 0, warm-up included, so
// (client, seq) is unique within a run and op can index per-client work by
// it. A non-nil error other than ErrStop counts as a failed request; its
// latency is recorded like any other.
//
// Closed loop means the offered load adapts to the server: a slow answer
// delays the client's next call. The latency figures are therefore service
// times under that concurrency, not the response times an open stream of
// arrivals at the same rate would see.
func Run(ctx context.Context, clients int, dur time.Duration, maxRequests int, op func(ctx context.Context, client, seq int) error) Stats {
	return run(ctx, clients, dur, maxRequests, op).stats()
}

// sample is the raw outcome of a run: every latency, so that runs can be
// merged before percentiles are taken.
type sample struct {
	clients int
	lat     []time.Duration
	errs    int
	first   error
	elapsed time.Duration // wall time of the measured part
}

func run(ctx context.Context, clients int, dur time.Duration, maxRequests int, op func(ctx context.Context, client, seq int) error) sample {
	clients = max(clients, 1)
	type clientState struct {
		seq     int
		stopped bool
		lat     []time.Duration
		errs    int
		first   error
		end     time.Time
	}
	cs := make([]clientState, clients)
	fail := func(c *clientState, err error) {
		c.errs++
		if c.first == nil {
			c.first = err
		}
	}

	warmup := min(250*time.Millisecond, dur/5)
	warmStart := time.Now()
	var wg sync.WaitGroup
	for i := range cs {
		c := &cs[i]
		wg.Go(func() {
			for ; c.seq < WarmupCalls && ctx.Err() == nil; c.seq++ {
				if c.seq > 0 && time.Since(warmStart) >= warmup {
					return
				}
				err := op(ctx, i, c.seq)
				if errors.Is(err, ErrStop) {
					c.stopped = true
					return
				}
				if err != nil {
					fail(c, err)
				}
			}
		})
	}
	wg.Wait()

	var started atomic.Int64
	start := time.Now()
	deadline := start.Add(dur)
	for i := range cs {
		c := &cs[i]
		c.end = start
		if c.stopped {
			continue
		}
		c.lat = make([]time.Duration, 0, 1024)
		wg.Go(func() {
			defer func() { c.end = time.Now() }()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if maxRequests > 0 && started.Add(1) > int64(maxRequests) {
					return
				}
				t0 := time.Now()
				err := op(ctx, i, c.seq)
				d := time.Since(t0)
				c.seq++
				if errors.Is(err, ErrStop) {
					started.Add(-1) // not a request; another client may have it
					return
				}
				c.lat = append(c.lat, d)
				if err != nil {
					fail(c, err)
				}
			}
		})
	}
	wg.Wait()

	out := sample{clients: clients}
	end := start
	for i := range cs {
		c := &cs[i]
		out.lat = append(out.lat, c.lat...)
		out.errs += c.errs
		if out.first == nil {
			out.first = c.first
		}
		if c.end.After(end) {
			end = c.end
		}
	}
	out.elapsed = end.Sub(start)
	return out
}

// add merges another run of the same clients into s.
func (s *sample) add(o sample) {
	s.clients = o.clients
	s.lat = append(s.lat, o.lat...)
	s.errs += o.errs
	if s.first == nil {
		s.first = o.first
	}
	s.elapsed += o.elapsed
}

// rps is the sample's requests per second.
func (s sample) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(len(s.lat)) / s.elapsed.Seconds()
}

func (s sample) stats() Stats {
	st := Stats{Clients: s.clients, Requests: len(s.lat), Errors: s.errs}
	if s.first != nil {
		st.FirstError = s.first.Error()
	}
	if s.elapsed > 0 {
		st.RPS = float64(st.Requests) / s.elapsed.Seconds()
	}
	all := slices.Clone(s.lat)
	slices.Sort(all)
	st.P50Ms = ms(percentile(all, 50))
	st.P90Ms = ms(percentile(all, 90))
	st.P99Ms = ms(percentile(all, 99))
	if len(all) > 0 {
		st.MaxMs = ms(all[len(all)-1])
	}
	return st
}

// percentile is the nearest-rank percentile of an ascending sample: the
// smallest value with at least p percent of the sample at or below it.
// It is always a measured value, never an interpolation.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
