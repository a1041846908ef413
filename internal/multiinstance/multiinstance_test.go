package multiinstance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/bff/bffpg"
	"paywallet/internal/bffclient"
	"paywallet/service"
	"paywallet/service/mail"
	"paywallet/service/store"
	"paywallet/service/store/pgtest"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/walletcrypto"
	"paywallet/shared/webhooksig"
	"paywallet/shared/wire"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const credential = "platform:multi-instance-secret"

// deployment is two services and two BFFs on one database. The services
// share only the database (and, as any SMTP set-up would, where the mail
// goes); each BFF talks to its own service, and shares the database for
// cookie sessions and login limits.
type deployment struct {
	box      *mail.Mailbox
	store    *sqlstore.DB       // a third connection pool, for the test's own checks
	services [2]string          // base URLs (…/2025-10-13)
	bffs     [2]string          // origins
	hooks    *webhooksig.Signer // signs webhooks the BFFs trust (events_test.go)
}

func start(t *testing.T) *deployment {
	t.Helper()
	ctx := t.Context()
	url := pgtest.Start(t).NewDatabase(t)
	d := &deployment{box: &mail.Mailbox{}}
	jwks := webhookKeys(t, d)
	workers, stopWorkers := context.WithCancel(context.Background())
	var running sync.WaitGroup
	t.Cleanup(func() { stopWorkers(); running.Wait() })

	signer := ""
	for i := range 2 {
		st, err := sqlstore.OpenPostgres(ctx, url) // both migrate at once: one waits for the other
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc, err := service.New(ctx, service.Config{
			Store: st, Mailer: d.box, Mode: service.ModeSandbox, PlatformCredential: credential,
			AtRestKey:    []byte("0123456789abcdef0123456789abcdef"),
			WebAuthnRPID: "localhost", WebAuthnOrigins: []string{"http://localhost"},
			SettlementDelay: 300 * time.Millisecond,
			// Two devices of one person sign in moments apart.
			OTPResendInterval: time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The OTP target-bundle signer lives in the database: every
		// instance signs with the same key, so a browser pins one.
		if k := svc.SignerPublicKey().UncompressedHex(); signer == "" {
			signer = k
		} else if k != signer {
			t.Fatalf("instance %d has another signer key", i)
		}
		d.services[i] = serve(t, svc.Handler()) + wire.BasePath
		running.Go(func() { svc.RunWorkers(workers) })
	}
	for i := range 2 {
		shared, err := bffpg.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(shared.Close)
		srv, err := bff.New(bff.Config{
			ServiceURL: d.services[i], PlatformCredential: credential, OTPSignerPublicKey: signer, Mode: "sandbox",
			Sessions: shared.Sessions(), Limiter: shared.Limiter(), Events: shared.Events(),
			LoginPerIP: bff.Limit{Max: 1000, Window: time.Minute}, WebhookJWKSURL: jwks,
		})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Listener(ln) //nolint:errcheck // ends with Shutdown
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
		d.bffs[i] = "http://localhost:" + portOf(ln)
	}
	st, err := sqlstore.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d.store = st
	return d
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func portOf(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// code waits for the OTP e-mailed to address.
func (d *deployment) code(address string) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m, ok := d.box.Latest(address); ok && m.Code != "" {
			return m.Code, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("no code e-mailed to %s", address)
}

// user is one browser: a cookie that any BFF instance accepts.
type user struct {
	d      *deployment
	c      *bffclient.Client
	key    *walletcrypto.PrivateKey
	turn   int // which instance the next request goes to
	wallet string
}

// alternate sends the browser's requests to the instances in turn,
// starting with first, keeping its cookie: what a load balancer without
// sticky sessions does. Even the two legs of the login go to different
// instances.
func (u *user) alternate(first int) {
	u.turn = first
	u.c.Base = u.d.bffs[first%2]
	u.c.OnResponse = func(bffclient.Response) {
		u.turn++
		u.c.Base = u.d.bffs[u.turn%2]
	}
}

func (u *user) call(ctx context.Context, method, path string, body any, headers map[string]string, want int, out any) error {
	base := u.c.Base
	r, err := u.c.Do(ctx, method, path, body, headers)
	if err != nil {
		return err
	}
	if r.Status != want {
		return fmt.Errorf("%s %s via %s: %d %s, want %d", method, path, base, r.Status, r.Body, want)
	}
	if out != nil {
		return r.Decode(out)
	}
	return nil
}

func usdAccount(number string) map[string]any {
	return map[string]any{
		"currency": "USD",
		"accountInfo": map[string]any{
			"accountType": "USD_ACCOUNT", "accountNumber": number, "routingNumber": "021000021",
			"bankAccountType": "CHECKING", "bankName": "Chase Bank",
			"beneficiary": map[string]any{
				"beneficiaryType": "INDIVIDUAL", "fullName": "Ana Maria Diaz",
				"address": map[string]any{"line1": "1 Main Street", "city": "Springfield", "postalCode": "62701", "country": "US"},
			},
		},
	}
}

// outcome is what one user's run did, for the checks at the end.
type outcome struct {
	wallet   string
	funded   int64
	executed map[string]int64 // transaction id -> totalSendingAmount
}

const (
	funding        = 1_000_00 // $1,000.00
	quotesPerUser  = 4
	amountPerQuote = 12_34
)

// run is one person's session spread over both instances: log in through
// one, use the cookie through the other, add an account, fund, quote, and
// execute every quote through BOTH instances at once (two clicks landing
// on two instances): exactly one may win.
func (u *user) run(ctx context.Context, email string, first int) (outcome, error) {
	out := outcome{executed: map[string]int64{}}
	u.alternate(first)
	sess, key, err := u.c.LoginEmailOTP(ctx, email, u.d.code)
	if err != nil {
		return out, fmt.Errorf("login starting at instance %d: %w", first, err)
	}
	u.key = key
	var me struct {
		InternalAccount wire.InternalAccount `json:"internalAccount"`
		Session         struct{ ID string }  `json:"session"`
	}
	if err := u.call(ctx, "GET", "/api/me", nil, nil, 200, &me); err != nil {
		return out, fmt.Errorf("the session made through one instance: %w", err)
	}
	if me.Session.ID != sess.ID {
		return out, fmt.Errorf("/api/me through the other instance shows session %s, want %s", me.Session.ID, sess.ID)
	}
	u.wallet = me.InternalAccount.ID
	out.wallet = u.wallet

	var acct wire.ExternalAccount
	if err := u.call(ctx, "POST", "/api/customers/external-accounts", usdAccount(fmt.Sprintf("7%08d000", first*1000+len(email))), nil, 201, &acct); err != nil {
		return out, err
	}
	if err := u.call(ctx, "POST", "/api/sandbox/fund", map[string]any{"amount": funding}, nil, 200, nil); err != nil {
		return out, err
	}
	out.funded = funding
	for deadline := time.Now().Add(15 * time.Second); acct.Status != "ACTIVE"; {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("account %s still %s", acct.ID, acct.Status)
		}
		time.Sleep(100 * time.Millisecond)
		if err := u.call(ctx, "GET", "/api/customers/external-accounts/"+acct.ID, nil, nil, 200, &acct); err != nil {
			return out, err
		}
	}
	for q := range quotesPerUser {
		var quote wire.Quote
		body := map[string]any{
			"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": u.wallet},
			"destination":        map[string]any{"destinationType": "ACCOUNT", "accountId": acct.ID},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amountPerQuote,
		}
		if err := u.call(ctx, "POST", "/api/quotes", body, nil, 201, &quote); err != nil {
			return out, err
		}
		payload, _ := quote.PaymentInstructions[0].AccountOrWalletInfo["payloadToSign"].(string)
		stamp, err := walletcrypto.SignStamp(u.key, []byte(payload))
		if err != nil {
			return out, err
		}
		// Two clicks, one per instance, each with its own Idempotency-Key.
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		var callErr error
		var mu sync.Mutex
		for i := range 2 {
			c := &bffclient.Client{Base: u.d.bffs[i]}
			c.SetCookie(u.c.Cookie())
			wg.Go(func() {
				r, err := c.Do(ctx, "POST", "/api/quotes/"+quote.ID+"/execute", nil, map[string]string{
					wire.HeaderWalletSignature: stamp, "Idempotency-Key": fmt.Sprintf("%s-%d-%d", email, q, i)})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					callErr = err
					return
				}
				statuses[i] = r.Status
			})
		}
		wg.Wait()
		if callErr != nil {
			return out, callErr
		}
		ok, conflict := 0, 0
		for _, s := range statuses {
			switch s {
			case 200:
				ok++
			case 409:
				conflict++
			}
		}
		if ok != 1 || conflict != 1 {
			return out, fmt.Errorf("quote %s executed through both instances: statuses %v, want one 200 and one 409", quote.ID, statuses)
		}
		out.executed[quote.TransactionID] = quote.TotalSendingAmount
	}
	return out, nil
}

// TestTwoServicesTwoBFFs runs people concurrently over two service and two
// BFF instances on one PostgreSQL: logins through one instance serve the
// other, every quote is executed through both at once and runs exactly
// once, both instances' settlement workers compete for the same payments
// and each settles once, and every wallet ends with exactly its funding
// minus what it sent.
func TestTwoServicesTwoBFFs(t *testing.T) {
	d := start(t)
	ctx := t.Context()
	const people = 6
	outs := make([]outcome, people)
	errs := make([]error, people)
	var wg sync.WaitGroup
	for p := range people {
		wg.Go(func() {
			u := &user{d: d, c: &bffclient.Client{}}
			outs[p], errs[p] = u.run(ctx, fmt.Sprintf("person%d@example.com", p), p%2)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	// Every payment settles once, whichever worker took it.
	var pending atomic.Int32
	deadline := time.Now().Add(20 * time.Second)
	for {
		pending.Store(0)
		for _, o := range outs {
			for id := range o.executed {
				x := d.transaction(t, id)
				if x.Status != "COMPLETED" {
					pending.Add(1)
				}
			}
		}
		if pending.Load() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d payments not COMPLETED", pending.Load())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, o := range outs {
		var sent int64
		for id, amount := range o.executed {
			sent += amount
			if x := d.transaction(t, id); x.SettledAt.IsZero() || x.SentAmount != amount {
				t.Errorf("transaction %s: settledAt %v, sent %d, want %d", id, x.SettledAt, x.SentAmount, amount)
			}
		}
		if len(o.executed) != quotesPerUser {
			t.Errorf("wallet %s: %d payments, want %d", o.wallet, len(o.executed), quotesPerUser)
		}
		a := d.account(t, o.wallet)
		if a.Available != o.funded-sent || a.Held != 0 {
			t.Errorf("wallet %s: available %d held %d, want %d and 0 (funded %d, sent %d)", o.wallet, a.Available, a.Held, o.funded-sent, o.funded, sent)
		}
	}
}

func (d *deployment) transaction(t *testing.T, id string) *store.Transaction {
	t.Helper()
	var x *store.Transaction
	if err := d.store.Tx(t.Context(), func(tx store.Tx) error {
		var err error
		x, err = tx.GetTransaction(t.Context(), id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return x
}

func (d *deployment) account(t *testing.T, id string) *store.InternalAccount {
	t.Helper()
	var a *store.InternalAccount
	if err := d.store.Tx(t.Context(), func(tx store.Tx) error {
		var err error
		a, err = tx.GetInternalAccount(t.Context(), id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRevokeReachesEveryInstance: a browser signed in through one BFF
// instance, whose session another device revokes through the other
// instance, is refused with 401 by both instances within a second, even
// by the instance that had just served it.
func TestRevokeReachesEveryInstance(t *testing.T) {
	d := start(t)
	ctx := t.Context()
	const email = "two-devices@example.com"
	a := &bffclient.Client{Base: d.bffs[0]}
	_, keyA, err := a.LoginEmailOTP(ctx, email, d.code)
	if err != nil {
		t.Fatal(err)
	}
	b := &bffclient.Client{Base: d.bffs[1]}
	sessB, _, err := b.LoginEmailOTP(ctx, email, d.code)
	if err != nil {
		t.Fatal(err)
	}
	// B is served by both instances, each of which now knows it alive.
	for i := range 2 {
		c := &bffclient.Client{Base: d.bffs[i]}
		c.SetCookie(b.Cookie())
		if r, err := c.Do(ctx, "GET", "/api/customers/external-accounts", nil, nil); err != nil || r.Status != 200 {
			t.Fatalf("instance %d before the revoke: %v %d %s", i, err, r.Status, r.Body)
		}
	}

	// Device A revokes B's session through instance 0 (a signed retry).
	leg1, err := a.Do(ctx, "DELETE", "/api/auth/sessions/"+sessB.ID, nil, nil)
	if err != nil || leg1.Status != 202 {
		t.Fatalf("revoke leg 1: %v %d %s", err, leg1.Status, leg1.Body)
	}
	var ch wire.SignedRequestChallenge
	if err := leg1.Decode(&ch); err != nil {
		t.Fatal(err)
	}
	stamp, err := walletcrypto.SignStamp(keyA, []byte(ch.PayloadToSign))
	if err != nil {
		t.Fatal(err)
	}
	leg2, err := a.Do(ctx, "DELETE", "/api/auth/sessions/"+sessB.ID, nil, map[string]string{
		wire.HeaderWalletSignature: stamp, wire.HeaderRequestID: ch.RequestID})
	if err != nil || leg2.Status != 204 {
		t.Fatalf("revoke leg 2: %v %d %s", err, leg2.Status, leg2.Body)
	}
	revoked := time.Now()

	// Instance 1 stops honouring B's cookie within a second.
	c := &bffclient.Client{Base: d.bffs[1]}
	for {
		c.SetCookie(b.Cookie())
		r, err := c.Do(ctx, "GET", "/api/customers/external-accounts", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == 401 {
			break
		}
		if r.Status != 200 || time.Since(revoked) > time.Second {
			t.Fatalf("instance 1, %v after the revoke: %d %s", time.Since(revoked), r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("instance 1 refused the revoked session %v after the revoke", time.Since(revoked).Round(time.Millisecond))
	for i := range 2 {
		for _, rt := range [][2]string{{"GET", "/api/me"}, {"GET", "/api/transactions"}, {"POST", "/api/quotes"}, {"POST", "/api/sandbox/fund"}, {"GET", "/api/auth/sessions"}} {
			c := &bffclient.Client{Base: d.bffs[i]}
			c.SetCookie(b.Cookie())
			var body any
			if rt[0] == "POST" {
				body = map[string]any{}
			}
			r, err := c.Do(ctx, rt[0], rt[1], body, map[string]string{"Idempotency-Key": "after-revoke"})
			// GET /api/me answers "nobody" (200 {"signedIn":false}); every other route 401.
			if rt[1] == "/api/me" && err == nil && r.Status == 200 && string(r.Body) == `{"signedIn":false}` {
				continue
			}
			if err != nil || r.Status != 401 {
				t.Errorf("instance %d %s %s after the revoke: %v %d %s", i, rt[0], rt[1], err, r.Status, r.Body)
			}
		}
	}
	// A is still signed in.
	if r, err := a.Do(ctx, "GET", "/api/me", nil, nil); err != nil || r.Status != 200 || !strings.Contains(string(r.Body), `"signedIn":true`) {
		t.Errorf("device A after revoking B: %v %d %s", err, r.Status, r.Body)
	}
}
