package bff

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

// What an operator sees of the BFF (README "Observability"): a Request-Id
// on every answer and in every log line of a request, Prometheus series
// on the registry it is given (Config.Registry), and OpenTelemetry spans
// on the tracer provider it is given (Config.TracerProvider): a server
// span per request, continuing the browser's traceparent, and a client
// span per call to the service, whose traceparent the service continues.

// observer holds the BFF's metrics and tracer.
type observer struct {
	tracer trace.Tracer

	requests        *prometheus.CounterVec   // method, route, status
	latency         *prometheus.HistogramVec // method, route
	streams         prometheus.Gauge
	streamsTotal    prometheus.Counter
	webhooks        *prometheus.CounterVec   // result
	upstreamLatency *prometheus.HistogramVec // status
}

// Webhook results, the values of bff_webhooks_received_total's "result".
const (
	webhookNew         = "new"         // recorded and passed to the browsers
	webhookDuplicate   = "duplicate"   // delivered before; answered 200, not passed on again
	webhookRejected    = "rejected"    // bad signature or not a webhook envelope: 4xx
	webhookUnavailable = "unavailable" // could not be checked or recorded: 503, delivered again later
)

// newObserver registers the BFF's series on reg (a registry of its own
// when nil: the series are kept but nobody scrapes them) and takes its
// tracer from tp (a no-op one when nil).
func newObserver(reg prometheus.Registerer, tp trace.TracerProvider) (*observer, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	o := &observer{
		tracer: tp.Tracer("paywallet/bff"),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bff_http_requests_total",
			Help: "Requests the BFF answered, by method, Fiber route path (/api/quotes/:id/execute; /* for the site's files) and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bff_http_request_duration_seconds",
			Help:    "Time the BFF took to answer, by method and Fiber route path; an event stream counts until its headers are sent.",
			Buckets: telemetry.LatencyBuckets,
		}, []string{"method", "route"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bff_event_streams",
			Help: "Event streams (GET /api/events) open now.",
		}),
		streamsTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bff_event_streams_total",
			Help: "Event streams (GET /api/events) opened since the start.",
		}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bff_webhooks_received_total",
			Help: "Webhooks of the service received, by result: new, duplicate (delivered before), rejected (bad signature or body), unavailable (could not be checked or recorded; the service delivers it again).",
		}, []string{"result"}),
		upstreamLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bff_upstream_request_duration_seconds",
			Help:    "Time of each call to the payments service, by the status it answered (\"error\" when none came).",
			Buckets: telemetry.LatencyBuckets,
		}, []string{"status"}),
	}
	for _, c := range []prometheus.Collector{o.requests, o.latency, o.streams, o.streamsTotal, o.webhooks, o.upstreamLatency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Every result appears from the start, so a rate() over them needs no
	// first event.
	for _, r := range []string{webhookNew, webhookDuplicate, webhookRejected, webhookUnavailable} {
		o.webhooks.WithLabelValues(r)
	}
	return o, nil
}

// fiberCarrier reads the trace headers of a request (propagation.TextMapCarrier).
type fiberCarrier struct{ c *fiber.Ctx }

func (f fiberCarrier) Get(key string) string { return f.c.Get(key) }
func (f fiberCarrier) Set(string, string)    {}
func (f fiberCarrier) Keys() []string {
	var keys []string
	f.c.Context().Request.Header.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

var _ propagation.TextMapCarrier = fiberCarrier{}

// observe is the first middleware: it gives the request its id (the
// browser's Request-Id when telemetry.ValidRequestID accepts it, else a
// new one) and answers with it, opens the server span (continuing the
// browser's traceparent), puts both in the request's context for the
// handlers, their log lines and their calls to the service, and counts
// the answer. It answers a handler's error itself (the error handler), so
// that the status it records and the span's is the one sent, and so that
// errors, 404s, static files, event streams and webhooks all carry the id.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	id := telemetry.RequestIDOf(c.Get(wire.HeaderRequestID))
	c.Set(wire.HeaderRequestID, id)
	method := c.Method()
	ctx := telemetry.Propagator.Extract(context.Background(), fiberCarrier{c})
	ctx, span := s.obs.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("request.id", id)))
	defer span.End()
	c.SetUserContext(telemetry.WithRequestID(ctx, id))

	if err := c.Next(); err != nil {
		if herr := s.errorHandler(c, err); herr != nil {
			_ = c.SendStatus(http.StatusInternalServerError)
		}
	}

	// The route the request ended on: its handler's path (/api/quotes/:id),
	// the /api group's catch-all ("/api") for an unknown /api path, "/*"
	// for the site. Never the raw path, whose ids would make a series each.
	route := "unmatched"
	if r := c.Route(); r != nil && r.Path != "" {
		route = r.Path
	}
	status := c.Response().StatusCode()
	s.obs.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	s.obs.latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	return nil
}

// ensureRequestID gives an id to a request that did not pass through
// observe: one fasthttp refused before routing (a body over the limit, a
// header too large), which Fiber answers through the error handler.
func ensureRequestID(c *fiber.Ctx) {
	if requestID(c) != "" {
		return
	}
	id := telemetry.NewRequestID()
	c.Set(wire.HeaderRequestID, id)
	c.SetUserContext(telemetry.WithRequestID(c.UserContext(), id))
}

// withRequestIDHeader wraps the server's handler so that an answer Fiber
// writes before any middleware runs (a method it does not know) has a
// Request-Id too.
func withRequestIDHeader(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		next(ctx)
		if len(ctx.Response.Header.Peek(wire.HeaderRequestID)) == 0 {
			ctx.Response.Header.Set(wire.HeaderRequestID, telemetry.NewRequestID())
		}
	}
}

// requestID is the id observe gave the request.
func requestID(c *fiber.Ctx) string { return telemetry.RequestIDFrom(c.UserContext()) }

// carry returns to with the request id and the span of from: a context
// that ends with the server (s.base) instead of the request still belongs
// to the request in the log and in the trace.
func carry(from, to context.Context) context.Context {
	if id := telemetry.RequestIDFrom(from); id != "" {
		to = telemetry.WithRequestID(to, id)
	}
	if span := trace.SpanFromContext(from); span.SpanContext().IsValid() {
		to = trace.ContextWithSpan(to, span)
	}
	return to
}

// observedTransport carries every call to the service (the calls of
// upstream.do and the webhook keys' fetch): a client span with its
// traceparent, the request's id as Request-Id, the latency histogram, and
// a warning with the service's own Request-Id when it answered 5xx.
type observedTransport struct {
	next http.RoundTripper
	s    *Server
}

func (t observedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o := t.s.obs
	ctx, span := o.tracer.Start(req.Context(), req.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Host), attribute.String("url.path", req.URL.Path)))
	defer span.End()
	out := req.Clone(ctx) // a RoundTripper must not change the caller's request
	telemetry.Propagator.Inject(ctx, propagation.HeaderCarrier(out.Header))
	// The browser's signed retry goes with its challenge id ("Request:<uuid>",
	// which the service pairs with the signature); every other call with
	// this request's id, so the service's log lines of it carry the same id.
	if !strings.HasPrefix(out.Header.Get(wire.HeaderRequestID), challengePrefix) {
		id := telemetry.RequestIDFrom(ctx)
		if id == "" {
			id = telemetry.NewRequestID()
		}
		out.Header.Set(wire.HeaderRequestID, id)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		o.upstreamLatency.WithLabelValues("error").Observe(time.Since(start).Seconds())
		span.RecordError(err)
		span.SetStatus(codes.Error, "no answer")
		return nil, err
	}
	o.upstreamLatency.WithLabelValues(strconv.Itoa(resp.StatusCode)).Observe(time.Since(start).Seconds())
	upID := resp.Header.Get(wire.HeaderRequestID)
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode), attribute.String("upstream.request.id", upID))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
		t.s.log.WarnContext(ctx, "bff: the service answered "+strconv.Itoa(resp.StatusCode),
			slog.String("method", req.Method), slog.String("path", req.URL.Path), slog.String("upstream_request_id", upID))
	}
	return resp, nil
}

// challengePrefix starts a signed-retry challenge's id (Request:<uuid>).
const challengePrefix = "Request:"

// upstreamError is a failed call to the service that got an answer (one
// the BFF does not relay): the answer's Request-Id, for the log line that
// reports it, so that the service's lines of it can be found.
type upstreamError struct {
	err       error
	requestID string
}

func (e *upstreamError) Error() string { return e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// upstreamRequestID is the service's Request-Id of the answer err is about,
// or "".
func upstreamRequestID(err error) string {
	var ue *upstreamError
	if errors.As(err, &ue) {
		return ue.requestID
	}
	return ""
}
