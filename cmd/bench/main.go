// Command bench is `make bench`: it measures the wallet side by side with
// the reference implementations and writes a Markdown report, the figures
// as JSON and a PNG chart (README "Benchmarks").
//
// In order, so the browser figures are taken on a quiet machine:
//
//  1. one headless Chromium page: our wasm module against @turnkey/api-key-stamper,
//     @turnkey/crypto and WebCrypto (internal/bench/browser);
//  2. the Go micro-benchmarks of the hot paths (`go test -bench`), and
//     `ledger verify` on SQLite books of 10^6 entries;
//  3. the BFF against a direct call to the service (internal/bench/load);
//  4. the service on SQLite and on PostgreSQL at several concurrencies;
//  5. how list and get grow from 10^3 to 10^5 stored accounts;
//  6. webhooks: throughput on against off, and state change → browser
//     latency through the BFF (events.go);
//  7. the real page's loads on a phone with the CPU slowed 4×, traced:
//     main-thread long tasks, the module ready in its Worker, the second
//     visit's cache hits (internal/bench/pageload, lighthouse.go);
//  8. Lighthouse on the sign-in page and the signed-in Home and Send
//     (lighthouse.go).
//
// PostgreSQL is a throwaway cluster started from the machine's binaries
// (service/store/pgtest) and deleted at the end. Run it from the repository
// root after `make wasm` and bench/js/build.sh (the Makefile does both).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"paywallet/internal/bench/browser"
	"paywallet/internal/bench/load"
	"paywallet/internal/bench/report"
	"paywallet/service/store/pgtest"
)

// microPackages hold the Go benchmarks of the hot paths: stamp sign and
// verify, HPKE seal and open (credential bundle), account validation, the
// Quote's JSON, the rates arithmetic and the BFF's forwarding.
var microPackages = []string{"./shared/walletcrypto", "./shared/accountrules", "./service", "./service/rates", "./bff"}

var steps = []string{"browser", "micro", "ledger", "bff", "service", "scale", "events", "pageload", "lighthouse"}

func main() {
	load.ServeReceiverIfAsked() // the events step's webhook receiver runs as this binary too
	if err := run(context.Background(), os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	out := fs.String("out", "bench/report", "folder the report (report.md), figures (results.json) and chart (chart.png) are written to")
	quick := fs.Bool("quick", false, "run every benchmark once with tiny counts (a smoke run; the figures mean nothing)")
	skip := fs.String("skip", "", "comma-separated steps to leave out: "+strings.Join(steps, ", "))
	from := fs.String("from", "", "measure nothing: write the report and chart again from this results.json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from != "" {
		return rewrite(ctx, *from, *out)
	}
	skipped := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !contains(steps, s) {
				return fmt.Errorf("--skip: unknown step %q (steps: %s)", s, strings.Join(steps, ", "))
			}
			skipped[s] = true
		}
	}
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run from the repository root (make bench does)")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "paywallet-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	r := &report.Report{Quick: *quick, Errors: map[string]string{}, Machine: machine()}
	// The previous report in the folder gives the baseline some budgets
	// are ratios to (report.SetBaseline); a quick run's figures are none.
	if b, err := os.ReadFile(filepath.Join(*out, "results.json")); err == nil {
		var prev report.Report
		if json.Unmarshal(b, &prev) == nil && !prev.Quick {
			r.SetBaseline(&prev)
		}
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	fail := func(step string, err error) {
		logf("%s FAILED: %v", step, err)
		r.Errors[step] = err.Error()
	}

	if !skipped["browser"] {
		logf("browser: wasm against @turnkey and WebCrypto in one Chromium page")
		o := browser.Options{WasmDir: "web/static/wasm", BundlePath: "bench/js/dist/turnkey.js"}
		if *quick {
			o.Iterations, o.Runs, o.Loads = 2, 1, 1
		}
		res, err := browser.Run(ctx, o)
		if err != nil {
			fail("browser", err)
		} else {
			r.Browser, r.Machine.Chromium = res, res.Chromium
		}
	}
	if !skipped["micro"] {
		logf("micro: go test -bench %s", strings.Join(microPackages, " "))
		m, err := goBench(ctx, *quick)
		if err != nil {
			fail("micro", err)
		}
		r.Micro = m
	}

	if !skipped["ledger"] {
		logf("ledger: ledger verify on SQLite books of 10^6 entries (go test -bench VerifyLedger)")
		m, err := ledgerBench(ctx, *quick)
		if err != nil {
			fail("ledger", err)
		}
		r.Ledger = m
	}

	var cluster *pgtest.Cluster
	needPG := !skipped["bff"] || !skipped["service"] || !skipped["scale"] || !skipped["events"]
	if needPG {
		logf("starting a throwaway PostgreSQL cluster")
		cluster, err = pgtest.Launch(ctx)
		if err != nil {
			return fmt.Errorf("PostgreSQL: %w", err)
		}
		defer cluster.Close()
	}
	database := func(name string) (string, error) {
		url, err := cluster.CreateDatabase(name)
		if err == nil && r.Machine.PostgreSQL == "" {
			r.Machine.PostgreSQL = serverVersion(ctx, url)
		}
		return url, err
	}
	opts := func(name string) (load.Options, error) {
		url, err := database(name)
		dir := filepath.Join(tmp, name)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		return load.Options{PostgresURL: url, TempDir: dir, Smoke: *quick, Log: logf}, err
	}
	if !skipped["bff"] {
		logf("bff: forwarded read and login verify, via the BFF and direct")
		o, err := opts("bench_bff")
		if err == nil {
			r.BFF, err = load.RunBFF(ctx, o)
		}
		if err != nil {
			fail("bff", err)
		}
	}
	if !skipped["service"] {
		logf("service: SQLite and PostgreSQL at several concurrencies")
		o, err := opts("bench_service")
		if err == nil {
			r.Service, err = load.RunService(ctx, o)
		}
		if err != nil {
			fail("service", err)
		}
	}
	if !skipped["scale"] {
		logf("scale: list and get with 10^3 to 10^5 stored accounts")
		o, err := opts("bench_scale")
		if err == nil {
			r.Scale, err = load.RunScale(ctx, o)
		}
		if err != nil {
			fail("scale", err)
		}
	}
	if !skipped["events"] {
		logf("events: webhooks on against off, and state change → browser")
		o, err := opts("bench_events")
		if err == nil {
			r.Events, err = load.RunEvents(ctx, o)
		}
		if err != nil {
			fail("events", err)
		}
	}
	if !skipped["pageload"] {
		runPageLoad(ctx, r, logf, fail)
	}
	if !skipped["lighthouse"] {
		runLighthouse(ctx, r, *quick, logf, fail)
	}

	if err := write(ctx, *out, r); err != nil {
		return err
	}
	logf("wrote %s", filepath.Join(*out, "report.md"))
	if len(r.Errors) > 0 {
		return fmt.Errorf("%d step(s) failed; see %s", len(r.Errors), filepath.Join(*out, "report.md"))
	}
	return nil
}

// rewrite renders the report and chart of an earlier run again.
func rewrite(ctx context.Context, results, dir string) error {
	b, err := os.ReadFile(results)
	if err != nil {
		return err
	}
	r := &report.Report{}
	if err := json.Unmarshal(b, r); err != nil {
		return fmt.Errorf("%s: %w", results, err)
	}
	if r.Errors == nil {
		r.Errors = map[string]string{}
	}
	delete(r.Errors, "chart")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return write(ctx, dir, r)
}

// write stores results.json, chart.png and report.md in dir. The chart
// needs Chromium; if it cannot be drawn the report says so.
func write(ctx context.Context, dir string, r *report.Report) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	chart := "chart.png"
	png, err := screenshot(ctx, r.ChartHTML())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, chart), png, 0o644)
	}
	if err != nil {
		r.Errors["chart"] = err.Error()
		chart = ""
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown(chart)), 0o644)
}

// goBench runs the micro-benchmarks, five runs each (one tiny run when
// quick), and summarises them.
func goBench(ctx context.Context, quick bool) ([]report.Micro, error) {
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "5"}
	if quick {
		args = []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1", "-benchtime", "1x"}
	}
	cmd := exec.CommandContext(ctx, "go", append(args, microPackages...)...)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	m := report.ParseGoBench(out.String())
	if err != nil {
		return m, fmt.Errorf("go test -bench: %w", err)
	}
	if len(m) == 0 {
		return nil, errors.New("go test -bench printed no results")
	}
	return m, nil
}

// ledgerBench runs BenchmarkVerifyLedger (service/store/sqlstore): it
// builds SQLite books of 10^6 entries once (10^4 when quick) and verifies
// them three times (once).
func ledgerBench(ctx context.Context, quick bool) (*report.Micro, error) {
	entries, times := "1000000", "3x"
	if quick {
		entries, times = "10000", "1x"
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkVerifyLedger$", "-benchtime", times,
		"-count", "1", "./service/store/sqlstore/")
	cmd.Env = append(os.Environ(), "PAYWALLET_BENCH_LEDGER_ENTRIES="+entries)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	for _, m := range report.ParseGoBench(out.String()) {
		if m.Name == "VerifyLedger" && err == nil {
			return &m, nil
		}
	}
	if err == nil {
		err = errors.New("no result")
	}
	return nil, fmt.Errorf("go test -bench VerifyLedger: %w\n%s", err, out.String())
}

// machine describes this computer.
func machine() report.Machine {
	m := report.Machine{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Cores: runtime.NumCPU(), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`) + ", " + m.OS
			}
		}
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			m.Commit += " (with uncommitted changes)"
		}
	}
	return m
}

// serverVersion asks PostgreSQL for its version.
func serverVersion(ctx context.Context, url string) string {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return ""
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return ""
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
