// Package e2e drives the whole wallet in headless Chromium: the web pages and
// the wasm module in the browser, the BFF and the payments service started
// in-process on loopback ports, with a real SQLite database.
//
// The wasm module must be built first (`make wasm`; `make test` does it).
// Chromium must be installed (`make test` installs it with apt when missing).
package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"

	"paywallet/bff"
	"paywallet/internal/devoidc"
	"paywallet/service"
	"paywallet/service/mail"
	"paywallet/service/oidc"
	"paywallet/service/store"
	"paywallet/service/store/sqlstore"
	"paywallet/shared/wire"
)

const (
	platformID     = "tok_e2e"
	platformSecret = "e2e-platform-secret-6f1d0c2a9b"
)

// stack is one running wallet: service + BFF.
type stack struct {
	t       *testing.T
	svc     *service.Service
	store   store.Store
	mailbox *mail.Mailbox
	url     string // the BFF, as a browser reaches it: http://localhost:<port>
	service string // the service base URL
	issuer  *devoidc.Issuer
}

func startStack(t *testing.T, mode service.Mode, options ...func(*service.Config)) *stack {
	t.Helper()
	ctx := context.Background()
	if _, err := os.Stat("../web/static/wasm/wallet.wasm"); err != nil {
		t.Fatal("the wasm module is not built: run `make wasm` (make test does it)")
	}
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "wallet.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box := &mail.Mailbox{}
	// The BFF's port is the WebAuthn origin, so listen first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	origin := "http://localhost:" + strconv.Itoa(port)
	iss, err := devoidc.Start(devoidc.Config{RedirectURIs: []string{origin + "/oauth-callback.html"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	cfg := service.Config{
		Store:              st,
		Mailer:             box,
		Mode:               mode,
		PlatformCredential: platformID + ":" + platformSecret,
		AtRestKey:          []byte("e2e-at-rest-key-0123456789abcdef"),
		WebAuthnRPID:       "localhost",
		WebAuthnOrigins:    []string{origin},
		OIDCProviders:      []oidc.Provider{{Issuer: iss.URL(), ClientID: iss.ClientID()}},
	}
	for _, o := range options {
		o(&cfg)
	}
	svc, err := service.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The background work (account verification, settlement), as the
	// binaries run it. Registered after the store, so it stops first.
	workers, stopWorkers := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		svc.RunWorkers(workers)
	}()
	t.Cleanup(func() {
		stopWorkers()
		<-stopped
	})
	upstream := httptest.NewServer(svc.Handler())
	t.Cleanup(upstream.Close)

	srv, err := bff.New(bff.Config{
		WebAuthnRPID:       "localhost",
		OAuth:              &bff.OAuthProvider{Name: "Dev sign-in", Issuer: iss.URL(), ClientID: iss.ClientID(), AuthorizationEndpoint: iss.URL() + "/authorize"},
		ServiceURL:         upstream.URL + wire.BasePath,
		PlatformCredential: platformID + ":" + platformSecret,
		Mode:               string(mode),
		OTPSignerPublicKey: svc.SignerPublicKey().UncompressedHex(),
		DevMailbox:         box.Handler(),
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Listener(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return &stack{t: t, svc: svc, store: st, mailbox: box, url: "http://localhost:" + strconv.Itoa(port), service: upstream.URL, issuer: iss}
}

// newBrowser starts a headless Chromium for one test. Register it after the
// stack so that it closes first: a server waiting on the browser's
// keep-alive connections would otherwise hold up shutdown.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.New(t, 90*time.Second)
}

// startLogin opens the wallet in the browser and asks for a code for email;
// it returns when the code step is shown.
func (s *stack) startLogin(ctx context.Context, email string) {
	s.t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	); err != nil {
		s.t.Fatal(err)
	}
}

// signIn runs the whole e-mail OTP login in the browser with the code from
// the dev mailbox and returns when the signed-in view is shown.
func (s *stack) signIn(ctx context.Context, email string) {
	s.t.Helper()
	s.startLogin(ctx, email)
	code := s.latestCode(email)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), code),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	); err != nil {
		s.t.Fatal(err)
	}
}

// latestCode reads the newest code e-mailed to address through the dev
// mailbox's JSON endpoint, as a script would.
func (s *stack) latestCode(address string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(s.url + "/dev/mailbox/latest?address=" + address)
		if err != nil {
			s.t.Fatal(err)
		}
		var m struct {
			Code string `json:"code"`
		}
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode == 200 && err == nil && len(m.Code) == 6 {
			return m.Code
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no code for %s in the dev mailbox (status %d)", address, resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// activeSessions returns the account's active sessions as the store holds
// them (with their public keys, which the API never shows).
func (s *stack) activeSessions(accountID string) []store.Session {
	s.t.Helper()
	var out []store.Session
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.ListActiveSessions(context.Background(), accountID, time.Now())
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// customerOf finds the id of the customer with this e-mail.
func (s *stack) customerOf(email string) string {
	s.t.Helper()
	ctx := context.Background()
	var id string
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		page, err := tx.ListCustomers(ctx, store.CustomerFilter{PlatformCustomerID: strings.ToLower(email)})
		if err != nil {
			return err
		}
		if len(page.Items) != 1 {
			s.t.Fatalf("%d customers for %s", len(page.Items), email)
		}
		id = page.Items[0].ID
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

// externalAccounts returns the customer's external accounts as the store
// holds them.
func (s *stack) externalAccounts(customerID string) []store.ExternalAccount {
	s.t.Helper()
	ctx := context.Background()
	var out []store.ExternalAccount
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		page, err := tx.ListExternalAccounts(ctx, store.ExternalAccountFilter{CustomerID: customerID, Limit: 100})
		out = page.Items
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// accountOf finds the embedded wallet of the customer with this e-mail.
func (s *stack) accountOf(email string) string {
	s.t.Helper()
	ctx := context.Background()
	var account string
	err := s.store.Tx(ctx, func(tx store.Tx) error {
		page, err := tx.ListCustomers(ctx, store.CustomerFilter{PlatformCustomerID: strings.ToLower(email)})
		if err != nil {
			return err
		}
		if len(page.Items) != 1 {
			s.t.Fatalf("%d customers for %s", len(page.Items), email)
		}
		accts, err := tx.ListInternalAccounts(ctx, store.InternalAccountFilter{CustomerID: page.Items[0].ID, Type: "EMBEDDED_WALLET"})
		if err != nil {
			return err
		}
		if len(accts.Items) != 1 {
			s.t.Fatalf("%d wallets for %s", len(accts.Items), email)
		}
		account = accts.Items[0].ID
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return account
}

// artifactsDir is where screenshots go; the README names it.
func artifactsDir(t *testing.T) string {
	dir := filepath.Join("..", "artifacts", "e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// otherCustomersAccount creates, through the service's platform API, a
// customer nobody in the browser is signed in as, with a Spark wallet, and
// returns the wallet's external-account id.
func (s *stack) otherCustomersAccount() string {
	s.t.Helper()
	customer := s.platformCall("POST", "/customers", `{"platformCustomerId":"e2e-other","customerType":"INDIVIDUAL","email":"other@example.com"}`)
	account := s.platformCall("POST", "/customers/external-accounts", `{"customerId":`+strconv.Quote(customer)+
		`,"currency":"BTC","accountInfo":{"accountType":"SPARK_WALLET","address":"`+otherSparkAddress+`"}}`)
	return account
}

// otherSparkAddress is a valid Spark address (bech32m, 87 characters) that
// no test adds through the browser.
const otherSparkAddress = "spark1tjeq8w4ur23clxd5mzfsh79vn6pg0kaytjeq8w4ur23clxd5mzfsh79vn6pg0kaytjeq8w4ur23j07f4a"

// platformCall sends body to the service with the platform credential and
// returns the id of the object created (status 201).
func (s *stack) platformCall(method, path, body string) string {
	s.t.Helper()
	req, err := http.NewRequest(method, s.service+wire.BasePath+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.SetBasicAuth(platformID, platformSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated || out.ID == "" {
		s.t.Fatalf("%s %s: status %d, id %q (%v)", method, path, resp.StatusCode, out.ID, err)
	}
	return out.ID
}

// goTo moves the signed-in page to the view at path the way a click on a
// link does (History API, no page load), and waits until the view named
// view is shown.
func goTo(t *testing.T, ctx context.Context, path, view string) {
	t.Helper()
	js := `(() => { const a = document.createElement("a"); a.href = ` + jsString(path) + `;
  document.body.append(a); a.click(); a.remove(); })()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](js)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the "+view+" view", `document.body.dataset.view === `+jsString(view))
}
