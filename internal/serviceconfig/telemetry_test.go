package serviceconfig

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"paywallet/internal/telemetry"
)

// TestRegistryAndTracerProvider: the registry and tracer provider a binary
// passes in get the service's series, the database's and the request's
// server span; the store traces with the same provider, its spans children
// of the request's.
func TestRegistryAndTracerProvider(t *testing.T) {
	isolate(t)
	reg := telemetry.NewRegistry()
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewSDKTracerProvider("test", sdktrace.WithSyncer(exp))
	o := Options{Database: filepath.Join(t.TempDir(), "svc.db"), Mode: "sandbox", NoMail: true, WebAuthnRPID: "localhost",
		PlatformCredential: "tok:secret", Registry: reg, TracerProvider: tp}
	b, err := o.Build(context.Background(), slog.New(slog.DiscardHandler), "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	req := httptest.NewRequest("GET", "/2025-10-13/customers", nil)
	req.SetBasicAuth("tok", "secret")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	rec := httptest.NewRecorder()
	b.Service.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}

	srv := httptest.NewServer(telemetry.MetricsHandler(reg))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`payments_http_requests_total{method="GET",route="/customers",status="200"} 1`,
		`payments_db_connections{state="in_use"}`, `payments_db_connections{state="idle"}`, `payments_db_connections_max`,
		`payments_db_wait_total`, `payments_db_wait_seconds_total`, `payments_db_commits_total`,
		`payments_db_tx_retries_total 0`, `payments_db_unavailable_total 0`, `payments_db_contention_total 0`,
		`payments_settlement_backlog`, `payments_webhook_lag_seconds`, `payments_sign_ins_total`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	var server string
	spans := exp.GetSpans()
	for _, s := range spans {
		if s.Name == "GET /customers" {
			server = s.SpanContext.SpanID().String()
			if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("server span in trace %s", s.SpanContext.TraceID())
			}
		}
	}
	if server == "" {
		t.Fatalf("no server span among %d", len(spans))
	}
	// The store's spans (db.tx, db.query) are the lead's part of issue
	// 30; until they exist there is nothing more to check here.
	var db int
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "db.") && s.Parent.SpanID().String() == server {
			db++
		}
	}
	if db == 0 {
		t.Logf("no store span is a child of the server span yet (%d spans)", len(spans))
	}
}
