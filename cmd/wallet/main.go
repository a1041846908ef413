// Command wallet runs the browser wallet: the BFF serving the web app and the
// wasm module, with the payments service embedded in the same process (the
// default, what `make run` starts) or, with --service-url, in front of a
// payments service running elsewhere.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"paywallet/bff"
	"paywallet/internal/inproc"
	"paywallet/internal/serviceconfig"
	"paywallet/shared/wire"
)

func main() {
	if err := run(context.Background(), os.Args[1:], nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "wallet:", err)
		os.Exit(1)
	}
}

// run runs the wallet until ctx ends or a signal arrives. ready, when set,
// is called with the wallet's URL once it accepts connections.
func run(ctx context.Context, args []string, ready func(url string)) error {
	fs := flag.NewFlagSet("wallet", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: wallet [flags]

Runs the wallet web app and its backend-for-frontend. By default the payments
service runs embedded in this process on a SQLite database; with --service-url
the BFF talks to a payments service elsewhere (then --platform-credential and
--otp-signer-public-key are required, and the service flags are ignored).

Flags (each can also be set with the environment variable in brackets):
`)
		fs.PrintDefaults()
	}
	var listen, serviceURL, signerKey, logLevel string
	envString(fs, &listen, "listen", "WALLET_LISTEN", "127.0.0.1:8080", "address the wallet listens on")
	envString(fs, &serviceURL, "service-url", "WALLET_SERVICE_URL", "", "base URL of a remote payments service, e.g. https://payments.example/2025-10-13; empty embeds the service")
	envString(fs, &signerKey, "otp-signer-public-key", "WALLET_OTP_SIGNER_PUBLIC_KEY", "", "with --service-url: the service's OTP target-bundle signer public key (hex) that browsers pin")
	envString(fs, &logLevel, "log-level", "WALLET_LOG_LEVEL", "info", "debug, info, warn or error")
	var svcOpts serviceconfig.Options
	svcOpts.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := newLogger(logLevel)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	base := "http://" + displayAddr(ln.Addr().String())

	cfg := bff.Config{Logger: log, Mode: svcOpts.Mode}
	if serviceURL == "" {
		built, err := svcOpts.Build(ctx, log, base+"/dev/mailbox", true)
		if err != nil {
			ln.Close()
			return err
		}
		defer built.Close()
		workers, stopWorkers := context.WithCancel(ctx)
		defer stopWorkers() // runs before Close
		go built.Service.RunWorkers(workers)
		cfg.ServiceURL = "http://payments.internal" + wire.BasePath
		cfg.Transport = inproc.Transport{Handler: built.Service.Handler()}
		cfg.PlatformCredential = built.PlatformCredential
		cfg.OTPSignerPublicKey = built.Service.SignerPublicKey().UncompressedHex()
		cfg.Mode = string(built.Service.Mode())
		if built.Mailbox != nil {
			cfg.DevMailbox = built.Mailbox.Handler()
		}
	} else {
		cfg.ServiceURL = strings.TrimSuffix(serviceURL, "/")
		cfg.PlatformCredential = svcOpts.PlatformCredential
		cfg.OTPSignerPublicKey = signerKey
	}
	srv, err := bff.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Listener(ln) }()
	log.Info("wallet is up", "url", base, "mode", cfg.Mode)
	fmt.Fprintf(os.Stderr, "\n  Wallet:     %s\n", base)
	if cfg.DevMailbox != nil {
		fmt.Fprintf(os.Stderr, "  OTP e-mail: %s/dev/mailbox  (dev mailbox: codes are shown there, not sent)\n", base)
	}
	fmt.Fprintln(os.Stderr)
	if ready != nil {
		ready(base)
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

func envString(fs *flag.FlagSet, p *string, name, env, def, usage string) {
	if v, ok := os.LookupEnv(env); ok {
		def = v
	}
	fs.StringVar(p, name, def, usage+" ["+env+"]")
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// displayAddr turns a loopback listen address into the localhost URL form a
// browser needs (WebAuthn and secure cookies want "localhost", not an IP).
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		return "localhost:" + port
	}
	return addr
}
