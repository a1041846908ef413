package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Stats are the store's counters since Open, for the metrics endpoint:
// the connection pool's own figures and what the transactions met.
type Stats struct {
	Pool sql.DBStats
	// Dialect is "postgres" or "sqlite".
	Dialect string
	// Commits counts the transactions that committed.
	Commits uint64
	// Retries counts the runs of a transaction's fn after a lost race
	// (serialization failure, deadlock) or a connection lost before COMMIT.
	Retries uint64
	// Unavailable counts the transactions given up as store.ErrUnavailable.
	Unavailable uint64
	// Contention counts the transactions given up as store.ErrContention.
	Contention uint64
}

// counters are Stats' live counters.
type counters struct {
	commits, retries, unavailable, contention atomic.Uint64
}

// Stats returns the store's counters.
func (db *DB) Stats() Stats {
	name := "sqlite"
	if db.d != sqliteDialect {
		name = "postgres"
	}
	return Stats{
		Pool:        db.db.Stats(),
		Dialect:     name,
		Commits:     db.count.commits.Load(),
		Retries:     db.count.retries.Load(),
		Unavailable: db.count.unavailable.Load(),
		Contention:  db.count.contention.Load(),
	}
}

// SetTracerProvider makes the store trace its transactions and their
// statements with tp (a span per transaction attempt, one per statement,
// children of the caller's span). Call it before the first Tx; nil (the
// default) traces nothing.
func (db *DB) SetTracerProvider(tp trace.TracerProvider) {
	if tp == nil {
		db.tracer = nil
		return
	}
	db.tracer = tp.Tracer("paywallet/service/store/sqlstore")
}

// Ready reports whether the store can take traffic: the database answers
// within a second and its schema has this binary's migrations (a newer
// binary's on top are fine: see migrate, rolling upgrades).
func (db *DB) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var v int
	if err := db.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("store: database not reachable: %w", err)
	}
	want, err := latestMigration(db.d)
	if err != nil {
		return err
	}
	if v < want {
		return fmt.Errorf("store: schema at migration %d, this binary needs %d", v, want)
	}
	return nil
}

// startTx starts the span of a transaction attempt ("db.tx") when the
// store traces; end closes it with the attempt's outcome.
func (db *DB) startTx(ctx context.Context) (_ context.Context, end func(outcome, error)) {
	if db.tracer == nil {
		return ctx, func(outcome, error) {}
	}
	ctx, span := db.tracer.Start(ctx, "db.tx", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", db.systemName())))
	return ctx, func(res outcome, err error) {
		span.SetAttributes(attribute.String("db.tx.outcome", res.String()))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, res.String())
		}
		span.End()
	}
}

// span starts the span of one statement ("db.query"), a child of the
// transaction's; end closes it with the statement's error.
func (t *tx) span(ctx context.Context, q string) (context.Context, func(error)) {
	ctx, span := t.tracer.Start(ctx, "db.query", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", systemName(t.d)), attribute.String("db.query.text", q)))
	return ctx, func(err error) {
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			span.RecordError(err)
			span.SetStatus(codes.Error, "statement failed")
		}
		span.End()
	}
}

func (db *DB) systemName() string { return systemName(db.d) }

// systemName is the OpenTelemetry db.system.name of the dialect.
func systemName(d *dialect) string {
	if d == sqliteDialect {
		return "sqlite"
	}
	return "postgresql"
}

func (o outcome) String() string {
	switch o {
	case finished:
		return "finished"
	case raced:
		return "raced"
	case lost:
		return "lost"
	case unknown:
		return "unknown"
	}
	return "?"
}
