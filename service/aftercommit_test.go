package service

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"paywallet/service/ledger"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

// commitFault wraps the store of a test service to fail the database right
// after a commit. Once armed, the first transaction that commits a write
// trips it, and from then on every transaction fails before it begins, as
// if the database had gone away the moment it acknowledged that commit,
// until the test heals it. A request whose answer needed the database after
// its commit (a re-read, a second transaction for the idempotency record)
// then fails although its work was done. It exists only in tests.
type commitFault struct {
	store.Store
	mu      sync.Mutex
	armed   bool
	tripped bool
	refused int // transactions refused while tripped
}

var errGone = errors.New("commitFault: the database went away after a commit")

func (f *commitFault) arm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.tripped, f.refused = true, false, 0
}

// heal brings the database back and reports whether the fault tripped.
func (f *commitFault) heal() (tripped bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tripped = f.tripped
	f.armed, f.tripped = false, false
	return tripped
}

func (f *commitFault) Tx(ctx context.Context, fn func(store.Tx) error) error {
	return f.run(fn, func(fn func(store.Tx) error) error { return f.Store.Tx(ctx, fn) })
}

func (f *commitFault) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	return f.run(fn, func(fn func(store.Tx) error) error { return f.Store.TxFor(ctx, key, fn) })
}

func (f *commitFault) run(fn func(store.Tx) error, tx func(func(store.Tx) error) error) error {
	f.mu.Lock()
	if f.tripped {
		f.refused++
		f.mu.Unlock()
		return errGone
	}
	f.mu.Unlock()
	var wrote bool
	err := tx(func(t store.Tx) error {
		wrote = false // fn may run again after a serialization failure
		return fn(&writeSpy{Tx: t, wrote: &wrote})
	})
	if err == nil && wrote {
		f.mu.Lock()
		f.tripped = f.tripped || f.armed
		f.mu.Unlock()
	}
	return err
}

// writeSpy notes the writes of the request paths under test.
type writeSpy struct {
	store.Tx
	wrote *bool
}

func (w *writeSpy) PostLedger(ctx context.Context, lt *ledger.Transaction) (bool, error) {
	*w.wrote = true
	return w.Tx.PostLedger(ctx, lt)
}

func (w *writeSpy) CreateQuote(ctx context.Context, q *store.Quote) error {
	*w.wrote = true
	return w.Tx.CreateQuote(ctx, q)
}

func (w *writeSpy) CreateTransaction(ctx context.Context, x *store.Transaction) error {
	*w.wrote = true
	return w.Tx.CreateTransaction(ctx, x)
}

func (w *writeSpy) CreateExternalAccount(ctx context.Context, a *store.ExternalAccount) error {
	*w.wrote = true
	return w.Tx.CreateExternalAccount(ctx, a)
}

func (w *writeSpy) PutIdempotencyRecord(ctx context.Context, r *store.IdempotencyRecord) error {
	*w.wrote = true
	return w.Tx.PutIdempotencyRecord(ctx, r)
}

// withCommitFault puts f around the test service's store (SQLite unless an
// earlier option chose one).
func withCommitFault(t *testing.T, f *commitFault) func(*Config) {
	return func(c *Config) {
		if c.Store == nil {
			st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			c.Store = st
		}
		f.Store = c.Store
		c.Store = f
	}
}

// TestAnswerAfterCommit (issue 14, "5xx after commit"): when the database
// fails right after a write committed, the request still gets its 2xx with
// the committed resource, and a retry with the same Idempotency-Key gets
// the same body. Quote, execute, sandbox funding, external account.
func TestAnswerAfterCommit(t *testing.T) { onBothStores(t, testAnswerAfterCommit) }

func testAnswerAfterCommit(t *testing.T, opts ...func(*Config)) {
	f := &commitFault{}
	e := newEnv(t, append(opts, sandbox, withCommitFault(t, f))...)
	p := e.newPayer("after-commit@example.com", 5_000)
	dest := e.destination(p, "12345")
	key := func(k string) map[string]string { return map[string]string{wire.HeaderIdempotencyKey: k} }

	// committed sends the request with the database failing after its
	// commit, checks the answer, brings the database back and checks that a
	// retry with the key replays the answer.
	committed := func(name, method, path string, body any, want int, headers map[string]string) response {
		t.Helper()
		f.arm()
		r := e.do(method, path, body, headers)
		gone := e.do("GET", "/customers/"+p.customer.ID, nil, nil) // the fault is real
		if !f.heal() {
			t.Fatalf("%s: the fault did not trip: %d %s", name, r.status, r.body)
		}
		if gone.status != http.StatusInternalServerError {
			t.Fatalf("%s: a read after the commit: %d %s", name, gone.status, gone.body)
		}
		if r.status != want {
			t.Fatalf("%s: %d after the commit, want %d: %s", name, r.status, want, r.body)
		}
		if headers[wire.HeaderIdempotencyKey] != "" {
			again := e.do(method, path, body, headers)
			if again.status != want || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s: retry with the key: %d %s\nfirst answer: %d %s", name, again.status, again.body, r.status, r.body)
			}
		}
		return r
	}

	var q wire.Quote
	committed("quote", "POST", "/quotes", quoteBody(p, dest.ID, "SENDING", 1_000), http.StatusCreated, key("q-1")).decode(t, &q)
	if got := e.transaction(q.TransactionID); got.Status != "PENDING" || got.QuoteID != q.ID {
		t.Fatalf("quote answered %s, transaction stored %+v", q.ID, got)
	}

	var executed wire.Quote
	committed("execute", "POST", "/quotes/"+q.ID+"/execute", nil, http.StatusOK,
		map[string]string{wire.HeaderWalletSignature: wire.SandboxSignature, wire.HeaderIdempotencyKey: "x-1"}).decode(t, &executed)
	if executed.ID != q.ID || executed.Status != "PROCESSING" || e.transaction(q.TransactionID).Status != "PROCESSING" {
		t.Fatalf("execute answered %s %s", executed.ID, executed.Status)
	}
	balances(t, e.account(p.account.ID), 4_000, 5_000)

	var funded wire.InternalAccount
	committed("funding", "POST", "/sandbox/internal-accounts/"+p.account.ID+"/fund", map[string]any{"amount": 700}, http.StatusOK, key("f-1")).decode(t, &funded)
	if funded.Balance.Amount != 4_700 || funded.TotalBalance.Amount != 5_700 {
		t.Fatalf("funding answered balance %d total %d", funded.Balance.Amount, funded.TotalBalance.Amount)
	}
	balances(t, e.account(p.account.ID), 4_700, 5_700)

	var created wire.ExternalAccount
	committed("external account", "POST", "/customers/external-accounts", usdBody(p.customer.ID, "000000077777"), http.StatusCreated, nil).decode(t, &created)
	if got := e.getAccount(created.ID); got.ID != created.ID || got.Status != created.Status {
		t.Fatalf("external account answered %+v, stored %+v", created, got)
	}
}
