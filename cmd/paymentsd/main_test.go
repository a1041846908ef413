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
)

func TestMain(m *testing.M) {
	// The process tests run this test binary as paymentsd itself.
	if os.Getenv(asPaymentsd) == "1" {
		main()
		return
	}
	// The at-rest keys the command makes go to a temporary per-user
	// configuration directory, not the real one.
	dir, err := os.MkdirTemp("", "paymentsd-test-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestPaymentsd starts the service command and checks that the platform
// credential guards the API and that the dev mailbox is mounted.
func TestPaymentsd(t *testing.T) {
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "svc.db")
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database", db, "--log-level", "warn", "--drain-delay", "0"}, func(u string) { urls <- u })
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("paymentsd exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("paymentsd did not start")
	}
	get := func(path string, auth bool) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth {
			req.SetBasicAuth("tok_cmd", "cmd-secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/2025-10-13/customers", false); s != 401 {
		t.Fatalf("without credential: %d", s)
	}
	if s := get("/2025-10-13/customers", true); s != 200 {
		t.Fatalf("with credential: %d", s)
	}
	if s := get("/dev/mailbox", false); s != 200 {
		t.Fatalf("dev mailbox: %d", s)
	}
	// DNS rebinding: a page whose domain resolves to 127.0.0.1 must not
	// read the mailbox as "same origin". Its answers carry a Request-Id,
	// in the error body too, as the API's do.
	for _, path := range []string{"/dev/mailbox", "/dev/mailbox/latest?address=a@example.com"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			RequestID string `json:"requestId"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("GET %s with Host evil.example: %d, want 421", path, resp.StatusCode)
		}
		if id := resp.Header.Get("Request-Id"); id == "" || err != nil || body.RequestID != id {
			t.Errorf("GET %s: Request-Id %q, the body's requestId %q (%v)", path, id, body.RequestID, err)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && err != http.ErrServerClosed {
			t.Fatalf("paymentsd stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("paymentsd did not stop")
	}
}

func TestPaymentsdNeedsCredential(t *testing.T) {
	t.Setenv("WALLET_PLATFORM_CREDENTIAL", "")
	err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database", filepath.Join(t.TempDir(), "x.db")}, nil)
	if err == nil || !strings.Contains(err.Error(), "platform credential") {
		t.Fatalf("paymentsd without a platform credential: %v", err)
	}
}

// TestDevMailboxRefusedInProduction: in production mode (the default) the
// service refuses the dev mailbox, which would show every code to anyone
// without the platform credential, whether the flag or the environment
// turned it on, and says which.
func TestDevMailboxRefusedInProduction(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"flag", nil, []string{"--mode", "production", "--dev-mailbox"}, []string{"--dev-mailbox", "production"}},
		{"flag, default mode", nil, []string{"--dev-mailbox"}, []string{"--dev-mailbox", "production"}},
		{"env", map[string]string{"WALLET_MODE": "production", "WALLET_DEV_MAILBOX": "true"}, nil,
			[]string{"--dev-mailbox", "WALLET_DEV_MAILBOX", "production"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			started := false
			args := append([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--database", filepath.Join(t.TempDir(), "svc.db")}, tt.args...)
			err := run(ctx, args, func(string) { started = true; cancel() })
			if started {
				t.Fatalf("paymentsd started in production mode with %v %v", tt.env, tt.args)
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
