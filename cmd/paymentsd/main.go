// Command paymentsd runs the payments service alone: the HTTP interface of
// the spec under /2025-10-13, for BFFs (ours or an integrator's) to call with
// the platform credential.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"paywallet/internal/serviceconfig"
	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

func main() {
	os.Exit(command(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// command runs what args ask for (the server, `deposit`, `ledger`, or the
// developer's `listen` and `trigger`) and returns the process's exit code:
// 0, or 1 with the error on errOut.
func command(ctx context.Context, args []string, out, errOut io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "deposit":
		err = runDeposit(ctx, args[1:], out, errOut)
	case len(args) > 0 && args[0] == "ledger":
		err = runLedger(ctx, args[1:], out, errOut)
	case len(args) > 0 && args[0] == "listen":
		err = runListen(ctx, args[1:], out, errOut, nil)
	case len(args) > 0 && args[0] == "trigger":
		err = runTrigger(ctx, args[1:], out, errOut)
	default:
		err = run(ctx, args, nil)
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(errOut, "paymentsd:", err)
	return 1
}

// run serves until ctx ends or a signal arrives. ready, when set, is called
// with the service's base URL once it accepts connections.
func run(ctx context.Context, args []string, ready func(baseURL string)) error {
	fs := flag.NewFlagSet("paymentsd", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: paymentsd [flags]
       paymentsd deposit -reference REF -amount N -currency CUR [flags]
       paymentsd ledger verify --database DB [--anchor FILE]
       paymentsd listen --forward-to URL [--events TYPE,…] [--service URL --credential ID:SECRET]
       paymentsd trigger TYPE [--service URL --credential ID:SECRET]

Runs the payments service (API version 2025-10-13). Every platform endpoint
requires HTTP Basic with the platform credential. On start it prints the OTP
target-bundle signer public key that BFFs give browsers to pin.
"paymentsd deposit -h" tells how to record money that arrived by bank
transfer; "paymentsd ledger verify -h" how to check the books (the hash
chain, the balances, every payment's ledger transactions). For developers,
against a running service in sandbox mode: "paymentsd listen -h" forwards its
webhooks to a receiver on your machine, "paymentsd trigger -h" makes it emit
an event of a type.

Flags (each can also be set with the environment variable in brackets):
`)
		fs.PrintDefaults()
	}
	var listen, logLevel string
	listenDef := "127.0.0.1:8081"
	if v, ok := os.LookupEnv("PAYMENTS_LISTEN"); ok {
		listenDef = v
	}
	fs.StringVar(&listen, "listen", listenDef, "address the service listens on [PAYMENTS_LISTEN]")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	drainDef := 5 * time.Second
	if v, ok := os.LookupEnv("PAYMENTS_DRAIN_DELAY"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("PAYMENTS_DRAIN_DELAY=%q: want a duration such as 5s", v)
		}
		drainDef = d
	}
	var drainDelay time.Duration
	fs.DurationVar(&drainDelay, "drain-delay", drainDef,
		"on SIGTERM, how long /readyz answers 503 \"draining\" while requests are still served, so load balancers stop sending new ones, before the server stops taking connections and waits for those in flight [PAYMENTS_DRAIN_DELAY]")
	var tel telemetry.Options
	tel.Register(fs, "PAYMENTS")
	var opts serviceconfig.Options
	opts.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if drainDelay < 0 {
		return errors.New("--drain-delay must not be negative")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	// Every line logged with a request's context carries its request_id.
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
	// stopping ends on SIGINT, SIGTERM or the caller's ctx: the drain
	// begins. Startup, the workers and the listeners have contexts of
	// their own, ended in order once the drain is over.
	stopping, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Metrics and traces, when asked for.
	telemetryCtx, stopTelemetry := context.WithCancel(context.WithoutCancel(ctx))
	defer stopTelemetry()
	if tel.MetricsListen != "" {
		opts.Registry = telemetry.NewRegistry()
		addr, err := telemetry.ServeMetrics(telemetryCtx, tel.MetricsListen, opts.Registry)
		if err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		log.Info("metrics are served", "url", "http://"+addr+"/metrics")
	}
	if tel.TracingOn() {
		tp, stopTracing, err := telemetry.StartTracing(stopping, tel, "paymentsd", log)
		if err != nil {
			return fmt.Errorf("--otlp-endpoint: %w", err)
		}
		defer stopTracing()
		opts.TracerProvider = tp
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	built, err := opts.Build(stopping, log, "http://"+ln.Addr().String()+"/dev/mailbox", false)
	if err != nil {
		ln.Close()
		return err
	}
	defer built.Close()
	workers, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		built.Service.RunWorkers(workers)
	}()

	mux := http.NewServeMux()
	mux.Handle("/", built.Service.Handler())
	if built.Mailbox != nil {
		box := withRequestID(http.StripPrefix("/dev/mailbox", built.Mailbox.Handler()))
		mux.Handle("/dev/mailbox", box)
		mux.Handle("/dev/mailbox/", box)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("payments service is up", "url", "http://"+ln.Addr().String()+"/2025-10-13", "mode", built.Service.Mode(),
		"otp_signer_public_key", built.Service.SignerPublicKey().UncompressedHex())
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}

	select {
	case err := <-errc:
		stopWorkers()
		<-workersDone
		return err
	case <-stopping.Done():
	}
	// A second SIGTERM or Ctrl-C during the drain ends the process at
	// once, as it would without the handler.
	stop()
	return drain(log, built.Service, srv, drainDelay, stopWorkers, workersDone)
}

// withRequestID gives the answers of a handler beside the service's (the
// dev mailbox) a Request-Id as the service gives its own: the caller's
// when valid, else a new one; in the request's context for its log lines.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := telemetry.RequestIDOf(r.Header.Get(wire.HeaderRequestID))
		w.Header().Set(wire.HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(telemetry.WithRequestID(r.Context(), id)))
	})
}

// drainTimeout bounds how long a stop waits for the requests in flight.
const drainTimeout = 20 * time.Second

// drain stops the service gracefully (SIGTERM): /readyz answers 503
// "draining" at once while every request is still served for delay, so a
// load balancer takes the instance out of rotation before it refuses
// connections; then the server stops taking connections and waits for the
// requests in flight (up to drainTimeout); then the workers stop; the
// caller's deferred Close closes the store last. A stop that ends in time
// returns nil (exit code 0).
func drain(log *slog.Logger, svc interface{ Drain() }, srv *http.Server, delay time.Duration, stopWorkers func(), workersDone <-chan struct{}) error {
	svc.Drain()
	log.Info("stopping: /readyz answers 503 draining; still serving", "drain_delay", delay)
	if delay > 0 {
		time.Sleep(delay)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	err := srv.Shutdown(shutdown)
	if err != nil {
		log.Warn("stopping: requests still in flight were cut off", "err", err)
	}
	stopWorkers()
	<-workersDone
	log.Info("stopped")
	return err
}
