package service

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

// What the HTTP layer lets an operator see of each request (observe):
//
//   - its id: the caller's Request-Id when telemetry.ValidRequestID takes
//     it, else a fresh one, answered in the Request-Id header of every
//     answer and in every error body's requestId, and carried by the
//     request's context so every log line of it has request_id;
//   - its metrics: payments_http_requests_total and
//     payments_http_request_duration_seconds by method and route
//     template (never the raw path: one series per route, not per id);
//   - its server span "<METHOD> <route template>", a child of the
//     caller's traceparent, the parent of the store's spans.

// routeUnmatched is the route label of a request no route matched (404).
const routeUnmatched = "unmatched"

// httpObserver holds the HTTP layer's series and tracer.
type httpObserver struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tracer   trace.Tracer
}

func newHTTPObserver(reg *prometheus.Registry, tp trace.TracerProvider) (*httpObserver, error) {
	o := &httpObserver{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payments_http_requests_total",
			Help: "HTTP requests answered, by method, route template and status."}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "payments_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by method and route template.", Buckets: telemetry.LatencyBuckets},
			[]string{"method", "route"}),
	}
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	o.tracer = tp.Tracer("paywallet/service")
	if reg != nil {
		for _, c := range []prometheus.Collector{o.requests, o.duration} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// requestState is what the route table's handler tells the observer about
// a request it serves: its route template.
type requestState struct{ route string }

type requestStateKey struct{}

// setRoute records the route template of the request being served (the
// route table's path, or "/healthz", "/readyz").
func setRoute(r *http.Request, route string) {
	if st, ok := r.Context().Value(requestStateKey{}).(*requestState); ok {
		st.route = route
	}
}

// observe wraps the service's handler: request id, metrics and span.
func (o *httpObserver) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := telemetry.RequestIDOf(r.Header.Get(wire.HeaderRequestID))
		w.Header().Set(wire.HeaderRequestID, id)
		st := &requestState{route: routeUnmatched}
		ctx := telemetry.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		method := knownMethod(r.Method)
		ctx, span := o.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("request.id", id)))
		ctx = telemetry.WithRequestID(ctx, id)
		ctx = context.WithValue(ctx, requestStateKey{}, st)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status()
			route := st.route
			o.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
			o.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
			span.SetName(method + " " + route)
			span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// knownMethod is the method as a metric label and span name: the standard
// ones as they are, anything else "_OTHER" (as OpenTelemetry's
// conventions have it). The label is read before authentication and
// routing, so an anonymous caller inventing methods would otherwise make
// series without bound (found by review).
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// statusWriter remembers the status an answer was written with.
type statusWriter struct {
	http.ResponseWriter
	code atomic.Int32
}

func (w *statusWriter) WriteHeader(code int) {
	w.code.CompareAndSwap(0, int32(code))
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.code.CompareAndSwap(0, http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// status is the answer's status: 200 when the handler wrote nothing (the
// server then answers 200 with an empty body).
func (w *statusWriter) status() int {
	if c := w.code.Load(); c != 0 {
		return int(c)
	}
	return http.StatusOK
}
