package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/internal/bffclient"
	"paywallet/service/store/pgtest"
)

func TestMain(m *testing.M) {
	// The at-rest keys the command makes go to a temporary per-user
	// configuration directory, not the real one.
	dir, err := os.MkdirTemp("", "wallet-test-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// startWallet runs the wallet command with args until the test ends and
// returns its URL.
func startWallet(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "warn", "--drain-delay", "0"}, args...), hooks{ready: func(u string) { urls <- u }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("wallet stopped with %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("wallet did not stop")
		}
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("wallet exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("wallet did not start")
	}
	return ""
}

// TestSessionsDatabase runs two wallet commands on one PostgreSQL database
// for the service and for the BFF's sessions (--database and
// --sessions-database, one --data-key): a browser signed in through one is
// signed in through the other, and signing out through the second ends it
// for the first.
func TestSessionsDatabase(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	args := []string{"--mode", "sandbox", "--dev-mailbox", "--database", url, "--sessions-database", url,
		"--data-key", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}
	a, b := startWallet(t, args...), startWallet(t, args...)
	ctx := t.Context()
	c := &bffclient.Client{Base: a}
	if _, _, err := c.LoginEmailOTP(ctx, "two@example.com", func(email string) (string, error) {
		return c.MailboxCode(ctx, email)
	}); err != nil {
		t.Fatal(err)
	}
	other := &bffclient.Client{Base: b}
	other.SetCookie(c.Cookie())
	if r, err := other.Do(ctx, "GET", "/api/me", nil, nil); err != nil || r.Status != 200 {
		t.Fatalf("me through the second wallet: %v %d %s", err, r.Status, r.Body)
	}
	if r, err := other.Do(ctx, "POST", "/api/logout", nil, nil); err != nil || r.Status/100 != 2 {
		t.Fatalf("logout through the second wallet: %v %d %s", err, r.Status, r.Body)
	}
	if r, err := c.Do(ctx, "GET", "/api/me", nil, nil); err != nil || string(r.Body) != `{"signedIn":false}` {
		t.Fatalf("me through the first wallet after logout: %v %d %s, want nobody signed in", err, r.Status, r.Body)
	}
}

// TestEmbeddedWallet runs the wallet command as `make run` does (embedded
// service on SQLite, dev mailbox) and signs in over HTTP through it: the
// in-process transport, the generated platform credential, the pinned signer
// key and the mailbox mount must all fit together.
func TestEmbeddedWallet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "data", "wallet.db")
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database", db, "--log-level", "warn", "--drain-delay", "0"},
			hooks{ready: func(u string) { urls <- u }})
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("wallet exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("wallet did not start")
	}
	if !strings.HasPrefix(base, "http://localhost:") {
		t.Fatalf("wallet URL %q is not a localhost URL", base)
	}
	c := &bffclient.Client{Base: base}
	sess, _, err := c.LoginEmailOTP(ctx, "embedded@example.com", func(email string) (string, error) {
		return c.MailboxCode(ctx, email)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.ID, "Session:") {
		t.Fatalf("session %+v", sess)
	}
	r, err := c.Do(ctx, "GET", "/api/me", nil, nil)
	if err != nil || r.Status != 200 {
		t.Fatalf("me: %v %d %s", err, r.Status, r.Body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wallet stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("wallet did not stop")
	}
	// The data directory is private and holds no key.
	for path, want := range map[string]os.FileMode{filepath.Dir(db): 0o700, db: 0o600} {
		if info, err := os.Stat(path); err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", path, info.Mode().Perm(), want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "wallet.key")); err == nil {
		t.Error("the at-rest key was made beside the database")
	}
}

func TestConfigErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no mailer", []string{"--database", db}, "no way to send e-mail"},
		{"both mailers", []string{"--database", db, "--mode", "sandbox", "--dev-mailbox", "--smtp-addr", "127.0.0.1:25"}, "not both"},
		{"bad mode", []string{"--database", db, "--dev-mailbox", "--mode", "staging"}, "unknown mode"},
		{"bad smtp tls", []string{"--database", db, "--smtp-addr", "127.0.0.1:25", "--smtp-tls", "maybe"}, "--smtp-tls"},
		{"bad log level", []string{"--log-level", "loud"}, "--log-level"},
		{"negative drain delay", []string{"--drain-delay", "-1s"}, "--drain-delay"},
		{"bad metrics address", []string{"--database", db, "--mode", "sandbox", "--dev-mailbox", "--metrics-listen", "256.0.0.1:bad"}, "--metrics-listen"},
		{"bad trusted proxy", []string{"--database", db, "--mode", "sandbox", "--dev-mailbox", "--trusted-proxies", "10.0.0.0/8, lb.example"}, "lb.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"--listen", "127.0.0.1:0"}, tt.args...), hooks{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestDevSwitchesRefusedInProduction: the dev mailbox and the dev OpenID
// issuer let anyone read every code or sign in as anyone, so production
// mode (the default) refuses them however they were turned on, with an
// error naming the flag, and the environment variable when that is what
// turned it on. The wallet must not start at all.
func TestDevSwitchesRefusedInProduction(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"mailbox flag", nil, []string{"--mode", "production", "--dev-mailbox"}, []string{"--dev-mailbox", "production"}},
		{"mailbox flag, default mode", nil, []string{"--dev-mailbox"}, []string{"--dev-mailbox", "production"}},
		{"oidc flag", nil, []string{"--mode", "production", "--smtp-addr", "127.0.0.1:25", "--dev-oidc"}, []string{"--dev-oidc", "production"}},
		{"both flags", nil, []string{"--mode", "production", "--dev-mailbox", "--dev-oidc"}, []string{"--dev-", "production"}},
		{"mailbox env", map[string]string{"WALLET_MODE": "production", "WALLET_DEV_MAILBOX": "yes"}, nil,
			[]string{"--dev-mailbox", "WALLET_DEV_MAILBOX", "production"}},
		{"oidc env", map[string]string{"WALLET_MODE": "production", "WALLET_DEV_OIDC": "1", "WALLET_SMTP_ADDR": "127.0.0.1:25"}, nil,
			[]string{"--dev-oidc", "WALLET_DEV_OIDC", "production"}},
		{"mode from env, flag on the command line", map[string]string{"WALLET_MODE": "production"}, []string{"--dev-mailbox"},
			[]string{"--dev-mailbox", "production"}},
		{"with a remote service", nil, []string{"--mode", "production", "--dev-oidc", "--service-url", "http://127.0.0.1:1/2025-10-13"},
			[]string{"--dev-oidc", "production"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			started := false
			args := append([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--dev-oidc-addr", "127.0.0.1:0",
				"--database", filepath.Join(t.TempDir(), "w.db")}, tt.args...)
			err := run(ctx, args, hooks{ready: func(string) { started = true; cancel() }})
			if started {
				t.Fatalf("the wallet started in production mode with %v %v", tt.env, tt.args)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestDevMailboxLoopbackHostOnly: the wallet's /dev/mailbox answers a
// loopback Host and refuses any other with 421, so that a web page whose
// domain resolves to 127.0.0.1 (DNS rebinding) cannot read the codes.
func TestDevMailboxLoopbackHostOnly(t *testing.T) {
	base := startWallet(t, "--mode", "sandbox", "--dev-mailbox", "--database", filepath.Join(t.TempDir(), "w.db"))
	port := base[strings.LastIndexByte(base, ':')+1:]
	for _, path := range []string{"/dev/mailbox", "/dev/mailbox/", "/dev/mailbox/latest?address=a@example.com"} {
		for host, want := range map[string]int{
			"evil.example":         http.StatusMisdirectedRequest,
			"evil.example:" + port: http.StatusMisdirectedRequest,
			"localhost:" + port:    http.StatusOK,
			"127.0.0.1:" + port:    http.StatusOK,
		} {
			req, _ := http.NewRequest("GET", base+path, nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				RequestID string `json:"requestId"`
			}
			jsonErr := json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			for _, h := range []string{"X-Content-Type-Options", "Referrer-Policy", "Request-Id"} {
				if v := resp.Header.Values(h); len(v) != 1 {
					t.Errorf("GET %s with Host %s: %s %q, want one value", path, host, h, v)
				}
			}
			if path == "/dev/mailbox/latest?address=a@example.com" && want == http.StatusOK {
				want = http.StatusNotFound // no message yet, but served
			}
			if resp.StatusCode != want {
				t.Errorf("GET %s with Host %s: %d, want %d", path, host, resp.StatusCode, want)
			}
			// An error body names the answer's Request-Id, as the API's do.
			if resp.StatusCode >= 400 && (jsonErr != nil || body.RequestID != resp.Header.Get("Request-Id")) {
				t.Errorf("GET %s with Host %s: requestId %q (%v), Request-Id %q", path, host, body.RequestID, jsonErr, resp.Header.Get("Request-Id"))
			}
		}
	}
}
