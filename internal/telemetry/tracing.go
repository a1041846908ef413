package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Propagator reads and writes the W3C Trace Context headers (traceparent,
// tracestate): from the browser's requests into the BFF, from the BFF to
// the service.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// NewTracerProvider returns the tracer provider o asks for: one exporting
// over OTLP/HTTP in batches when tracing is on (see [Options.TracingOn]),
// a no-op one otherwise. shutdown flushes what is buffered; call it when
// the process stops.
func NewTracerProvider(ctx context.Context, o Options, serviceName string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !o.TracingOn() {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if e := o.OTLPEndpoint; e != "" {
		if strings.Contains(e, "://") {
			opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(e, "/")+"/v1/traces"))
		} else {
			opts = append(opts, otlptracehttp.WithEndpoint(e), otlptracehttp.WithInsecure())
		}
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	sdk := NewSDKTracerProvider(serviceName, sdktrace.WithBatcher(exp))
	return sdk, sdk.Shutdown, nil
}

// NewSDKTracerProvider is a tracer provider of the OpenTelemetry SDK for
// serviceName with opts (an exporter): NewTracerProvider's, and the trace
// tests' with an in-memory exporter (sdktrace.WithSyncer).
func NewSDKTracerProvider(serviceName string, opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(serviceName))
	return sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithResource(res)}, opts...)...)
}

// StartTracing is NewTracerProvider for a binary: the provider, and a stop
// to defer that flushes what is buffered (5 s at most) and logs a failure
// to log. With tracing off it returns a no-op provider and a stop that
// does nothing.
func StartTracing(ctx context.Context, o Options, serviceName string, log *slog.Logger) (trace.TracerProvider, func(), error) {
	tp, shutdown, err := NewTracerProvider(ctx, o, serviceName)
	if err != nil {
		return nil, nil, err
	}
	return tp, func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(flush); err != nil {
			log.Warn("flushing traces failed", "err", err)
		}
	}, nil
}
