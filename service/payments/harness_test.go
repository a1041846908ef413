package payments

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"paywallet/service/mail"
	"paywallet/service/store/sqlstore"
)

// The domain's own tests check what the HTTP layer cannot reach (a
// transaction that fails after an event was recorded, the rails of every
// account type). The operations' behaviour is tested through the HTTP
// interface, in package service.

const testCredential = "tok_test:s3cret-platform-value"

const (
	testRPID   = "localhost"
	testOrigin = "http://localhost:8080"
)

var testAtRestKey = []byte("0123456789abcdef0123456789abcdef")

// newTestService is a Service on a fresh SQLite database, its clock stopped
// at a fixed instant.
func newTestService(tb testing.TB, mutate ...func(*Config)) *Service {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "test.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cfg := Config{Store: st, Mailer: &mail.Mailbox{}, PlatformCredential: testCredential,
		Now: func() time.Time { return now }, AtRestKey: testAtRestKey,
		WebAuthnRPID: testRPID, WebAuthnOrigins: []string{testOrigin}}
	for _, m := range mutate {
		m(&cfg)
	}
	svc, err := New(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}
