package hatest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFailover runs the failover rounds on a pg_auto_failover cluster of
// its own (see the package comment). HATEST_ROUNDS lists them (default
// "kill", a short round for make test; make ha-test: kill,freeze,drain),
// HATEST_DURATION is each round's time of operations, HATEST_SEED replays
// a seed, HATEST_BIN names prebuilt binaries. It skips when pg_autoctl is not installed.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("the failover test runs a PostgreSQL cluster and real processes for minutes")
	}
	if _, err := exec.LookPath("pg_autoctl"); err != nil {
		t.Skip("pg_autoctl is not installed (make pg-auto-failover installs it)")
	}
	rounds := []string{"kill"}
	if v := os.Getenv("HATEST_ROUNDS"); v != "" {
		rounds = strings.Split(v, ",")
	}
	duration := 30 * time.Second
	if v := os.Getenv("HATEST_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("HATEST_DURATION=%q: %v", v, err)
		}
		duration = d
	}
	seed := rand.Uint64()
	if v := os.Getenv("HATEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("HATEST_SEED=%q: %v", v, err)
		}
	}
	t.Logf("seed %d (replay: HATEST_SEED=%d)", seed, seed)

	// HATEST_BIN names a directory with paymentsd and wallet built
	// elsewhere (e.g. from a merge of branches not yet on this one).
	bin := os.Getenv("HATEST_BIN")
	if bin == "" {
		bin = t.TempDir()
		build := exec.CommandContext(t.Context(), "go", "build", "-o", bin+"/", "paywallet/cmd/paymentsd", "paywallet/cmd/wallet")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}

	// The cluster's directory must be reachable by the user postgres.
	dir, err := os.MkdirTemp("", "hatest-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	cluster, err := StartCluster(t.Context(), dir, t.Logf)
	t.Cleanup(func() {
		if cluster != nil {
			if err := cluster.Stop(); err != nil {
				t.Error(err)
			}
		} else {
			_, _ = (&Cluster{script: Script(), dir: dir}).run(t.Context(), time.Minute, "stop")
		}
		if !t.Failed() || os.Getenv("HATEST_KEEP") == "" {
			os.RemoveAll(dir)
		}
	})
	if err != nil {
		t.Fatalf("start the cluster: %v\n%s", err, (&Cluster{dir: dir}).Logs(3000))
	}
	t.Logf("cluster up in %s: %s", time.Since(t0).Round(time.Millisecond), cluster.URL)

	s := Setup{Cluster: cluster, Paymentsd: filepath.Join(bin, "paymentsd"), Wallet: filepath.Join(bin, "wallet"), Seed: seed, Logf: t.Logf}
	var all []string
	for n, kind := range rounds {
		ok := t.Run(kind, func(t *testing.T) {
			r := Round{Kind: kind, Duration: duration, Warmup: 6 * time.Second, Dir: t.TempDir(), N: n + 1}
			fig, err := RunRound(t.Context(), s, r)
			all = append(all, fig.String())
			fmt.Fprintf(os.Stderr, "hatest: %s\n", fig)
			t.Logf("%s", fig)
			if fig.Report != nil {
				t.Logf("soak: %s", fig.Report)
			}
			if fig.Errors != "" {
				t.Logf("ERROR lines in the logs, most frequent first:\n%s", fig.Errors)
			}
			if err != nil {
				if fig.Report != nil {
					for _, p := range fig.Report.Problems {
						t.Errorf("%v", p)
					}
				}
				t.Errorf("round %s (seed %d): %v", kind, seed, err)
				for _, name := range []string{"paymentsd-1", "paymentsd-2", "wallet-1", "wallet-2"} {
					data, _ := os.ReadFile(filepath.Join(r.Dir, name+".log"))
					if len(data) > 4000 {
						data = data[len(data)-4000:]
					}
					t.Logf("%s.log, last lines:\n%s", name, data)
				}
			}
			if n := fig.RequestsLost(); n > 0 {
				t.Errorf("%d requests lost (no answer within their patience, or acknowledged and missing from the books)", n)
			}
		})
		if !ok {
			t.Logf("cluster logs:\n%s", cluster.Logs(4000))
		}
	}
	fmt.Fprintf(os.Stderr, "hatest: figures of %d rounds (seed %d):\n  %s\n", len(all), seed, strings.Join(all, "\n  "))
}
