// Command wallet runs the browser wallet: the BFF serving the web app and the
// wasm module, with the payments service embedded in the same process (the
// default, what `make run` starts) or, with --service-url, in front of a
// payments service running elsewhere.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/internal/devoidc"
	"paywallet/internal/inproc"
	"paywallet/internal/serviceconfig"
	"paywallet/internal/telemetry"
	"paywallet/service/oidc"
	"paywallet/shared/wire"
)

func main() {
	if err := run(context.Background(), os.Args[1:], hooks{}); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "wallet:", err)
		os.Exit(1)
	}
}

// hooks are the tests' view into run; all may be nil.
type hooks struct {
	// ready is called with the wallet's URL once it accepts connections.
	ready func(url string)
	// metrics is called with the address of the --metrics-listen listener.
	metrics func(addr string)
	// draining is called when the drain has begun (/readyz answers 503).
	draining func()
	// tracerProvider replaces the one --otlp-endpoint makes (an in-memory
	// exporter in the trace test).
	tracerProvider trace.TracerProvider
}

// run runs the wallet until ctx ends or a signal arrives, then drains:
// /readyz answers 503 at once, requests are served for --drain-delay
// more, then the server stops (event streams end, requests in flight get
// up to drainTimeout), then the embedded service's workers, then the
// databases close.
func run(ctx context.Context, args []string, h hooks) error {
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
	var listen, serviceURL, signerKey, logLevel, oauthIssuer, oauthClientID, oauthName, devOIDCAddr, sessionsDB, trustedProxies string
	var devOIDC bool
	var drainDelay time.Duration
	drainDef := 5 * time.Second
	if v, ok := os.LookupEnv("WALLET_DRAIN_DELAY"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("WALLET_DRAIN_DELAY: %w", err)
		}
		drainDef = d
	}
	fs.DurationVar(&drainDelay, "drain-delay", drainDef,
		"on SIGTERM, how long /readyz answers 503 \"draining\" while requests are still served, so that load balancers stop sending new ones, before the server stops (event streams end, requests in flight get up to 20s) [WALLET_DRAIN_DELAY]")
	var tel telemetry.Options
	tel.Register(fs, "WALLET")
	envString(fs, &listen, "listen", "WALLET_LISTEN", "127.0.0.1:8080", "address the wallet listens on")
	envString(fs, &serviceURL, "service-url", "WALLET_SERVICE_URL", "", "base URL of a remote payments service, e.g. https://payments.example/2025-10-13; empty embeds the service")
	envString(fs, &signerKey, "otp-signer-public-key", "WALLET_OTP_SIGNER_PUBLIC_KEY", "", "with --service-url: the service's OTP target-bundle signer public key (hex) that browsers pin")
	envString(fs, &sessionsDB, "sessions-database", "WALLET_SESSIONS_DATABASE", "",
		"postgres:// URL where the BFF keeps cookie sessions and login rate limits, so that several wallet instances behind one load balancer share them (default: this process's memory)")
	envString(fs, &trustedProxies, "trusted-proxies", "WALLET_TRUSTED_PROXIES", "",
		"comma-separated IP addresses or CIDR ranges of the load balancers in front of the wallet, whose X-Forwarded-For and X-Forwarded-Proto are believed (default: none; the wallet is reached directly)")
	envString(fs, &logLevel, "log-level", "WALLET_LOG_LEVEL", "info", "debug, info, warn or error")
	envBool(fs, &devOIDC, "dev-oidc", "WALLET_DEV_OIDC",
		"development only, refused in production mode: run a local OpenID Connect issuer on loopback and offer \"Dev sign-in\" (OAuth) with it; anyone can sign in there as any e-mail address")
	envString(fs, &devOIDCAddr, "dev-oidc-addr", "WALLET_DEV_OIDC_ADDR", "127.0.0.1:8091",
		"with --dev-oidc: the issuer's loopback address; keep it fixed, since linked sign-ins name the issuer by its URL")
	envString(fs, &oauthIssuer, "oauth-issuer", "WALLET_OAUTH_ISSUER", "", "OAuth sign-in button: the OpenID Connect issuer (it must be among the service's trusted --oidc-providers)")
	envString(fs, &oauthClientID, "oauth-client-id", "WALLET_OAUTH_CLIENT_ID", "", "OAuth sign-in button: the client id registered with the issuer")
	envString(fs, &oauthName, "oauth-name", "WALLET_OAUTH_NAME", "", "OAuth sign-in button: the provider's name shown to people (default: the issuer's host)")
	var svcOpts serviceconfig.Options
	svcOpts.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if drainDelay < 0 {
		return errors.New("--drain-delay must not be negative")
	}
	if err := svcOpts.CheckDevelopment(serviceconfig.DevSwitch{Flag: "dev-oidc", Env: "WALLET_DEV_OIDC", On: devOIDC,
		Risk: "anyone who can reach its issuer signs in as any e-mail address"}); err != nil {
		return err
	}
	log, err := newLogger(logLevel)
	if err != nil {
		return err
	}
	// stopping ends on SIGINT, SIGTERM or the caller's ctx: the drain
	// begins. The workers, the metrics listener and the traces have
	// contexts of their own, ended in order once the drain is over.
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Metrics and traces, when asked for: one registry and one tracer
	// provider for the BFF and the embedded service, so that one scrape
	// and one trace show both.
	telemetryCtx, stopTelemetry := context.WithCancel(context.WithoutCancel(parent))
	defer stopTelemetry()
	var reg *prometheus.Registry
	if tel.MetricsListen != "" {
		reg = telemetry.NewRegistry()
		addr, err := telemetry.ServeMetrics(telemetryCtx, tel.MetricsListen, reg)
		if err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		log.Info("metrics are served", "url", "http://"+addr+"/metrics")
		if h.metrics != nil {
			h.metrics(addr)
		}
	}
	tp := h.tracerProvider
	if tp == nil && tel.TracingOn() {
		otlp, stopTracing, err := telemetry.StartTracing(ctx, tel, "wallet", log)
		if err != nil {
			return fmt.Errorf("--otlp-endpoint: %w", err)
		}
		defer stopTracing()
		tp = otlp
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	base := "http://" + displayAddr(ln.Addr().String())

	cfg := bff.Config{Logger: log, Mode: svcOpts.Mode, WebAuthnRPID: svcOpts.WebAuthnRPID,
		StoreUnavailable: bffpg.ErrUnavailable, TracerProvider: tp}
	if reg != nil {
		cfg.Registry = reg
	}
	for _, p := range strings.Split(trustedProxies, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.TrustedProxies = append(cfg.TrustedProxies, p)
		}
	}
	if sessionsDB != "" {
		shared, err := bffpg.Open(ctx, sessionsDB, bffpg.WithLogger(log))
		if err != nil {
			ln.Close()
			return fmt.Errorf("--sessions-database: %w", err)
		}
		defer shared.Close()
		cfg.Sessions, cfg.Limiter, cfg.Events = shared.Sessions(), shared.Limiter(), shared.Events()
	}
	switch {
	case devOIDC && oauthIssuer != "":
		ln.Close()
		return errors.New("choose either --dev-oidc or --oauth-issuer, not both")
	case devOIDC:
		iss, err := devoidc.Start(devoidc.Config{Addr: devOIDCAddr, RedirectURIs: []string{base + "/oauth-callback.html"}})
		if err != nil {
			ln.Close()
			return fmt.Errorf("dev OIDC issuer: %w", err)
		}
		defer iss.Close()
		log.Warn("dev OIDC issuer is on: anyone can sign in there as any e-mail address (development only)", "issuer", iss.URL())
		svcOpts.ExtraOIDCProviders = append(svcOpts.ExtraOIDCProviders, oidc.Provider{Issuer: iss.URL(), ClientID: iss.ClientID()})
		cfg.OAuth = &bff.OAuthProvider{Name: "Dev sign-in", Issuer: iss.URL(), ClientID: iss.ClientID(), AuthorizationEndpoint: iss.URL() + "/authorize"}
	case oauthIssuer != "":
		p, err := discoverOAuth(ctx, oauthIssuer, oauthClientID, oauthName)
		if err != nil {
			ln.Close()
			return err
		}
		cfg.OAuth = p
	}
	svcOpts.DefaultOrigin = base
	svcOpts.DefaultStepUp = serviceconfig.WalletStepUp
	if svcOpts.WalletURL == "" {
		// The security e-mails' sign-out link opens this wallet.
		svcOpts.WalletURL = base
	}
	var keyFile string
	stopWorkers, workersDone := func() {}, make(chan struct{})
	close(workersDone) // no workers unless the service is embedded
	if serviceURL == "" {
		wireWebhooks(&svcOpts, base)
		if reg != nil {
			svcOpts.Registry = reg
		}
		svcOpts.TracerProvider = tp
		built, err := svcOpts.Build(ctx, log, base+"/dev/mailbox", true)
		if err != nil {
			ln.Close()
			return err
		}
		defer built.Close()
		// The workers outlive the signal: they stop after the server.
		workers, cancelWorkers := context.WithCancel(context.WithoutCancel(parent))
		defer cancelWorkers() // runs before Close
		done := make(chan struct{})
		go func() {
			defer close(done)
			built.Service.RunWorkers(workers)
		}()
		stopWorkers, workersDone = cancelWorkers, done
		cfg.ServiceURL = "http://payments.internal" + wire.BasePath
		cfg.Transport = inproc.Transport{Handler: built.Service.Handler()}
		cfg.PlatformCredential = built.PlatformCredential
		cfg.Ready = built.Service.Ready
		cfg.OTPSignerPublicKey = built.Service.SignerPublicKey().UncompressedHex()
		cfg.Mode = string(built.Service.Mode())
		if built.Mailbox != nil {
			cfg.DevMailbox = built.Mailbox.Handler()
		}
		keyFile = built.KeyFile
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
	if devOIDC {
		fmt.Fprintf(os.Stderr, "  Dev sign-in (OAuth): %s  (local OpenID Connect issuer)\n", cfg.OAuth.Issuer)
	}
	if keyFile != "" {
		fmt.Fprintf(os.Stderr, "  At-rest key: %s  (back it up apart from the database: the two together expose every wallet's recovery phrase)\n", keyFile)
	}
	fmt.Fprintln(os.Stderr)
	if h.ready != nil {
		h.ready(base)
	}

	select {
	case err := <-errc:
		stopWorkers()
		<-workersDone
		return err
	case <-ctx.Done():
	}
	stop() // a second SIGINT or SIGTERM during the drain ends the process at once
	return drain(log, srv, drainDelay, h.draining, stopWorkers, workersDone)
}

// drainTimeout bounds how long a stop waits for the requests in flight.
const drainTimeout = 20 * time.Second

// drain stops the wallet gracefully (SIGTERM): /readyz answers 503
// "draining" at once while every request is still served for delay, so
// that a load balancer takes the instance out of rotation before it
// refuses connections; then the BFF's Shutdown ends the event streams
// (their browsers reconnect, to another instance), closes idle keep-alive
// connections and waits for the requests in flight, up to drainTimeout
// (bff.Server.Shutdown bounds fasthttp's own wait, which browsers holding
// connections would otherwise stretch to minutes); then the workers stop;
// the caller's deferred Closes close the databases last. A stop that ends
// in time returns nil (exit code 0).
func drain(log *slog.Logger, srv *bff.Server, delay time.Duration, draining func(), stopWorkers func(), workersDone <-chan struct{}) error {
	srv.Drain()
	log.Info("stopping: /readyz answers 503 draining; still serving", "drain_delay", delay)
	if draining != nil {
		draining()
	}
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

// embeddedWebhookURL is where the embedded service delivers its webhooks:
// the BFF of this process, on the address it listens on. The BFF checks
// them with the keys the service publishes (GET /webhooks/jwks.json,
// through the in-process transport) and passes them to the browsers.
func embeddedWebhookURL(base string) string { return base + bff.WebhookPath }

// wireWebhooks points the embedded service's webhooks at this process's
// BFF, unless --webhook-url names another receiver (then the pages fall
// back to polling: nothing reaches their event streams).
func wireWebhooks(opts *serviceconfig.Options, base string) {
	if opts.WebhookURL == "" {
		opts.WebhookURL = embeddedWebhookURL(base)
	}
}

func envBool(fs *flag.FlagSet, p *bool, name, env, usage string) {
	def := false
	if v, ok := os.LookupEnv(env); ok {
		def = v == "1" || strings.EqualFold(v, "true") || strings.EqualFold(v, "yes")
	}
	fs.BoolVar(p, name, def, usage+" ["+env+"]")
}

// discoverOAuth reads the issuer's OpenID configuration for the
// authorization endpoint the sign-in pop-up opens.
func discoverOAuth(ctx context.Context, issuer, clientID, name string) (*bff.OAuthProvider, error) {
	if clientID == "" {
		return nil, errors.New("--oauth-issuer needs --oauth-client-id")
	}
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--oauth-issuer %q is not a URL", issuer)
	}
	if name == "" {
		name = u.Hostname()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--oauth-issuer: %w", err)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc) != nil || doc.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("--oauth-issuer: no usable OpenID configuration at %s", req.URL)
	}
	return &bff.OAuthProvider{Name: name, Issuer: issuer, ClientID: clientID, AuthorizationEndpoint: doc.AuthorizationEndpoint}, nil
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
	// Every line logged with a request's context carries its request_id.
	return slog.New(telemetry.LogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))), nil
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
