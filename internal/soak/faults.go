package soak

import (
	"context"
	"math/rand/v2"
	"time"
)

// Crasher crashes the database under the running service and starts it
// again (pgtest.Cluster does it for PostgreSQL).
type Crasher interface {
	// Crash stops the database at once, as a power cut would.
	Crash(ctx context.Context) error
	// Restart starts it again where it was; it recovers from its log.
	Restart(ctx context.Context) error
}

// faults injects failures at random points until ctx ends, then leaves
// everything running: every instance up and the database too. The
// faults, each followed by a pause drawn from about cfg.FaultEvery:
//
//   - kill one instance (SIGKILL) and start it again after up to a second;
//   - kill every instance at once, and start them again;
//   - (with a Crasher) crash the database (an immediate shutdown: every
//     connection breaks, transactions in flight are lost, the log is
//     replayed at start) and start it again after up to 1.5 s, sometimes
//     killing an instance while it is down.
//
// `paymentsd deposit` runs are killed too, by the deposit operation.
func (w *world) faults(ctx context.Context, rnd *rand.Rand, instances []*instance, start time.Time) int {
	n := 0
	pause := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	// Restarts use their own context: a fault in progress when the run
	// ends is finished, never left half-done.
	bg := context.Background()
	for pause(w.cfg.FaultEvery/2 + time.Duration(rnd.Int64N(int64(w.cfg.FaultEvery)))) {
		n++
		at := time.Since(start).Round(time.Millisecond)
		down := time.Duration(rnd.Int64N(int64(time.Second)))
		r := rnd.IntN(10)
		switch {
		case w.cfg.DB != nil && r < 4:
			down = 100*time.Millisecond + time.Duration(rnd.Int64N(int64(1400*time.Millisecond)))
			victim, also := -1, ""
			if rnd.IntN(3) == 0 {
				victim = rnd.IntN(len(instances))
				also = ", and " + instances[victim].name + " killed while it is down"
			}
			w.cfg.Logf("fault %d at %s: database crash, down %s%s", n, at, down, also)
			if err := w.cfg.DB.Crash(bg); err != nil {
				w.problem("crash the database: %v", err)
			}
			if victim >= 0 {
				instances[victim].kill()
			}
			time.Sleep(down)
			if err := w.cfg.DB.Restart(bg); err != nil {
				w.problem("restart the database: %v", err)
				return n
			}
			if victim >= 0 {
				w.restart(bg, instances[victim])
			}
		case len(instances) > 1 && r < 5:
			w.cfg.Logf("fault %d at %s: every instance killed, down %s", n, at, down)
			for _, in := range instances {
				in.kill()
			}
			time.Sleep(down)
			for _, in := range instances {
				w.restart(bg, in)
			}
		default:
			in := instances[rnd.IntN(len(instances))]
			w.cfg.Logf("fault %d at %s: %s killed, down %s", n, at, in.name, down)
			in.kill()
			time.Sleep(down)
			w.restart(bg, in)
		}
	}
	return n
}

func (w *world) restart(ctx context.Context, in *instance) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := in.restart(ctx); err != nil {
		w.problem("restart %s: %v", in.name, err)
	}
}
