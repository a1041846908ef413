package hatest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"paywallet/internal/soak"
)

// Setup is what every round shares: the cluster and the binaries.
type Setup struct {
	Cluster           *Cluster
	Paymentsd, Wallet string
	Seed              uint64
	Logf              func(format string, args ...any)
}

// Round is one failover round.
type Round struct {
	// Kind is kill, freeze or drain (see the package comment).
	Kind string
	// Duration is how long the clients send operations; the fault strikes
	// Warmup into it.
	Duration, Warmup time.Duration
	// Dir holds the processes' logs.
	Dir string
	// N numbers the round (its database, its random streams).
	N int
}

// Figures are what a round measured.
type Figures struct {
	Kind                string
	Lost, Promoted      string        // the primary lost and the node promoted
	Failover            time.Duration // from the fault until the monitor reported a new primary
	Rejoined            time.Duration // from the fault until the three nodes were settled again
	NoWrites            time.Duration // the longest time without a successful write from the fault on
	Answers503, Other5x int64         // attempts answered 503, and any other 5xx
	Unanswered          int64         // requests without an answer within their patience
	Problems            int           // the soak's problems (a missing or doubled write among them)
	Writes              int           // writes answered in the round
	Drain               string        // the drain round: how the instance's exit went
	BFF                 string        // the BFFs' answers by kind and status
	Errors              string        // the most frequent ERROR lines of the instances' logs
	Report              *soak.Report
}

// RequestsLost is the "requests lost": requests that got no
// answer within their patience, and acknowledged writes missing from the
// books (the soak's checks name those "not in the books", and count
// fundings, whose answers name no transaction). It must be 0.
func (f *Figures) RequestsLost() int64 {
	n := f.Unanswered
	if f.Report != nil {
		for _, p := range f.Report.Problems {
			if s := p.Error(); strings.Contains(s, ": not in the books") || strings.Contains(s, "fundings acknowledged") {
				n++
			}
		}
	}
	return n
}

func (f *Figures) String() string {
	verify, statuses := "not run", ""
	if f.Report != nil {
		verify, statuses = f.Report.Verify, fmt.Sprint(f.Report.Statuses)
	}
	return fmt.Sprintf("round %s: primary %s lost, %s promoted after %s, cluster whole again after %s; time without writes %s; "+
		"writes %d; answered 503: %d; other 5xx: %d %s; requests lost: %d (unanswered %d); problems: %d%s\n"+
		"  books: %s\n  BFFs: %s",
		f.Kind, f.Lost, f.Promoted, f.Failover.Round(time.Millisecond), f.Rejoined.Round(time.Millisecond), f.NoWrites.Round(time.Millisecond),
		f.Writes, f.Answers503, f.Other5x, statuses, f.RequestsLost(), f.Unanswered, f.Problems, f.Drain, verify, f.BFF)
}

// RunRound runs one round on a fresh database of the cluster.
func RunRound(ctx context.Context, s Setup, r Round) (*Figures, error) {
	fig := &Figures{Kind: r.Kind}
	logf := func(format string, args ...any) { s.Logf("[%s] "+format, append([]any{r.Kind}, args...)...) }
	if err := os.MkdirAll(filepath.Join(r.Dir, "config"), 0o700); err != nil {
		return fig, err
	}
	db, err := s.Cluster.NewDatabase(ctx, fmt.Sprintf("ha_%d_%s", r.N, r.Kind))
	if err != nil {
		return fig, fmt.Errorf("create the round's database: %w", err)
	}
	key, err := signerKey(ctx, s.Paymentsd, db, r.Dir)
	if err != nil {
		return fig, err
	}
	// The services deliver webhooks to the BFFs through a balancer that
	// listens from now on; the BFFs behind it start with the round.
	hooks, err := newBalancer(nil)
	if err != nil {
		return fig, err
	}
	defer hooks.Close()
	b := &bffs{bin: s.Wallet, dir: r.Dir, database: db, signerKey: key, n: 2, webhooks: hooks, logf: logf}
	for i := range 2 {
		b.emails = append(b.emails, fmt.Sprintf("soak-%d-%d@soak.example.com", s.Seed%1_000_000, i))
	}

	var faultAt, promotedAt, settledAt time.Time
	schedule := func(ctx context.Context, f soak.Fleet) int {
		pause(ctx, r.Warmup)
		if ctx.Err() != nil {
			return 0
		}
		bg := context.Background() // a fault under way is seen through
		var err error
		if r.Kind == "drain" {
			took, clean := f.Drain(0, 40*time.Second)
			fig.Drain = fmt.Sprintf("; %s drained (SIGTERM) in %s, exit 0: %v", f.Name(0), took.Round(time.Millisecond), clean)
			logf("%s drained in %s (exit 0: %v)", f.Name(0), took.Round(time.Millisecond), clean)
			f.Start(bg, 0)
			pause(ctx, 2*time.Second)
		}
		fig.Lost = s.Cluster.Primary(bg)
		faultAt = time.Now()
		switch r.Kind {
		case "freeze":
			err = s.Cluster.Freeze(bg, fig.Lost)
		default:
			err = s.Cluster.Kill(bg, fig.Lost)
		}
		if err != nil {
			f.Problem("%s %s: %v", r.Kind, fig.Lost, err)
			return 1
		}
		logf("primary %s lost (%s)", fig.Lost, r.Kind)
		if fig.Promoted, err = s.Cluster.WaitFor(bg, fig.Lost, 90*time.Second); err != nil {
			f.Problem("%v", err)
		}
		promotedAt = time.Now()
		fig.Failover = promotedAt.Sub(faultAt)
		logf("%s promoted after %s", fig.Promoted, fig.Failover.Round(time.Millisecond))
		// A cut network lasts: the frozen node stays away well past the
		// failover, so that connections to it must be given up on, not
		// waited out. A killed node is started again soon after.
		if r.Kind == "freeze" {
			time.Sleep(10 * time.Second)
		} else {
			time.Sleep(2 * time.Second)
		}
		if r.Kind == "freeze" {
			err = s.Cluster.Thaw(bg, fig.Lost)
		} else {
			err = s.Cluster.Restart(bg, fig.Lost)
		}
		if err != nil {
			f.Problem("bring %s back: %v", fig.Lost, err)
		}
		if err := s.Cluster.WaitSettled(bg, 3*time.Minute); err != nil {
			f.Problem("%v", err)
		}
		settledAt = time.Now()
		fig.Rejoined = settledAt.Sub(faultAt)
		logf("%s back as a standby: the cluster is whole after %s", fig.Lost, fig.Rejoined.Round(time.Millisecond))
		return 1
	}

	cfg := soak.Config{
		Seed: s.Seed, Stream: uint64(100 + r.N), Duration: r.Duration, Binary: s.Paymentsd, Database: db, Instances: 2,
		Dir: r.Dir, Workers: 3, Customers: 3, DropRate: 0.05, Logf: logf, Patience: 60 * time.Second,
		InstanceArgs: []string{"--webhook-url", hooks.URL() + "/webhooks/service"},
		Schedule:     schedule,
		Beside:       b.run,
	}
	rep, err := soak.Run(ctx, cfg)
	fig.Report = rep
	fig.Answers503 = rep.Statuses[503]
	for code, n := range rep.Statuses {
		if code >= 500 && code != 503 {
			fig.Other5x += n
		}
	}
	fig.Unanswered, fig.Problems, fig.Writes = rep.Unanswered, len(rep.Problems), len(rep.Writes)
	if !faultAt.IsZero() {
		fig.NoWrites, _ = soak.LongestGap(rep.Writes, faultAt, time.Now())
	}
	fig.BFF = b.figures()
	fig.Errors = logErrors(r.Dir)
	if fig.Other5x > 0 {
		err = joinErr(err, fmt.Errorf("the service answered %d times with a 5xx other than 503 (%v): a failover must be a 503", fig.Other5x, rep.Statuses))
	}
	return fig, err
}

func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	return fmt.Errorf("%w; %w", a, b)
}

// signerKey starts paymentsd once on the round's database, which migrates
// it and makes the OTP signer key the instances will share, and reads the
// key from its log: the BFFs pin it.
func signerKey(ctx context.Context, bin, db, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--listen", "127.0.0.1:0", "--log-level", "info", "--dev-mailbox"}, soak.ServiceArgs(db)...)...)
	cmd.Env = envFor(dir)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	out, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	re := regexp.MustCompile(`otp_signer_public_key=([0-9a-f]+)`)
	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { //nolint:revive // drain the rest so the process never blocks on its stderr
				for sc.Scan() {
				}
			}()
			return m[1], nil
		}
		seen = append(seen, sc.Text())
	}
	return "", fmt.Errorf("paymentsd did not print its signer key: %s", strings.Join(seen, "\n"))
}

func envFor(dir string) []string { return soak.Env(dir) }

// logErrors are the most frequent ERROR (and 500) lines in the round's
// logs, without their times, for the report.
func logErrors(dir string) string {
	counts := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	strip := regexp.MustCompile(`time=\S+ |request_id=\S+ |\b[0-9a-f]{8}-[0-9a-f-]{27}\b|:[0-9]{4,5}\b`)
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "level=ERROR") {
				counts[filepath.Base(f)[:len(filepath.Base(f))-6]+": "+clip(strip.ReplaceAllString(line, ""))]++
			}
		}
	}
	var lines []string
	for l := range counts {
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool { return counts[lines[i]] > counts[lines[j]] })
	var b strings.Builder
	for i, l := range lines {
		if i == 12 {
			fmt.Fprintf(&b, "  … and %d other kinds\n", len(lines)-i)
			break
		}
		fmt.Fprintf(&b, "  %d× %s\n", counts[l], l)
	}
	return b.String()
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
