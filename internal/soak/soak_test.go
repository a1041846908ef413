package soak

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"paywallet/service/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Without SOAK_DURATION each round is short enough for `make test`.
const (
	shortPostgres = 7 * time.Second
	shortSQLite   = 5 * time.Second
)

// TestSoak runs the soak on PostgreSQL with two instances and crashes of
// the database, then on SQLite with one instance, from one seed.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs real processes for half a minute")
	}
	seed := rand.Uint64()
	if v := os.Getenv("SOAK_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", v, err)
		}
	}
	pgDur, liteDur := shortPostgres, shortSQLite
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SOAK_DURATION=%q: %v", v, err)
		}
		pgDur, liteDur = d, d
	}
	replay := fmt.Sprintf("SOAK_SEED=%d (replay: make soak SEED=%d DURATION=%s)", seed, seed, pgDur)
	t.Logf("soak seed %s", replay)
	fmt.Fprintf(os.Stderr, "soak: seed %s\n", replay)

	// SOAK_RACE=1 (make soak) builds paymentsd with the race detector,
	// whose reports the round finds in the instances' logs: several times
	// the CPU, too much for the short run of make test.
	bin := filepath.Join(t.TempDir(), "paymentsd")
	args := []string{"build", "-o", bin}
	if os.Getenv("SOAK_RACE") == "1" {
		args = append(args, "-race")
	}
	build := exec.CommandContext(t.Context(), goTool(t), append(args, "paywallet/cmd/paymentsd")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build paymentsd: %v\n%s", err, out)
	}

	round := func(t *testing.T, cfg Config) {
		cfg.Seed, cfg.Binary, cfg.Dir = seed, bin, t.TempDir()
		cfg.Workers, cfg.Customers, cfg.FaultEvery, cfg.DropRate = 3, 3, 1500*time.Millisecond, 0.1
		cfg.Logf = func(format string, args ...any) { t.Logf(format, args...) }
		rep, err := Run(t.Context(), cfg)
		t.Logf("%s", rep)
		if err != nil {
			for _, p := range rep.Problems {
				t.Errorf("%v", p)
			}
			if len(rep.Problems) == 0 {
				t.Error(err)
			}
			for i := range cfg.Instances {
				t.Logf("paymentsd-%d log, last lines:\n%s", i+1, tail(filepath.Join(cfg.Dir, fmt.Sprintf("paymentsd-%d.log", i+1)), 6000))
			}
			t.Errorf("the soak failed with seed %s", replay)
		}
	}
	t.Run("postgres", func(t *testing.T) {
		cluster := pgtest.Start(t)
		url := cluster.NewDatabase(t)
		if err := cluster.Durable(url); err != nil {
			t.Fatal(err)
		}
		round(t, Config{Stream: 1, Duration: pgDur, Database: url, Instances: 2, DB: cluster})
	})
	t.Run("sqlite", func(t *testing.T) {
		round(t, Config{Stream: 2, Duration: liteDur, Instances: 1, Database: filepath.Join(t.TempDir(), "soak.db")})
	})
}

// goTool is the go command that runs this test.
func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	t.Fatal("no go command on PATH to build paymentsd with")
	return ""
}

// TestCrashIn: what in an instance's log is a crash the round reports.
func TestCrashIn(t *testing.T) {
	for _, c := range []struct {
		log   string
		crash bool
	}{
		{"time=… level=WARN msg=\"dev mailbox is on\"\n--- soak: paymentsd-1 exited at …: signal: killed ---", false},
		{"time=… level=ERROR msg=\"settlement worker failed\" err=\"store: begin: conn closed\"", false},
		{"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:", true},
		{"fatal error: concurrent map writes", true},
		{"==================\nWARNING: DATA RACE\nWrite at 0x00c000", true},
		{"time=… level=ERROR msg=\"panic in handler\" path=/2025-10-13/quotes panic=boom", true},
	} {
		if got := crashIn(c.log); (got != "") != c.crash {
			t.Errorf("crashIn(%q) = %q, want a crash: %v", c.log, got, c.crash)
		}
	}
}

// TestWithoutRequestID: two answers to one key that differ only in the
// error body's requestId are the same answer; any other difference is not.
func TestWithoutRequestID(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"status":409,"code":"X","requestId":"req_1"}`, `{"status":409,"code":"X","requestId":"req_2"}`, true},
		{`{"status":409,"code":"X","requestId":"req_1"}`, `{"status":409,"code":"Y","requestId":"req_1"}`, false},
		{`{"id":"Transaction:1","status":"PENDING"}`, `{"id":"Transaction:1","status":"PENDING"}`, true},
		{`{"id":"Transaction:1"}`, `{"id":"Transaction:2"}`, false},
		{`not json`, `not json`, true},
	} {
		if got := string(withoutRequestID([]byte(c.a))) == string(withoutRequestID([]byte(c.b))); got != c.same {
			t.Errorf("%s vs %s: same %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
