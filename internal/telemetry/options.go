package telemetry

import (
	"flag"
	"os"
)

// Options are the operator's switches for metrics and traces, shared by
// paymentsd and the wallet binary. Both are off by default.
type Options struct {
	// MetricsListen is the address of the /metrics listener ("" = off).
	// It is apart from the public listener on purpose: put it where only
	// Prometheus reaches it.
	MetricsListen string
	// OTLPEndpoint is the OTLP/HTTP endpoint traces are exported to, as a
	// URL (http://collector:4318) or host:port. Empty: the standard
	// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// variables decide; neither set means no traces.
	OTLPEndpoint string
}

// Register adds --metrics-listen and --otlp-endpoint to fs, their defaults
// read from <envPrefix>_METRICS_LISTEN and <envPrefix>_OTLP_ENDPOINT
// ("PAYMENTS", "WALLET").
func (o *Options) Register(fs *flag.FlagSet, envPrefix string) {
	fs.StringVar(&o.MetricsListen, "metrics-listen", os.Getenv(envPrefix+"_METRICS_LISTEN"),
		"address of a separate listener serving Prometheus metrics at /metrics, e.g. 127.0.0.1:9464 (default: off) ["+envPrefix+"_METRICS_LISTEN]")
	fs.StringVar(&o.OTLPEndpoint, "otlp-endpoint", os.Getenv(envPrefix+"_OTLP_ENDPOINT"),
		"OpenTelemetry: export traces over OTLP/HTTP to this endpoint, e.g. http://127.0.0.1:4318 (default: off, unless OTEL_EXPORTER_OTLP_ENDPOINT is set) ["+envPrefix+"_OTLP_ENDPOINT]")
}

// TracingOn reports whether traces are exported: an endpoint was given,
// or the standard OpenTelemetry variables name one.
func (o *Options) TracingOn() bool {
	return o.OTLPEndpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
