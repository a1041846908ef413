package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"paywallet/internal/bffclient"
	"paywallet/service"
)

// TestLoginLeaksNoPlatformSecret walks every BFF response of a full login
// (pages, config, wasm, both login legs, me, sessions, the dev mailbox,
// logout) and asserts the platform secret appears in none, in any form the
// BFF could leak it.
func TestLoginLeaksNoPlatformSecret(t *testing.T) {
	s := startStack(t, service.ModeProduction)
	ctx := context.Background()
	var seen []bffclient.Response
	c := &bffclient.Client{Base: s.url, OnResponse: func(r bffclient.Response) { seen = append(seen, r) }}
	must := func(method, path string, want int) {
		t.Helper()
		r, err := c.Do(ctx, method, path, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
	}

	must("GET", "/", 200)
	cfg, err := c.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	must("GET", cfg.WasmURL, 200)
	must("GET", "/wasm/wasm_exec.js", 200)
	if _, _, err := c.LoginEmailOTP(ctx, "lin@example.com", func(email string) (string, error) {
		return c.MailboxCode(ctx, email)
	}); err != nil {
		t.Fatal(err)
	}
	must("GET", "/api/me", 200)
	must("GET", "/api/auth/sessions", 200)
	must("GET", "/dev/mailbox", 200)
	must("POST", "/api/logout", 204)
	if r, err := c.Do(ctx, "GET", "/api/me", nil, nil); err != nil || string(r.Body) != `{"signedIn":false}` {
		t.Fatalf("GET /api/me after logout: %v %d %s, want nobody signed in", err, r.Status, r.Body)
	}

	basic := base64.StdEncoding.EncodeToString([]byte(platformID + ":" + platformSecret))
	forbidden := []string{platformSecret, basic, base64.RawURLEncoding.EncodeToString([]byte(platformSecret)), strings.ToUpper(platformSecret)}
	for _, r := range seen {
		var all bytes.Buffer
		r.Header.Write(&all)
		all.Write(r.Body)
		for _, f := range forbidden {
			if bytes.Contains(all.Bytes(), []byte(f)) {
				t.Errorf("%s %s (%d) contains the platform secret (form %q)", r.Method, r.Path, r.Status, f)
			}
		}
	}
	if len(seen) < 12 {
		t.Fatalf("only %d responses inspected", len(seen))
	}
}
