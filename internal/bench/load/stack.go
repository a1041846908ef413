package load

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"paywallet/service"
	"paywallet/service/ids"
	"paywallet/service/ledger"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/wire"
)

// The platform credential of every service the benchmark starts.
const (
	platformID     = "tok_loadbench"
	platformSecret = "loadbench-platform-secret-5c1e9a7d"
)

var basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(platformID+":"+platformSecret))

// countingStore counts the store transactions the service runs and how
// often the store ran one again: sqlstore reruns fn after a PostgreSQL
// serialization failure or deadlock, so every run of fn beyond the first of
// a transaction is a retry. Both are counted when the transaction ends.
// Wrapping costs one closure per transaction.
type countingStore struct {
	store.Store
	txs, retries atomic.Int64
}

func (s *countingStore) Tx(ctx context.Context, fn func(store.Tx) error) error {
	return s.count(fn, func(fn func(store.Tx) error) error { return s.Store.Tx(ctx, fn) })
}

func (s *countingStore) TxFor(ctx context.Context, key string, fn func(store.Tx) error) error {
	return s.count(fn, func(fn func(store.Tx) error) error { return s.Store.TxFor(ctx, key, fn) })
}

// TxLazy passes the store's lazy commit through (store.LazyStore), so the
// service's webhook worker runs its rounds as it does on the bare store in
// a real deployment (cmd/paymentsd and cmd/wallet hand the service the
// *sqlstore.DB itself); without it the wrapper hid the capability and
// every worker round waited for a durable commit.
func (s *countingStore) TxLazy(ctx context.Context, fn func(store.Tx) error) error {
	l, ok := s.Store.(store.LazyStore)
	if !ok {
		return s.Tx(ctx, fn)
	}
	return s.count(fn, func(fn func(store.Tx) error) error { return l.TxLazy(ctx, fn) })
}

// count runs fn through run, counting the transaction and its reruns.
func (s *countingStore) count(fn func(store.Tx) error, run func(func(store.Tx) error) error) error {
	runs := 0
	err := run(func(tx store.Tx) error {
		runs++
		return fn(tx)
	})
	s.txs.Add(1)
	if runs > 1 {
		s.retries.Add(int64(runs - 1))
	}
	return err
}

// counts returns the transactions ended and their retries so far.
func (s *countingStore) counts() (txs, retries int64) {
	return s.txs.Load(), s.retries.Load()
}

// stack is one running payments service: the store, the service with its
// workers, net/http serving it on a loopback port, and a client that keeps
// connections alive.
type stack struct {
	kind  string // sqlite or postgres
	store *countingStore
	svc   *service.Service
	box   *mail.Mailbox
	logs  *logHandler // the service's logger
	// api calls the service with the platform credential.
	api     *api
	tr      *http.Transport
	log     func(format string, args ...any)
	closers []func()
	// haltWorkers stops the service's background work (settlement,
	// verification, webhook delivery) and waits for it to end; once.
	haltWorkers func()
	// pgExec runs a statement on PostgreSQL with {schema} replaced by the
	// stack's schema; nil on SQLite.
	pgExec func(ctx context.Context, q string) error
	// sqlitePath is the SQLite database's file; "" on PostgreSQL.
	sqlitePath string
	// pgSessions reads how many connections PostgreSQL has accepted to the
	// database so far (pg_stat_database.sessions); nil on SQLite.
	pgSessions func(ctx context.Context) int64
	// seq makes e-mail addresses unique in the stack, accounts account
	// numbers (see accountNumber).
	seq, accounts atomic.Int64
	// skew moves the service's clock ahead of the machine's (the settle
	// cell makes executed payments due without waiting for the rail).
	skew atomic.Int64
}

// startStack opens a fresh store of the kind (a new SQLite file, or a new
// schema of the PostgreSQL database) and serves a production-mode service
// on it. name tells the stack's store apart from the others of the run;
// opts change the service's configuration.
func startStack(ctx context.Context, p plan, kind, name string, opts ...func(*service.Config)) (_ *stack, err error) {
	s := &stack{kind: kind, log: p.log}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	st, err := s.openStore(ctx, p, name)
	if err != nil {
		return nil, err
	}
	s.store = &countingStore{Store: st}
	// The dev mailbox keeps every code: the scenarios read codes of many
	// logins prepared at once.
	s.box = &mail.Mailbox{Limit: 1 << 30}
	s.logs = newLogHandler(p.log, kind+" service: ", slog.LevelWarn)
	s.closers = append(s.closers, s.logs.flush)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	cfg := service.Config{
		Store:              s.store,
		Mailer:             s.box,
		Mode:               service.ModeProduction,
		PlatformCredential: platformID + ":" + platformSecret,
		AtRestKey:          key,
		WebAuthnRPID:       "localhost",
		WebAuthnOrigins:    []string{"http://localhost:8080"},
		Logger:             slog.New(s.logs),
		Now:                func() time.Time { return time.Now().Add(time.Duration(s.skew.Load())) },
	}
	for _, o := range opts {
		o(&cfg)
	}
	s.svc, err = service.New(ctx, cfg)
	if err != nil {
		return nil, err
	}

	workers, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s.svc.RunWorkers(workers)
	}()
	s.haltWorkers = sync.OnceFunc(func() { stopWorkers(); <-stopped })
	s.closers = append(s.closers, s.haltWorkers)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s.svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	s.tr = newTransport()
	s.closers = append(s.closers, s.tr.CloseIdleConnections)
	s.api = &api{hc: &http.Client{Transport: s.tr, Timeout: time.Minute},
		base: "http://" + ln.Addr().String() + wire.BasePath, header: http.Header{"Authorization": {basicAuth}}}
	return s, nil
}

// close stops everything startStack started, newest first.
func (s *stack) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// openStore opens the stack's store with sqlstore's production settings.
// SQLite gets a new file; PostgreSQL a new schema (chosen by search_path),
// dropped on close, so that runs and scenarios sharing one database never
// see each other's rows.
func (s *stack) openStore(ctx context.Context, p plan, name string) (*sqlstore.DB, error) {
	if s.kind == "sqlite" {
		dir, err := os.MkdirTemp(p.tempDir, "loadbench-"+name+"-")
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { _ = os.RemoveAll(dir) })
		s.sqlitePath = filepath.Join(dir, "wallet.db")
		db, err := sqlstore.OpenSQLite(ctx, s.sqlitePath)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { _ = db.Close() })
		return db, nil
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	schema := "loadbench_" + name + "_" + hex.EncodeToString(suffix[:])
	admin, err := sql.Open("pgx", p.pgURL)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = admin.Close() })
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, fmt.Errorf("load: create schema %s: %w", schema, err)
	}
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			s.log("load: drop schema %s: %v", schema, err)
		}
	})
	db, err := sqlstore.OpenPostgres(ctx, withSearchPath(p.pgURL, schema))
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = db.Close() })
	s.pgExec = func(ctx context.Context, q string) error {
		_, err := admin.ExecContext(ctx, strings.ReplaceAll(q, "{schema}", schema))
		return err
	}
	s.pgSessions = func(ctx context.Context) int64 {
		var n int64
		err := admin.QueryRowContext(ctx, `SELECT sessions FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
		if err != nil {
			return 0
		}
		return n
	}
	return db, nil
}

// withSearchPath adds search_path to a PostgreSQL URL or key=value DSN, so
// that every connection of the pool works in schema.
func withSearchPath(dsn, schema string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// newTransport is the load generator's HTTP transport: keep-alive
// connections, enough idle ones per host for the largest client count, so
// that no measured request pays for a TCP handshake.
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     2 * time.Minute,
		DisableCompression:  true,
	}
}

// api sends requests to one base URL with fixed headers.
type api struct {
	hc     *http.Client
	base   string
	header http.Header
}

// do sends one request and reads the whole answer. hdr are name, value
// pairs added to the fixed headers.
func (a *api) do(ctx context.Context, method, path string, body []byte, hdr ...string) (int, []byte, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range a.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// expect sends a request and fails unless the answer has status want; out,
// when not nil, receives the decoded body.
func (a *api) expect(ctx context.Context, want int, out any, method, path string, body []byte, hdr ...string) error {
	status, b, err := a.do(ctx, method, path, body, hdr...)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, status, want, clip(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// clip shortens an answer body for an error message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// customer is a customer made through POST /customers with an e-mail, which
// gives it an embedded wallet and an EMAIL_OTP credential.
type customer struct {
	email, id, account, credential string
}

func (s *stack) newCustomer(ctx context.Context, prefix string) (customer, error) {
	c := customer{email: fmt.Sprintf("%s-%d@bench.example.com", prefix, s.seq.Add(1))}
	var cust wire.Customer
	body := mustJSON(wire.CustomerCreateRequest{PlatformCustomerID: c.email, CustomerType: "INDIVIDUAL", Email: c.email})
	if err := s.api.expect(ctx, http.StatusCreated, &cust, "POST", "/customers", body); err != nil {
		return c, err
	}
	c.id = cust.ID
	return c, s.walletOf(ctx, &c)
}

// walletOf fills in the wallet and credential of a customer whose e-mail
// and id are set.
func (s *stack) walletOf(ctx context.Context, c *customer) error {
	var accts wire.List[wire.InternalAccount]
	if err := s.api.expect(ctx, http.StatusOK, &accts, "GET", "/customers/internal-accounts?type=EMBEDDED_WALLET&customerId="+url.QueryEscape(c.id), nil); err != nil {
		return err
	}
	if len(accts.Data) != 1 {
		return fmt.Errorf("customer %s has %d wallets", c.id, len(accts.Data))
	}
	c.account = accts.Data[0].ID
	var creds wire.Data[wire.AuthMethod]
	if err := s.api.expect(ctx, http.StatusOK, &creds, "GET", "/auth/credentials?accountId="+url.QueryEscape(c.account), nil); err != nil {
		return err
	}
	if len(creds.Data) != 1 || creds.Data[0].Type != wire.TypeEmailOTP {
		return fmt.Errorf("wallet %s has credentials %+v", c.account, creds.Data)
	}
	c.credential = creds.Data[0].ID
	return nil
}

// pendingLogin is leg 1 of an e-mail OTP login, ready to send: the code
// that was e-mailed, sealed to the target bundle with a fresh client key,
// as the wallet page does it.
type pendingLogin struct {
	credential string
	body       []byte // {"type":"EMAIL_OTP","encryptedOtpBundle":…}
	key        *walletcrypto.PrivateKey
}

// startLogin asks the service to e-mail a code for the customer's
// credential and seals it.
func (s *stack) startLogin(ctx context.Context, c customer) (pendingLogin, error) {
	var am wire.AuthMethod
	if err := s.api.expect(ctx, http.StatusOK, &am, "POST", "/auth/credentials/"+c.credential+"/challenge", []byte("{}")); err != nil {
		return pendingLogin{}, err
	}
	body, key, err := s.sealCode(am.OTPEncryptionTargetBundle, c.email)
	return pendingLogin{credential: c.credential, body: body, key: key}, err
}

// sealCode checks a target bundle against the pinned signer key, reads the
// code e-mailed to address and seals it with a fresh key; it returns the
// verify body and the key.
func (s *stack) sealCode(targetBundle, address string) ([]byte, *walletcrypto.PrivateKey, error) {
	target, err := walletcrypto.VerifyTargetBundle(targetBundle, s.svc.SignerPublicKey())
	if err != nil {
		return nil, nil, err
	}
	msg, ok := s.box.Latest(address)
	if !ok || len(msg.Code) != 6 {
		return nil, nil, fmt.Errorf("no code was e-mailed to %s", address)
	}
	key, err := walletcrypto.GenerateKey()
	if err != nil {
		return nil, nil, err
	}
	sealed, err := walletcrypto.SealOTP(target, msg.Code, key.PublicKey())
	if err != nil {
		return nil, nil, err
	}
	return mustJSON(wire.VerifyRequest{Type: wire.TypeEmailOTP, EncryptedOTPBundle: sealed}), key, nil
}

// login runs both legs of the e-mail OTP login through the service API and
// returns the key that is now a session key of the wallet.
func (s *stack) login(ctx context.Context, c customer) (*walletcrypto.PrivateKey, error) {
	pl, err := s.startLogin(ctx, c)
	if err != nil {
		return nil, err
	}
	path := "/auth/credentials/" + c.credential + "/verify"
	var ch wire.SignedRequestChallenge
	if err := s.api.expect(ctx, http.StatusAccepted, &ch, "POST", path, pl.body); err != nil {
		return nil, err
	}
	stamp, err := walletcrypto.SignStamp(pl.key, []byte(ch.PayloadToSign))
	if err != nil {
		return nil, err
	}
	var sess wire.Session
	if err := s.api.expect(ctx, http.StatusOK, &sess, "POST", path, pl.body,
		wire.HeaderWalletSignature, stamp, wire.HeaderRequestID, ch.RequestID); err != nil {
		return nil, err
	}
	if sess.AccountID != c.account {
		return nil, fmt.Errorf("login of %s issued a session of %s", c.account, sess.AccountID)
	}
	return pl.key, nil
}

// fund credits amount to the wallet and records the INCOMING transaction,
// in one store transaction, as the sandbox funding endpoint does (that
// endpoint is refused in production mode).
func (s *stack) fund(ctx context.Context, c customer, amount int64) error {
	return s.store.Tx(ctx, func(tx store.Tx) error {
		cust, err := tx.GetCustomer(ctx, c.id)
		if err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		id := ids.New("Transaction")
		ok, err := tx.PostLedger(ctx, ledger.New(ids.New("LedgerTransaction"), ledger.KindFunding, now, "Load benchmark funding").
			For(id, "").Move(ledger.Sandbox("USD"), "USD", amount, ledger.WalletAccount(c.account, ledger.Available), "USD", amount))
		if err != nil || !ok {
			return fmt.Errorf("fund %s: %v (posted %v)", c.account, err, ok)
		}
		return tx.CreateTransaction(ctx, &store.Transaction{
			ID: id, Type: "INCOMING", Status: "COMPLETED", CustomerID: cust.ID, PlatformCustomerID: cust.PlatformCustomerID,
			DestinationAccountID: c.account, SendingCurrency: "USD", ReceivingCurrency: "USD",
			SentAmount: amount, ReceivedAmount: amount, ExchangeRate: 1,
			Description: "Load benchmark funding", Reference: "PWLOADBENCH" + strings.ToUpper(id[len(id)-5:]),
			SettledAt: now, CreatedAt: now, UpdatedAt: now,
		})
	})
}

// available reads the wallet's available balance from the store.
func (s *stack) available(ctx context.Context, account string) (int64, error) {
	var n int64
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		a, err := tx.GetInternalAccount(ctx, account)
		if err == nil {
			n = a.Available
		}
		return err
	})
	return n, err
}

// accountNumber returns a number no other account of the stack has: a USD
// account's (even) when usd is set, otherwise USD and EUR in turn.
func (s *stack) accountNumber(usd bool) int64 {
	n := s.accounts.Add(1)
	if usd || n%2 == 0 {
		return 2 * n
	}
	return 2*n + 1
}

// createAccount creates a USD external account of the customer through the
// API and returns its id.
func (s *stack) createAccount(ctx context.Context, customerID string) (string, error) {
	var a wire.ExternalAccount
	if err := s.api.expect(ctx, http.StatusCreated, &a, "POST", "/customers/external-accounts", accountBody(customerID, s.accountNumber(true))); err != nil {
		return "", err
	}
	return a.ID, nil
}

// waitActive runs the verifier (as the worker would within a second) until
// every account is ACTIVE.
func (s *stack) waitActive(ctx context.Context, accounts []string) error {
	deadline := time.Now().Add(time.Minute)
	for _, id := range accounts {
		for {
			var a wire.ExternalAccount
			if err := s.api.expect(ctx, http.StatusOK, &a, "GET", "/customers/external-accounts/"+id, nil); err != nil {
				return err
			}
			if a.Status == "ACTIVE" {
				break
			}
			if a.Status != "PENDING" || time.Now().After(deadline) {
				return fmt.Errorf("external account %s is %s", id, a.Status)
			}
			if _, err := s.svc.VerifyPending(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// parallel runs fn(0) … fn(n-1) on up to workers goroutines and returns the
// first error. Preparation uses it; it is never timed.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range min(max(workers, 1), max(n, 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return first
}

// logHandler passes the service's and BFF's log records at or above min to
// the progress log, so that an internal error shows up next to the figures
// it spoils. A message is passed on the first three times; later repeats
// (a hot wallet on PostgreSQL logs every failed execute) are only counted,
// and flush reports the counts.
type logHandler struct {
	*logShared
	prefix string
	min    slog.Level
	attrs  []slog.Attr
}

type logShared struct {
	log func(format string, args ...any)
	mu  sync.Mutex
	n   map[string]int
}

func newLogHandler(log func(format string, args ...any), prefix string, min slog.Level) *logHandler {
	return &logHandler{logShared: &logShared{log: log, n: map[string]int{}}, prefix: prefix, min: min}
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.n[r.Message]++
	n := h.n[r.Message]
	h.mu.Unlock()
	if n > 3 {
		return nil
	}
	var b strings.Builder
	b.WriteString(h.prefix + r.Level.String() + " " + r.Message)
	for _, a := range h.attrs {
		b.WriteString(" " + a.String())
	}
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	h.log("%s", b.String())
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

// flush logs how many records of each message were not passed on.
func (h *logHandler) flush() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for msg, n := range h.n {
		if n > 3 {
			h.log("%s%d more %q records not shown", h.prefix, n-3, msg)
		}
		delete(h.n, msg)
	}
}

// errorsJoin keeps the first few problems of a check, for the log.
func errorsJoin(problems []error, limit int) error {
	if len(problems) > limit {
		problems = append(problems[:limit:limit], fmt.Errorf("and %d more", len(problems)-limit))
	}
	return errors.Join(problems...)
}

// sessions is pgSessions, or 0 on SQLite.
func (s *stack) sessions(ctx context.Context) int64 {
	if s.pgSessions == nil {
		return 0
	}
	return s.pgSessions(ctx)
}
