// Package service is the payments service's HTTP interface: the thin layer
// over the domain (package payments) that serves
// spec/payments-service-interface.md under /2025-10-13.
//
// # Shape
//
// [New] builds a [Service] from a [Config]: the domain's operations and
// workers (its methods are promoted) and [Service.Handler], the HTTP
// interface. The layer does only what is HTTP's, and imports no store
// package (TestHTTPLayerKnowsNoStore): the route table (routes.go), where
// each operation is one line naming its method and path, its credential
// (the platform's Basic credential with the permission an API token needs,
// an agent's bearer token, or none), its success status, its
// Idempotency-Key scope and the domain method it runs; the one generic
// piece that reads a request from that method's signature and answers its
// result (route.go): path values, filters bound from the query, a 1 MiB
// body decoded strictly (jsonio.go), the Service-Wallet-Signature and
// Request-Id headers of signed retries (signedretry.go), the
// Idempotency-Key handed to the domain as a payments.Once; and the one
// table from an operation's error code to the HTTP status (errors.go).
// Around it all, observe.go gives every answer its Request-Id and every
// request its metrics and server span; a database that went away is
// answered 503 with Retry-After (errors.go).
//
// To add an operation: write it in package payments, add its line to
// routes.go and its description to openapi.yaml (the tests hold the two
// to each other), and a test.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"paywallet/service/payments"
	"paywallet/shared/wire"
)

// Config configures a Service: the domain's configuration (see
// payments.Config); PlatformCredential is also the HTTP layer's.
type Config = payments.Config

// Mode selects how strictly signed actions are checked (payments.Mode).
type Mode = payments.Mode

// Modes of the service.
const (
	ModeProduction = payments.ModeProduction
	ModeSandbox    = payments.ModeSandbox
)

// ParseMode accepts "production" and "sandbox".
func ParseMode(s string) (Mode, error) { return payments.ParseMode(s) }

// CounterpartyFields are the counterpartyInformation keys a quote can carry.
var CounterpartyFields = payments.CounterpartyFields

// StepUpPolicy is the operator's step-up policy (Config.StepUp).
type StepUpPolicy = payments.StepUpPolicy

// PolicyAmount is a StepUpPolicy's amount.
type PolicyAmount = payments.PolicyAmount

// ParseStepUpPolicy reads the --step-up flag's value.
var ParseStepUpPolicy = payments.ParseStepUpPolicy

// Service is the payments service: its operations and workers, and its HTTP
// interface.
type Service struct {
	*payments.Service
	ops *payments.Service
	log *slog.Logger
	tokenID,
	secret string
	// obs is the HTTP layer's metrics and tracer (observe.go).
	obs *httpObserver
	// draining is set by Drain: /readyz answers 503 from then on.
	draining atomic.Bool
}

// New validates cfg, starts the domain (payments.New) and returns the
// service.
func New(ctx context.Context, cfg Config) (*Service, error) {
	ops, err := payments.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	id, secret, _ := strings.Cut(cfg.PlatformCredential, ":")
	obs, err := newHTTPObserver(cfg.Registry, cfg.TracerProvider)
	if err != nil {
		return nil, fmt.Errorf("service: Config.Registry: %w", err)
	}
	// The domain's logger: cfg.Logger (or none) with request_id on every
	// line logged with a request's context.
	log := ops.Config().Logger
	return &Service{Service: ops, ops: ops, log: log, tokenID: id, secret: secret, obs: obs}, nil
}

// Handler returns the HTTP interface. Paths not in the route table answer
// 404, known paths with another method 405, both as JSON error bodies.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	byPath := map[string][]route{}
	var order []string
	for _, rt := range s.routes() {
		if _, seen := byPath[rt.path]; !seen {
			order = append(order, rt.path)
		}
		byPath[rt.path] = append(byPath[rt.path], rt)
	}
	for _, p := range order {
		rts := byPath[p]
		mux.HandleFunc(wire.BasePath+p, func(w http.ResponseWriter, r *http.Request) {
			setRoute(r, p)
			var allow []string
			for _, rt := range rts {
				if rt.method == r.Method {
					s.serve(w, r, rt)
					return
				}
				allow = append(allow, rt.method)
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, r, errorf(http.StatusMethodNotAllowed, codeMethodNotAllowed, r.Method+" is not allowed here"))
		})
	}
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/readyz", s.readyz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusNotFound, payments.CodeNotFound, "no such endpoint"))
	})
	return s.obs.observe(mux)
}

// healthz answers a load balancer's health check, without credentials and
// outside the API's base path: 200 {"status":"ok"} when the database
// answers within two seconds, 503 {"status":"unavailable"} otherwise, so an
// instance that lost its database is taken out of rotation.
func (s *Service) healthz(w http.ResponseWriter, r *http.Request) {
	setRoute(r, "/healthz")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeError(w, r, errorf(http.StatusMethodNotAllowed, codeMethodNotAllowed, r.Method+" is not allowed here"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	err := s.ops.Ping(ctx)
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		s.log.WarnContext(r.Context(), "health check: database unavailable", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers a load balancer's readiness check, without credentials
// and outside the API's base path: 200 {"status":"ready"} when the
// database answers and has this binary's migrations (payments.Ready), 503
// {"status":"not ready","reason":…} when not, and 503 {"status":"draining"}
// from the moment the process began to stop (Drain), so that the load
// balancer sends new requests elsewhere while the ones in flight finish.
// Unlike /healthz (alive: restart me if this fails), a 503 here only means
// "send no traffic for now".
func (s *Service) readyz(w http.ResponseWriter, r *http.Request) {
	setRoute(r, "/readyz")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeError(w, r, errorf(http.StatusMethodNotAllowed, codeMethodNotAllowed, r.Method+" is not allowed here"))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, readiness{Status: "draining", Reason: "the process is stopping"})
		return
	}
	if err := s.Ready(r.Context()); err != nil {
		// The error itself (a host, a port) is for the log, not for
		// whoever reaches the public listener.
		s.log.WarnContext(r.Context(), "readiness check: not ready", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, readiness{Status: "not ready",
			Reason: "the database does not answer, or lacks this binary's migrations (see the log)"})
		return
	}
	writeJSON(w, http.StatusOK, readiness{Status: "ready"})
}

// Ready reports whether the service can take traffic, as /readyz does
// apart from the drain: the database answers and has this binary's
// migrations. A process that embeds the service (cmd/wallet) asks it for
// its own /readyz.
func (s *Service) Ready(ctx context.Context) error { return s.ops.Ready(ctx) }

// readiness is /readyz's answer.
type readiness struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Drain makes /readyz answer 503 "draining" from now on: the first step of
// a graceful stop (cmd/paymentsd on SIGTERM), before the server stops
// taking connections. Everything else is served as before.
func (s *Service) Drain() { s.draining.Store(true) }

// serve checks the route's credential, bounds the body and runs the
// operation (route.call), answering its refusal (or a panic) as a JSON
// error.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, rt route) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.ErrorContext(r.Context(), "panic in handler", "path", r.URL.Path, "panic", p)
			s.writeError(w, r, internalError)
		}
	}()
	var who principals
	switch rt.auth {
	case authPlatform, authSandbox:
		p, err := s.platformPrincipal(r)
		if err != nil {
			if e, _ := httpError(err); e.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="payments"`)
			}
			s.writeError(w, r, err)
			return
		}
		if rt.auth == authSandbox && s.Mode() != ModeSandbox {
			s.writeError(w, r, payments.ErrSandboxOnly)
			return
		}
		if err := permit(rt, p); err != nil {
			s.writeError(w, r, err)
			return
		}
		who.platform = p
	case authAgent:
		agent, err := s.ops.AuthenticateAgent(r.Context(), bearerToken(r))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agents"`)
			s.writeError(w, r, err)
			return
		}
		who.agent = agent
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	err := func() error {
		if rt.h != nil {
			return rt.h(w, r)
		}
		return rt.call(w, r, who)
	}()
	if err != nil {
		s.writeError(w, r, err)
	}
}

const maxBody = 1 << 20

// bearerToken is the token of an "Authorization: Bearer …" header, or "".
func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return token
}

// writeError answers err: its own status and body for a refusal, 503 with
// Retry-After (and a warning) for a database that went away, 500 without
// details (and an error line) for anything else. The body carries the
// request's id (requestId), the one the Request-Id header answers.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, known := httpError(err)
	switch {
	case e == unavailableError, e == contentionError:
		s.log.WarnContext(r.Context(), "request failed: the database is unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
	case !known && r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The caller went away first: nobody reads the answer, and
		// nothing failed but the wait.
		s.log.InfoContext(r.Context(), "request abandoned by the caller", "method", r.Method, "path", r.URL.Path, "err", err)
	case !known:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
	writeJSON(w, e.Status, e.bodyFor(r))
}
