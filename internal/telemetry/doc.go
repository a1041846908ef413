// Package telemetry is what the service and the BFF share to let an
// operator see inside them: request ids, the Prometheus registry and its
// listener, and the OpenTelemetry tracer provider.
//
// Everything here is per process and passed in, never global: tests run
// several services and BFFs in one binary, each with its own registry and
// tracer provider (an in-memory exporter in the trace tests).
//
//   - Request ids: every answer of the service and of the BFF carries a
//     Request-Id header (the caller's when it sent a valid one, see
//     [ValidRequestID], else [NewRequestID]), every error body a
//     "requestId", and every log line of the request a "request_id"
//     attribute, added by [LogHandler] from the request's context
//     ([WithRequestID]).
//   - Metrics: [NewRegistry] and [ServeMetrics], on an address of their
//     own (off unless [Options.MetricsListen] is set), so that /metrics is
//     never reachable through the public listener.
//   - Traces: [NewTracerProvider] exports over OTLP/HTTP when an endpoint
//     is configured and is a no-op provider otherwise; [Propagator] reads
//     and writes the W3C traceparent header.
package telemetry
