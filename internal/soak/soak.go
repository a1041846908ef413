package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
)

// Config is one round of the soak: a database, the service instances on
// it, and the faults.
type Config struct {
	// Seed chooses every random draw of the round: the operations and their
	// amounts, the outcomes, the races, the faults and when they strike.
	Seed uint64
	// Stream tells the rounds of one seed apart (each round draws from its
	// own streams of the seed).
	Stream uint64
	// Duration is how long operations are sent (and faults injected).
	Duration time.Duration
	// Binary is the paymentsd binary.
	Binary string
	// Database is a postgres:// URL, or a SQLite file path.
	Database string
	// Instances is how many paymentsd processes serve the database.
	Instances int
	// DB crashes the database; nil: only the instances are killed.
	DB Crasher
	// Dir holds the instances' logs and configuration.
	Dir string
	// Workers is how many clients send operations at once; Customers how
	// many customers they share.
	Workers, Customers int
	// FaultEvery is the mean pause between faults.
	FaultEvery time.Duration
	// DropRate is the share of answers the client loses on purpose (see
	// client.dropRate).
	DropRate float64
	// Logf reports progress.
	Logf func(format string, args ...any)

	// The failover test's hooks (internal/hatest); zero values keep the
	// soak as it is.

	// Schedule, when set, replaces the random faults: it runs beside the
	// operations from their start until ctx ends, may stop and start the
	// instances through the Fleet, and answers how many faults it caused.
	Schedule func(ctx context.Context, f Fleet) int
	// Beside, when set, runs beside the operations (other load on the same
	// system, e.g. BFFs in front of the instances) with the instances'
	// base URLs; it returns when ctx ends, and its error is a problem.
	Beside func(ctx context.Context, services []string) error
	// InstanceArgs are more flags for every instance (after the soak's).
	InstanceArgs []string
	// Patience is how long one request is retried before it counts as
	// unanswered (default 90 s).
	Patience time.Duration
}

// The service's settings for a soak: sandbox mode (funding, the outcome
// patterns, the sandbox signature), payments that settle a moment after
// they are executed, and quotes that expire within a run.
const (
	credential      = "soak:soak-platform-secret"
	dataKey         = "5c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a15c0a"
	settlementDelay = 300 * time.Millisecond
	quoteTTL        = 3 * time.Second
)

func (c Config) faults() bool { return c.FaultEvery > 0 }

func (c Config) quoteTTL() time.Duration { return quoteTTL }

// serviceArgs are the flags both the server and `paymentsd deposit` take.
func (c Config) serviceArgs() []string {
	return []string{"--database", c.Database, "--mode", "sandbox", "--data-key", dataKey,
		"--settlement-delay", settlementDelay.String(), "--quote-ttl", quoteTTL.String()}
}

// env is the processes' environment: the test's without the service's own
// variables (a developer's WALLET_DATABASE must not leak in), with the
// platform credential.
func (c Config) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "WALLET_") || strings.HasPrefix(kv, "PAYMENTS_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "WALLET_PLATFORM_CREDENTIAL="+credential, "XDG_CONFIG_HOME="+filepath.Join(c.Dir, "config"))
}

// Report is what a round did and found.
type Report struct {
	Counts                       map[string]int // operations drawn, and refusals by kind
	Faults                       int
	Attempts, Lost, FiveXX       int64
	Dropped                      int64
	Payments, Executed           int
	Transfers, Fundings          int
	Deposits, LedgerTransactions int
	Verify                       string // what `paymentsd ledger verify` counted
	// Statuses counts the attempts answered 5xx or 429, by status.
	Statuses map[int]int64
	// Unanswered counts the requests that got no answer within the
	// client's patience (each is also a problem).
	Unanswered int64
	// Writes are when each write (a POST) was answered 2xx, in order:
	// the failover test's time without writes.
	Writes   []time.Time
	Problems []error
}

func (r *Report) String() string {
	var ops []string
	for k, v := range r.Counts {
		ops = append(ops, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(ops)
	return fmt.Sprintf("counts: %s; faults %d; HTTP attempts %d, answers lost %d (and %d dropped on purpose), 5xx %d; payments %d (executed %d), transfers %d, fundings %d, deposits %d; ledger transactions %d; verify: %s; problems %d",
		strings.Join(ops, " "), r.Faults, r.Attempts, r.Lost, r.Dropped, r.FiveXX, r.Payments, r.Executed, r.Transfers, r.Fundings, r.Deposits,
		r.LedgerTransactions, r.Verify, len(r.Problems))
}

// Run runs one round: it starts the instances, makes the customers, sends
// operations from cfg.Workers clients for cfg.Duration while faults strike,
// waits until every payment has settled and the books are sealed, stops
// the instances and checks the books against what the service answered.
// The error joins every problem found.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "config"), 0o700); err != nil {
		return rep, err
	}
	instances := make([]*instance, cfg.Instances)
	for i := range instances {
		name := fmt.Sprintf("paymentsd-%d", i+1)
		instances[i] = &instance{name: name, bin: cfg.Binary, env: cfg.env(), logs: filepath.Join(cfg.Dir, name+".log"),
			args: append(append([]string{"--dev-mailbox", "--log-level", "warn"}, cfg.serviceArgs()...), cfg.InstanceArgs...)}
	}
	defer func() {
		for _, in := range instances {
			in.stop()
		}
	}()
	for _, in := range instances {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := in.start(sctx)
		cancel()
		if err != nil {
			return rep, fmt.Errorf("start %s: %w (log: %s)", in.name, err, in.logs)
		}
	}
	patience := cfg.Patience
	if patience == 0 {
		patience = 90 * time.Second
	}
	w := &world{cfg: cfg, c: newClient(instances, credential, patience), counts: map[string]int{}}
	stream := func(n uint64) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, cfg.Stream*1000+n)) }
	t0 := time.Now()
	if err := w.setup(ctx, stream(0), cfg.Customers); err != nil {
		return rep, fmt.Errorf("setup: %w", err)
	}
	w.c.dropRate = cfg.DropRate
	cfg.Logf("%d instances up and %d customers made in %s", len(instances), cfg.Customers, time.Since(t0).Round(time.Millisecond))

	start := time.Now()
	opsCtx, stopOps := context.WithTimeout(ctx, cfg.Duration)
	defer stopOps()
	faultsDone := make(chan int, 1)
	besideDone := make(chan error, 1)
	if cfg.Beside != nil {
		var urls []string
		for _, in := range instances {
			urls = append(urls, in.base())
		}
		go func() { besideDone <- cfg.Beside(opsCtx, urls) }()
	} else {
		besideDone <- nil
	}
	if cfg.Schedule != nil {
		go func() { faultsDone <- cfg.Schedule(opsCtx, Fleet{w: w, instances: instances}) }()
	} else if cfg.faults() {
		go func() { faultsDone <- w.faults(opsCtx, stream(1), instances, start) }()
	} else {
		faultsDone <- 0
	}
	var workers sync.WaitGroup
	for i := range cfg.Workers {
		wk := &worker{w: w, rnd: stream(uint64(10 + i)), id: i}
		workers.Go(func() {
			for opsCtx.Err() == nil && ctx.Err() == nil {
				wk.step(ctx) // an operation under way when the time is up is finished
				time.Sleep(time.Duration(wk.rnd.Int64N(int64(40 * time.Millisecond))))
			}
		})
	}
	workers.Wait()
	rep.Faults = <-faultsDone
	if err := <-besideDone; err != nil {
		w.problem("%v", err)
	}
	cfg.Logf("operations done after %s; waiting for settlement", time.Since(start).Round(time.Millisecond))
	for _, in := range instances {
		if !in.running() {
			w.problem("%s is not running after the faults; its log ends:\n%s", in.name, tail(in.logs, 3000))
			w.restart(ctx, in)
		}
	}

	st, err := sqlstore.Open(ctx, cfg.Database)
	if err != nil {
		return rep, fmt.Errorf("open the database for the checks: %w", err)
	}
	defer st.Close()
	if err := quiesce(ctx, st, 90*time.Second); err != nil {
		w.problem("%v", err)
	}
	if err := sealed(ctx, st, 30*time.Second); err != nil {
		w.problem("%v", err)
	}
	cfg.Logf("settled and sealed after %s", time.Since(start).Round(time.Millisecond))
	for _, in := range instances {
		in.stop()
		if crash := crashIn(tail(in.logs, 1<<30)); crash != "" {
			w.problem("%s crashed by itself (or raced, when built with -race): %s", in.name, crash)
		}
	}

	w.check(ctx, st, rep)
	rep.Verify = runLedgerVerify(ctx, cfg, w)
	rep.Counts = w.counts
	rep.Attempts, rep.Lost, rep.FiveXX, rep.Dropped = w.c.attempts.Load(), w.c.lost.Load(), w.c.fiveXX.Load(), w.c.dropped.Load()
	rep.Statuses, rep.Unanswered, rep.Writes = w.c.figures()
	rep.Problems = append(rep.Problems, w.problems...)
	return rep, errors.Join(rep.Problems...)
}

// quiesce waits until no transaction has a step to come (settlement, a
// return, a quote's expiry): the books are final.
func quiesce(ctx context.Context, st *sqlstore.DB, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var due []store.Transaction
		err := st.Tx(ctx, func(tx store.Tx) error {
			var err error
			due, err = tx.DueTransactions(ctx, time.Now().Add(24*time.Hour), 5) // every step to come, due or not
			return err
		})
		if err == nil && len(due) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var left []string
			for _, x := range due {
				left = append(left, fmt.Sprintf("%s %s (outcome %q) next step %s", x.ID, x.Status, x.Outcome, x.NextStepAt.Format(time.StampMilli)))
			}
			return fmt.Errorf("settlement did not finish in %s: %v; still due: %s", limit, err, strings.Join(left, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sealed waits until the instances' sealer has chained every ledger
// transaction (it runs with the settlement worker's tick, a quarter
// second): a sealer that leaves some waiting is a problem of the round.
func sealed(ctx context.Context, st *sqlstore.DB, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		r, err := st.VerifyLedger(ctx, sqlstore.VerifyOptions{})
		var problem *ledger.Problem
		if (err == nil || errors.As(err, &problem)) && r.Unsealed == 0 {
			return nil // the problems are the checks' to report
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the sealer left %d ledger transactions unsealed for %s (%v)", r.Unsealed, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// runLedgerVerify checks the books with paymentsd itself: `paymentsd
// ledger verify --database …` on the round's database (the chain, every
// ledger transaction's shape and balance, each payment's ledger
// transactions against its status, the cached balances); a failure is a
// problem of the round. It answers what the command counted.
func runLedgerVerify(ctx context.Context, cfg Config, w *world) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Binary, "ledger", "verify", "--database", cfg.Database)
	cmd.Env = cfg.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.problem("paymentsd ledger verify: %v\n%s", err, out)
		return "FAILED"
	}
	// What it counted, for the report.
	var said []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ledger transactions") || strings.HasPrefix(line, "payments") || strings.HasPrefix(line, "ledger verify:") {
			said = append(said, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(said, "; ")
}

// crashIn finds a Go crash in a process's output: a panic (or one a
// handler recovered from), a fatal runtime error, or a data race the race
// detector saw. It answers the first such line and what follows it, or "".
func crashIn(log string) string {
	for _, marker := range []string{"WARNING: DATA RACE", "panic: ", "fatal error: ", "panic in handler"} {
		if i := strings.Index(log, marker); i >= 0 {
			end := min(len(log), i+2000)
			return log[i:end]
		}
	}
	return ""
}

// tail is the end of a log file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
