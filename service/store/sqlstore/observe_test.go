package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"paywallet/service/store"
)

// TestTxSpans: with a tracer provider, a transaction is a "db.tx" span
// and each of its statements a "db.query" span below it, in the caller's
// trace; without one nothing is traced.
func TestTxSpans(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "spans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := putSetting(ctx, db, "untraced"); err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	db.SetTracerProvider(tp)
	ctx, root := tp.Tracer("test").Start(ctx, "request")
	err = db.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.PutSettingIfAbsent(ctx, "traced", []byte("v")); err != nil {
			return err
		}
		_, err := tx.GetSetting(ctx, "traced")
		return err
	})
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	var txSpan *tracetest.SpanStub
	queries := 0
	for i := range spans {
		s := &spans[i]
		if s.SpanContext.TraceID() != root.SpanContext().TraceID() {
			t.Errorf("span %s is in another trace", s.Name)
		}
		switch s.Name {
		case "db.tx":
			txSpan = s
			if s.Parent.SpanID() != root.SpanContext().SpanID() {
				t.Error("db.tx is not a child of the caller's span")
			}
		case "db.query":
			queries++
		}
	}
	if txSpan == nil || queries < 2 {
		t.Fatalf("spans: %d db.query, db.tx %v; all: %v", queries, txSpan != nil, spans)
	}
	for _, s := range spans {
		if s.Name != "db.query" {
			continue
		}
		if s.Parent.SpanID() != txSpan.SpanContext.SpanID() {
			t.Error("a db.query span is not a child of db.tx")
		}
		attrs := map[string]string{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		if attrs["db.system.name"] != "sqlite" || attrs["db.query.text"] == "" {
			t.Errorf("db.query attributes: %v", attrs)
		}
	}
}
