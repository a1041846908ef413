package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestWebhookURLFlag: --webhook-url (and WALLET_WEBHOOK_URL) set the
// platform's webhookEndpoint at start, and the JWKS answers without
// credentials.
func TestWebhookURLFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  string
	}{
		{"flag", []string{"--webhook-url", "http://127.0.0.1:9/hooks"}, ""},
		{"environment", nil, "http://127.0.0.1:9/hooks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("WALLET_PLATFORM_CREDENTIAL", "tok_cmd:cmd-secret")
			t.Setenv("WALLET_WEBHOOK_URL", c.env)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			urls := make(chan string, 1)
			done := make(chan error, 1)
			args := append([]string{"--listen", "127.0.0.1:0", "--mode", "sandbox", "--dev-mailbox", "--database",
				filepath.Join(t.TempDir(), "svc.db"), "--log-level", "warn"}, c.args...)
			go func() { done <- run(ctx, args, func(u string) { urls <- u }) }()
			var base string
			select {
			case base = <-urls:
			case err := <-done:
				t.Fatalf("paymentsd exited: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("paymentsd did not start")
			}
			req, _ := http.NewRequest("GET", base+"/2025-10-13/config", nil)
			req.SetBasicAuth("tok_cmd", "cmd-secret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct{ WebhookEndpoint string }
			err = json.NewDecoder(resp.Body).Decode(&cfg)
			resp.Body.Close()
			if err != nil || cfg.WebhookEndpoint != "http://127.0.0.1:9/hooks" {
				t.Fatalf("config %+v, %v", cfg, err)
			}
			resp, err = http.Get(base + "/2025-10-13/webhooks/jwks.json")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("jwks: %d", resp.StatusCode)
			}
			cancel()
			<-done
		})
	}
}
