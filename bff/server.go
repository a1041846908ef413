package bff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/valyala/fasthttp"

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
	// in-process transport when the service is embedded).
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
	// relative to that prefix) and announced by /api/config.
	DevMailbox http.Handler
	// Sessions stores cookie sessions; a MemoryStore when nil.
	Sessions SessionStore
	// Logger receives the BFF's log lines; slog.Default() when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// Test seams: the embedded site and the route table.
	static fs.FS
	routes []route
}

// Server is the backend-for-frontend: the wallet's pages, the /api the pages
// call, and the dev mailbox when enabled.
type Server struct {
	app        *fiber.App
	up         *upstream
	store      SessionStore
	assets     *assets
	log        *slog.Logger
	now        func() time.Time
	mode       string
	signerKey  string
	devMailbox bool
	conns      connSet
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

// closeAll closes every tracked connection and reports how many there were.
func (cs *connSet) closeAll() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := len(cs.m)
	for c := range cs.m {
		_ = c.Close()
		delete(cs.m, c)
	}
	return n
}

var signerKeyPattern = regexp.MustCompile(`^(04[0-9a-fA-F]{128}|0[23][0-9a-fA-F]{64})$`)

// New validates cfg and builds the Server.
func New(cfg Config) (*Server, error) {
	s := &Server{log: cfg.Logger, now: cfg.Now, store: cfg.Sessions, mode: cfg.Mode}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.store == nil {
		s.store = NewMemoryStore(s.now)
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

	static := cfg.static
	if static == nil {
		static = web.Files()
	}
	if s.assets, err = loadAssets(static); err != nil {
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
		BodyLimit:             256 << 10,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           60 * time.Second,
		ReadBufferSize:        16 << 10,
	})
	// Tell clients to close keep-alive connections once shutdown starts, and
	// track connections so that Shutdown can close what is left at its end.
	s.app.Server().CloseOnShutdown = true
	s.app.Server().ConnState = s.conns.track

	s.app.Use(securityHeaders)

	api := s.app.Group("/api", s.sameOrigin, s.loadSession)
	api.Get("/config", s.handleConfig)
	api.Post("/login/start", s.handleLoginStart)
	api.Post("/login/verify", s.handleLoginVerify)
	api.Get("/me", s.handleMe)
	api.Post("/logout", s.handleLogout)
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
		s.app.Use(devMailboxPath, adaptor.HTTPHandler(http.StripPrefix(devMailboxPath, cfg.DevMailbox)))
	}
	s.app.Get("/*", s.serveStatic)
	return s, nil
}

// App returns the Fiber application, for tests (App().Test) and for
// mounting under another server.
func (s *Server) App() *fiber.App { return s.app }

// Listen serves on addr until Shutdown.
func (s *Server) Listen(addr string) error { return s.app.Listen(addr) }

// Listener serves on ln until Shutdown.
func (s *Server) Listener(ln net.Listener) error { return s.app.Listener(ln) }

// shutdownGrace bounds Shutdown when ctx has no deadline.
const shutdownGrace = 5 * time.Second

// Shutdown stops accepting connections and waits for requests in flight,
// at most until ctx ends (or 5 s when ctx has no deadline). Idle keep-alive
// connections, such as a browser tab's, are closed at once instead of
// waited for; whatever is still open when the time is up is closed too.
func (s *Server) Shutdown(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, shutdownGrace)
		defer cancel()
	}
	err := s.app.ShutdownWithContext(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		n := s.conns.closeAll()
		s.log.Warn("bff: shutdown grace period over; closed the remaining connections", slog.Int("connections", n))
		return nil
	}
	return err
}
