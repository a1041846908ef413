package bff

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/valyala/fasthttp"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
	"paywallet/web"
)

// Modes the BFF announces to the pages; they must match the service's.
const (
	ModeProduction = "production"
	ModeSandbox    = "sandbox"
)

// Config configures a Server. ServiceURL, PlatformCredential and
// OTPSignerPublicKey are required.
type Config struct {
	// ServiceURL is the base URL of the service including its version
	// segment, e.g. "http://127.0.0.1:8081/2025-10-13".
	ServiceURL string
	// Transport, when set, carries every request to the service (an
	// in-process transport when the service is embedded). When nil, a
	// transport like http.DefaultTransport that keeps up to 256 idle
	// connections to the service.
	Transport http.RoundTripper
	// PlatformCredential is "<token id>:<secret>". It is sent to the service
	// as Basic auth and never to the browser.
	PlatformCredential string
	// Mode is "production" (the default when empty) or "sandbox".
	Mode string
	// OTPSignerPublicKey is the hex P-256 public key (130 hex uncompressed or
	// 66 hex compressed) the browser pins when it checks an OTP target
	// bundle's signature.
	OTPSignerPublicKey string
	// DevMailbox, when set, is mounted at /dev/mailbox (it receives paths
	// relative to that prefix) and announced by /api/config. It must answer
	// only requests that stay on this machine, as mail.Mailbox's handler
	// does (paywallet/internal/loopback).
	DevMailbox http.Handler
	// WebAuthnRPID and WebAuthnRPName are the passkey relying party the
	// browser registers with: the same id the service verifies ("localhost"
	// when empty) and the name authenticators show ("Wallet" when empty).
	WebAuthnRPID, WebAuthnRPName string
	// OAuth, when set, is the identity provider the page offers for
	// sign-in and linking; the service must trust its issuer.
	OAuth *OAuthProvider
	// Sessions stores cookie sessions; a MemoryStore when nil. When it is
	// also a SignInStore (MemoryStore and bffpg's store are), the
	// User-Agent each wallet session was signed in with is kept there as
	// well (signin.go); otherwise in this instance's memory only.
	Sessions SessionStore
	// Logger receives the BFF's log lines; slog.Default() when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// SessionCheck is how long the service's answer that a wallet session
	// is active is trusted before a signed-in request asks again
	// (liveness.go); DefaultSessionCheck when zero. It bounds how long a
	// cookie outlives its wallet session on this instance.
	SessionCheck time.Duration

	// LoginPerIP and LoginPerEmail throttle POST /api/login/start, which
	// anyone can call and which makes the service create a customer and
	// e-mail a code: at most Max starts per Window from one client address,
	// and at most Max for one e-mail address (in any letter case). Only
	// well-formed starts count; over a limit the answer is 429 RATE_LIMITED
	// with Retry-After. A zero Max or Window takes its default: 10 per
	// minute per address, 5 per 10 minutes per e-mail address. Negative
	// values are refused.
	LoginPerIP, LoginPerEmail Limit
	// Limiter counts those starts; a MemoryLimiter when nil. Several BFF
	// instances behind one load balancer need a shared Limiter (each would
	// otherwise allow the full limits on its own).
	Limiter Limiter
	// TrustedProxies are the reverse proxies (IP addresses or CIDR ranges)
	// whose X-Forwarded-For and X-Forwarded-Proto headers the BFF believes:
	// for the client address the login limit counts, and for the scheme the
	// Origin check compares and Strict-Transport-Security depends on. From
	// any other peer these headers are ignored.
	// Empty by default: the BFF is reached directly.
	TrustedProxies []string

	// Events records the service's webhooks and passes them to every
	// instance (events.go); a MemoryEventLog when nil. Several BFF
	// instances need a shared EventLog (paywallet/bff/bffpg), or a browser
	// hears only the webhooks its own instance received.
	Events EventLog
	// WebhookJWKSURL is where the service publishes the public keys of its
	// webhook signatures, fetched through Transport like every call to the
	// service (without the platform credential: the keys are public).
	// ServiceURL + "/webhooks/jwks.json" when empty.
	WebhookJWKSURL string

	// StoreUnavailable is the error the session store, the limiter and the
	// event log wrap when their database went away (bffpg.ErrUnavailable:
	// a crash, a failover, the network; nothing changed). A request that
	// fails with it answers 503 SERVICE_UNAVAILABLE with Retry-After: 1
	// instead of 500, and /readyz 503. (The sentinel is passed in because
	// bffpg imports this package.) Nil: every store failure is a 500.
	StoreUnavailable error
	// Ready, when set, is asked by /readyz after the session store: the
	// readiness of a payments service embedded in this process
	// (cmd/wallet), which cannot serve anything while the service's
	// database is away. A remote service is never asked (see
	// handleReadyz); nil for one.
	Ready func(context.Context) error

	// Registry receives the BFF's Prometheus series (bff_…, observe.go);
	// nil keeps them unexported. Several BFFs in one process need one
	// registry each.
	Registry prometheus.Registerer
	// TracerProvider makes the BFF's spans: one per request (continuing
	// the browser's traceparent) and one per call to the service (whose
	// traceparent it sends). Nil: no spans. Never the global provider.
	TracerProvider trace.TracerProvider

	// Test seams: the embedded site, the route table, the overall
	// deadline of an /api request, and the event stream's heartbeat and
	// longest life.
	static       fs.FS
	routes       []route
	apiTimeout   time.Duration
	heartbeat    time.Duration
	streamMaxAge time.Duration
}

// Server is the backend-for-frontend: the wallet's pages, the /api the pages
// call, and the dev mailbox when enabled.
type Server struct {
	app        *fiber.App
	up         *upstream
	store      SessionStore
	signIns    SignInStore
	limiter    Limiter
	perIP      Limit
	perEmail   Limit
	proxies    []netip.Prefix
	assets     *assets
	log        *slog.Logger
	now        func() time.Time
	mode       string
	signerKey  string
	devMailbox bool
	rpID       string
	rpName     string
	oauth      *OAuthProvider
	conns      connSet
	obs        *observer
	// unavailable is Config.StoreUnavailable; draining is set by Drain;
	// ready is Config.Ready.
	unavailable error
	ready       func(context.Context) error
	draining    atomic.Bool
	requests    requestSet // the requests being handled (logged when a shutdown is cut short)

	// base is the parent of every /api request's context; Shutdown cancels
	// it when the grace period ends, so nothing keeps waiting on the service.
	base       context.Context
	stop       context.CancelFunc
	apiTimeout time.Duration
	live       *liveSessions

	// Webhooks in, events out (webhooks.go, stream.go).
	events       EventLog
	hub          *hub
	jwks         *jwksCache
	unsubscribe  func()
	closing      chan struct{} // closed when Shutdown begins: open streams end
	closeOnce    sync.Once
	heartbeat    time.Duration
	streamMaxAge time.Duration
}

// requestSet holds the requests being handled, so that a shutdown cut
// short can say which ones kept it waiting.
type requestSet struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]request
}

// request is one request being handled.
type request struct {
	what  string // method and path
	begun time.Time
}

// track registers the request of c until the rest of the chain is done.
func (rs *requestSet) track(c *fiber.Ctx) error {
	rs.mu.Lock()
	if rs.m == nil {
		rs.m = map[uint64]request{}
	}
	rs.next++
	id := rs.next
	rs.m[id] = request{what: c.Method() + " " + c.Path(), begun: time.Now()}
	rs.mu.Unlock()
	defer func() {
		rs.mu.Lock()
		delete(rs.m, id)
		rs.mu.Unlock()
	}()
	return c.Next()
}

// list returns the requests being handled, each with how long it has run.
func (rs *requestSet) list() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]string, 0, len(rs.m))
	for _, r := range rs.m {
		out = append(out, r.what+" for "+time.Since(r.begun).Round(time.Millisecond).String())
	}
	slices.Sort(out)
	return out
}

// quietListener hands out connections that remember whether their client
// has sent anything yet (startedConn). fasthttp counts a new connection as
// busy from the moment it accepts it, so a client's spare connection, dialled
// and never used (an HTTP client whose request was cancelled while it
// dialled, a browser's preconnect), would keep Shutdown waiting for its whole
// grace period; with this, Shutdown ends those that have been silent for a
// second (interruptSilent).
type quietListener struct{ net.Listener }

func (l quietListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if _, ok := c.(tlsConn); ok {
		// Left as it is: fasthttp tells HTTPS from the connection's TLS
		// methods, and its handshake is read without going through a
		// wrapper's Read, so a TLS connection is never taken for a silent one.
		return c, nil
	}
	return &startedConn{Conn: c, accepted: time.Now()}, nil
}

// startedConn is a connection that records its first byte read.
type startedConn struct {
	net.Conn
	accepted time.Time
	started  atomic.Bool
}

func (c *startedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.started.Store(true)
	}
	return n, err
}

// silentSince reports whether the client connected before t and has sent no
// byte yet.
func (c *startedConn) silentSince(t time.Time) bool {
	return c.accepted.Before(t) && !c.started.Load()
}

// tlsConn is what a *tls.Conn has and fasthttp looks for.
type tlsConn interface {
	Handshake() error
	ConnectionState() tls.ConnectionState
}

// connSet holds the open client connections.
type connSet struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

func (cs *connSet) track(c net.Conn, state fasthttp.ConnState) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch state {
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		delete(cs.m, c)
	default:
		if cs.m == nil {
			cs.m = map[net.Conn]struct{}{}
		}
		cs.m[c] = struct{}{}
	}
}

// interruptSilent ends the connections whose client has sent nothing for a
// second since it connected: they carry no request, so nothing is cut
// short. (A younger one may have its request on the way.)
func (cs *connSet) interruptSilent() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := time.Now()
	for c := range cs.m {
		if sc, ok := c.(interface{ silentSince(time.Time) bool }); ok && sc.silentSince(now.Add(-silentAfter)) {
			_ = c.SetReadDeadline(now)
		}
	}
}

// silentAfter is how long a connection may stay silent after it connected
// before Shutdown takes it for a spare one.
const silentAfter = time.Second

// interruptReads ends every read the server is waiting on, by moving the
// read deadline of each open connection to now, and reports how many
// connections there were. A connection that has sent no (complete) request
// gets an error answer and is closed; one whose request is being handled is
// not disturbed: its answer is written, and then it is closed because the
// server is shutting down. (Closing connections outright is not safe:
// fasthttp panics when a connection it is answering on has been closed, and
// its ConnState cannot tell a silent new connection from a busy one.)

func (cs *connSet) interruptReads() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := time.Now()
	for c := range cs.m {
		_ = c.SetReadDeadline(now)
	}
	return len(cs.m)
}

var signerKeyPattern = regexp.MustCompile(`^(04[0-9a-fA-F]{128}|0[23][0-9a-fA-F]{64})$`)

// apiTimeout bounds one /api request as a whole, all its service calls
// included (each of which upstreamTimeout bounds on its own).
const apiTimeout = 20 * time.Second

// New validates cfg and builds the Server.
func New(cfg Config) (*Server, error) {
	s := &Server{log: cfg.Logger, now: cfg.Now, store: cfg.Sessions, mode: cfg.Mode,
		limiter: cfg.Limiter, apiTimeout: cfg.apiTimeout, rpID: cfg.WebAuthnRPID, rpName: cfg.WebAuthnRPName, oauth: cfg.OAuth,
		events: cfg.Events, heartbeat: cfg.heartbeat, streamMaxAge: cfg.streamMaxAge, closing: make(chan struct{})}
	if s.rpID == "" {
		s.rpID = "localhost"
	}
	if s.rpName == "" {
		s.rpName = "Wallet"
	}
	if s.oauth != nil {
		if err := s.oauth.validate(); err != nil {
			return nil, fmt.Errorf("bff: OAuth: %w", err)
		}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	// Every line logged with a request's context carries its request_id
	// (unless the caller's logger does that already).
	s.log = slog.New(telemetry.EnsureLogHandler(s.log.Handler()))
	var err error
	if s.obs, err = newObserver(cfg.Registry, cfg.TracerProvider); err != nil {
		return nil, fmt.Errorf("bff: Registry: %w", err)
	}
	s.unavailable = cfg.StoreUnavailable
	s.ready = cfg.Ready
	if s.now == nil {
		s.now = time.Now
	}
	if s.store == nil {
		s.store = NewMemoryStore(s.now)
	}
	if si, ok := s.store.(SignInStore); ok {
		s.signIns = si
	} else {
		s.signIns = NewMemoryStore(s.now)
	}
	if s.limiter == nil {
		s.limiter = NewMemoryLimiter(s.now)
	}
	if s.apiTimeout <= 0 {
		s.apiTimeout = apiTimeout
	}
	if s.events == nil {
		s.events = NewMemoryEventLog(s.now)
	}
	if s.heartbeat <= 0 {
		s.heartbeat = defaultHeartbeat
	}
	if s.streamMaxAge <= 0 {
		s.streamMaxAge = defaultStreamMaxAge
	}
	check := cfg.SessionCheck
	if check <= 0 {
		check = DefaultSessionCheck
	}
	s.live = newLiveSessions(check, s.walletSessions)
	if s.perIP, err = cfg.LoginPerIP.orDefault(defaultLoginPerIP); err != nil {
		return nil, fmt.Errorf("bff: LoginPerIP: %w", err)
	}
	if s.perEmail, err = cfg.LoginPerEmail.orDefault(defaultLoginPerEmail); err != nil {
		return nil, fmt.Errorf("bff: LoginPerEmail: %w", err)
	}
	if s.proxies, err = parseProxies(cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("bff: TrustedProxies: %w", err)
	}
	switch s.mode {
	case "":
		s.mode = ModeProduction
	case ModeProduction, ModeSandbox:
	default:
		return nil, fmt.Errorf("bff: Mode %q: want %q or %q", cfg.Mode, ModeProduction, ModeSandbox)
	}
	if id, secret, ok := strings.Cut(cfg.PlatformCredential, ":"); !ok || id == "" || secret == "" ||
		strings.ContainsFunc(cfg.PlatformCredential, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, errors.New("bff: PlatformCredential must be \"<token id>:<secret>\" without spaces")
	}
	if !signerKeyPattern.MatchString(cfg.OTPSignerPublicKey) {
		return nil, errors.New("bff: OTPSignerPublicKey must be a hex P-256 public key (130 hex starting 04, or 66 hex starting 02/03)")
	}
	s.signerKey = strings.ToLower(cfg.OTPSignerPublicKey)
	up, err := newUpstream(cfg.ServiceURL, cfg.PlatformCredential, cfg.Transport)
	if err != nil {
		return nil, fmt.Errorf("bff: %w", err)
	}
	s.up = up
	// Every call to the service (up.client also fetches the webhook keys)
	// gets a client span, the request's id and a latency observation.
	up.client.Transport = observedTransport{next: up.client.Transport, s: s}
	jwksURL := cfg.WebhookJWKSURL
	if jwksURL == "" {
		jwksURL = up.base.String() + "/webhooks/jwks.json"
	}
	s.jwks = &jwksCache{url: jwksURL, client: up.client, now: s.now}

	static := cfg.static
	if static == nil {
		static = web.Files()
	}
	shown := map[string]bool{"sandbox": s.mode == ModeSandbox, "dev-mailbox": cfg.DevMailbox != nil}
	if s.assets, err = loadAssets(static, s.log, shown); err != nil {
		return nil, fmt.Errorf("bff: %w", err)
	}
	if _, ok := s.assets.files["/index.html"]; !ok {
		return nil, errors.New("bff: the embedded site has no index.html")
	}
	if !s.assets.hasWasm {
		s.log.Warn("bff: the wallet module is not embedded; " + s.assets.wasmURL +
			" will answer 404 and login cannot work. Run `make wasm` and rebuild.")
	}

	s.app = fiber.New(fiber.Config{
		AppName:               "paywallet-bff",
		DisableStartupMessage: true,
		ErrorHandler:          s.errorHandler,
		Immutable:             true, // values taken from requests may outlive the handler (sessions)
		// isAPIPath, the CSP exemption of the dev mailbox and the asset
		// table all compare paths exactly; so must the router.
		CaseSensitive: true,
		// X-Forwarded-* only from the configured proxies (none by default),
		// so that c.Protocol() cannot be talked into https by any client.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          cfg.TrustedProxies,
		BodyLimit:               256 << 10,
		ReadTimeout:             30 * time.Second,
		WriteTimeout:            30 * time.Second,
		IdleTimeout:             60 * time.Second,
		ReadBufferSize:          16 << 10,
	})
	// Tell clients to close keep-alive connections once shutdown starts, and
	// track connections so that Shutdown can end what is left at its end.
	s.app.Server().CloseOnShutdown = true
	s.app.Server().Handler = withRequestIDHeader(s.app.Server().Handler)
	s.app.Server().ConnState = s.conns.track

	// First, so that every answer, errors and 404s included, carries the
	// request's id and is counted.
	s.app.Use(s.observe)
	// Next, so that a panic anywhere answers 500 and the process lives on.
	s.app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: s.logPanic}))
	s.app.Use(s.requests.track)
	s.app.Use(s.securityHeaders)

	s.base, s.stop = context.WithCancel(context.Background())
	api := s.app.Group("/api", s.sameOrigin, s.withDeadline, s.loadSession)
	api.Get("/config", s.handleConfig)
	api.Get("/events", s.handleEvents)
	api.Post("/login/start", s.handleLoginStart)
	api.Post("/login/verify", s.handleLoginVerify)
	api.Get("/me", s.handleMe)
	api.Post("/logout", s.handleLogout)
	api.Delete("/auth/sessions/:id", s.handleRevokeSession)
	api.Post("/auth/sessions/:id/refresh", s.handleRefreshSession)
	api.Post("/login/passkey/start", s.handlePasskeyStart)
	api.Post("/login/passkey/verify", s.handlePasskeyVerify)
	api.Post("/login/oauth", s.handleOAuthLogin)
	api.Post("/passkeys/registration-options", s.handleRegistrationOptions)
	api.Post("/auth/credentials", s.handleAddCredential)
	api.Post("/sign-out-everywhere", s.handleSignOutEverywhere)
	table := cfg.routes
	if table == nil {
		table = routes
	}
	if err := s.mount(api, table); err != nil {
		return nil, fmt.Errorf("bff: %w", err)
	}
	api.Use(func(*fiber.Ctx) error { return notFound() })

	if cfg.DevMailbox != nil {
		s.devMailbox = true
		// The mailbox names the answer's Request-Id in its error bodies,
		// from its ResponseWriter's header: the adaptor gives it a
		// fresh one, so the id goes across as a request header, and
		// comes back once (the adaptor adds the handler's headers).
		inner := http.StripPrefix(devMailboxPath, cfg.DevMailbox)
		box := adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(wire.HeaderRequestID, r.Header.Get(wire.HeaderRequestID))
			inner.ServeHTTP(w, r)
		}))
		s.app.Use(devMailboxPath, func(c *fiber.Ctx) error {
			c.Request().Header.Set(wire.HeaderRequestID, requestID(c))
			c.Response().Header.Del(wire.HeaderRequestID)
			return box(c)
		})
	}
	s.app.Post(WebhookPath, s.handleWebhook)
	s.app.Get("/healthz", s.handleHealthz)
	s.app.Get("/readyz", s.handleReadyz)
	s.app.Get("/*", s.serveStatic)
	// Last: from here on events reach this instance's streams.
	s.hub = newHub(s.now)
	s.unsubscribe = s.events.Subscribe(s.hub.publish)
	return s, nil
}

// handleHealthz answers a load balancer's health check: 200 {"status":"ok"}
// when the session store answers within two seconds (with a shared store,
// an instance that lost its database cannot serve anyone), 503
// {"status":"unavailable"} otherwise. It does not call the service, which
// has a /healthz of its own: one slow service instance should not take
// every BFF out of rotation.
func (s *Server) handleHealthz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	c.Set(fiber.HeaderCacheControl, "no-store")
	if _, err := s.store.Get(ctx, "healthz"); err != nil && !errors.Is(err, ErrSessionNotFound) {
		s.log.WarnContext(c.UserContext(), "bff: health check: session store unavailable", slog.Any("err", err))
		return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable"})
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// handleReadyz answers a load balancer's readiness check (GET /readyz,
// without credentials): 200 {"status":"ready"}, or 503 {"status":
// "draining"} from the moment Drain was called (the process is stopping:
// send new requests elsewhere while the ones in flight finish), or 503
// {"status":"not ready"} when the session store (the BFF's PostgreSQL when
// several instances share one) does not answer within a second, or when a
// service embedded in this process is not ready (Config.Ready). Like
// /healthz it does not ask a remote service: one slow service instance
// must not take every BFF out of rotation.
func (s *Server) handleReadyz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	if s.draining.Load() {
		return c.Status(http.StatusServiceUnavailable).JSON(readiness{Status: "draining", Reason: "the process is stopping"})
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), time.Second)
	defer cancel()
	if _, err := s.store.Get(ctx, "readyz"); err != nil && !errors.Is(err, ErrSessionNotFound) {
		s.log.WarnContext(c.UserContext(), "bff: readiness check: session store unavailable", slog.Any("err", err))
		return c.Status(http.StatusServiceUnavailable).JSON(readiness{Status: "not ready", Reason: "the session store does not answer"})
	}
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			s.log.WarnContext(c.UserContext(), "bff: readiness check: the embedded payments service is not ready", slog.Any("err", err))
			return c.Status(http.StatusServiceUnavailable).JSON(readiness{Status: "not ready",
				Reason: "the payments service in this process is not ready: its database does not answer, or lacks this binary's migrations (see the log)"})
		}
	}
	return c.JSON(readiness{Status: "ready"})
}

// readiness is /readyz's answer.
type readiness struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Drain makes /readyz answer 503 "draining" from now on: the first step of
// a graceful stop (cmd/wallet on SIGTERM), taken a while before Shutdown
// so that load balancers stop sending new requests first. Everything else
// is served as before, event streams included (Shutdown ends them).
func (s *Server) Drain() { s.draining.Store(true) }

// App returns the Fiber application, for tests (App().Test) and for
// mounting under another server.
func (s *Server) App() *fiber.App { return s.app }

// Listen serves on addr until Shutdown.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Listener(ln)
}

// Listener serves on ln until Shutdown.
func (s *Server) Listener(ln net.Listener) error { return s.app.Listener(quietListener{ln}) }

// shutdownGrace bounds Shutdown when ctx has no deadline; shutdownDrain is
// how long the requests cancelled at its end get to send their answer.
const (
	shutdownGrace = 5 * time.Second
	shutdownDrain = time.Second
)

// Shutdown stops accepting connections and waits for requests in flight,
// at most until ctx ends (or 5 s when ctx has no deadline). Idle keep-alive
// connections, such as a browser tab's, are closed at once instead of
// waited for. When the time is up, the requests still waiting on the
// service are cancelled (they answer 502 within shutdownDrain), connections
// that carry no request are ended, and Shutdown returns ctx's error, so
// that the caller knows requests were cut short.
func (s *Server) Shutdown(ctx context.Context) error {
	// Event streams never end by themselves: end them now (their browsers
	// reconnect, to another instance), and stop listening for events.
	s.closeOnce.Do(func() {
		close(s.closing)
		s.unsubscribe()
	})
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, shutdownGrace)
		defer cancel()
	}
	// fasthttp waits until drain ends, which is shutdownDrain after ctx.
	drain, endDrain := context.WithCancel(context.WithoutCancel(ctx))
	defer endDrain()
	// Connections that never sent a request are not waited for: end them
	// now, and those accepted until the listener is closed, as fasthttp
	// itself ends idle keep-alive connections while it waits.
	silent, endSilent := context.WithCancel(context.Background())
	defer endSilent()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			s.conns.interruptSilent()
			select {
			case <-silent.Done():
				return
			case <-tick.C:
			}
		}
	}()
	cutDone := make(chan struct{})
	cut := context.AfterFunc(ctx, func() {
		defer close(cutDone)
		s.stop()
		n := s.conns.interruptReads()
		s.log.Warn("bff: shutdown grace period over; cancelled the requests in flight and ended the connections",
			slog.Int("connections", n), slog.Any("requests", s.requests.list()))
		time.AfterFunc(shutdownDrain, endDrain)
	})
	err := s.app.ShutdownWithContext(drain)
	cutShort := !cut() // the grace period ended before fasthttp was done
	s.stop()
	if cutShort {
		// Return only once the cut is done (its log line written), so a
		// caller that reads the log or exits next misses nothing.
		<-cutDone
		return ctx.Err()
	}
	return err
}

// withDeadline runs an /api request under a context derived from the
// server's base context (which Shutdown cancels), bounded by apiTimeout.
// (Fiber's own UserContext is context.Background, which never ends.)
func (s *Server) withDeadline(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(s.base, s.apiTimeout)
	defer cancel()
	ctx = carry(c.UserContext(), ctx) // the request's id and span
	// Who is at the other end, for the customer's security log: the
	// client's address (through trusted proxies) and its browser as the
	// Security view names it. Every call to the service carries them.
	ctx = withEndUser(ctx, endUser{ip: s.clientIP(c), device: parseUserAgent(c.Get(fiber.HeaderUserAgent)).Label})
	c.SetUserContext(ctx)
	return c.Next()
}

// logPanic logs a recovered panic with its stack; the error handler then
// answers 500 INTERNAL_ERROR without details.
func (s *Server) logPanic(c *fiber.Ctx, v any) {
	s.log.ErrorContext(c.UserContext(), "bff: panic", slog.String("method", c.Method()), slog.String("path", c.Path()),
		slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
}
