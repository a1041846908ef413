package soak

import (
	"context"
	"net/http"
	"sort"
	"syscall"
	"time"
)

// Fleet is the round's paymentsd instances, for a Config.Schedule that
// chooses its own faults (the failover test drains one mid-load).
type Fleet struct {
	w         *world
	instances []*instance
}

// Len is how many instances there are.
func (f Fleet) Len() int { return len(f.instances) }

// Name is instance i's name (paymentsd-1, …), as in its log file's name.
func (f Fleet) Name(i int) string { return f.instances[i].name }

// URL is instance i's base URL (without the API version path).
func (f Fleet) URL(i int) string { return f.instances[i].base() }

// Logf reports progress in the round's log.
func (f Fleet) Logf(format string, args ...any) { f.w.cfg.Logf(format, args...) }

// Problem records a problem of the round.
func (f Fleet) Problem(format string, args ...any) { f.w.problem(format, args...) }

// Drain stops instance i as a deployment does (SIGTERM: it drains and
// exits) and waits until it has exited, for up to limit; then it is
// killed. It answers how long the exit took and whether it exited by
// itself with status 0.
func (f Fleet) Drain(i int, limit time.Duration) (time.Duration, bool) {
	in := f.instances[i]
	in.mu.Lock()
	cmd, exit := in.cmd, in.exit
	in.mu.Unlock()
	if cmd == nil {
		return 0, false
	}
	t0 := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exit:
		return time.Since(t0), cmd.ProcessState.Success()
	case <-time.After(limit):
		in.kill()
		return time.Since(t0), false
	}
}

// Start starts instance i again (after Drain) on its address.
func (f Fleet) Start(ctx context.Context, i int) { f.w.restart(ctx, f.instances[i]) }

// note counts an attempt's answer for the figures.
func (c *client) note(method string, a answer, err error) {
	if err != nil {
		return
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	switch {
	case a.status >= 500 || a.status == http.StatusTooManyRequests:
		if c.statuses == nil {
			c.statuses = map[int]int64{}
		}
		c.statuses[a.status]++
	case method == http.MethodPost && a.status < 300:
		c.writes = append(c.writes, time.Now())
	}
}

// figures are the counts the failover test prints.
func (c *client) figures() (map[int]int64, int64, []time.Time) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	st := map[int]int64{}
	for k, v := range c.statuses {
		st[k] = v
	}
	w := append([]time.Time(nil), c.writes...)
	sort.Slice(w, func(i, j int) bool { return w[i].Before(w[j]) })
	return st, c.unanswered.Load(), w
}

// LongestGap is the longest time between two successive writes in ts
// (sorted) that ends after from and starts before to, with its start: the
// time without writes around a fault.
func LongestGap(ts []time.Time, from, to time.Time) (time.Duration, time.Time) {
	var gap time.Duration
	var at time.Time
	for i := 1; i < len(ts); i++ {
		if ts[i].Before(from) || !ts[i-1].Before(to) {
			continue
		}
		if d := ts[i].Sub(ts[i-1]); d > gap {
			gap, at = d, ts[i-1]
		}
	}
	return gap, at
}

// ServiceArgs are the flags the soak gives paymentsd for database (the
// failover test starts one to read the signer key the instances share).
func ServiceArgs(database string) []string { return Config{Database: database}.serviceArgs() }

// Env is the environment the soak gives its processes (dir holds their
// configuration), with the platform credential.
func Env(dir string) []string { return Config{Dir: dir}.env() }

// Credential is the platform credential of the soak's instances, ID:SECRET.
const Credential = credential
