package main

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paywallet/internal/bffclient"
)

// TestEmbeddedWalletEvents: the embedded service delivers its webhooks to
// the wallet's own BFF, which passes them to the browser's event stream:
// sandbox funding is heard as INCOMING_PAYMENT.COMPLETED and
// INTERNAL_ACCOUNT.BALANCE_UPDATED.
func TestEmbeddedWalletEvents(t *testing.T) {
	ctx := t.Context()
	base := startWallet(t, "--mode", "sandbox", "--dev-mailbox", "--database", filepath.Join(t.TempDir(), "wallet.db"))
	c := &bffclient.Client{Base: base}
	if _, _, err := c.LoginEmailOTP(ctx, "events@example.com", func(email string) (string, error) {
		return c.MailboxCode(ctx, email)
	}); err != nil {
		t.Fatal(err)
	}

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+"/api/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Cookie", c.Cookie())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/events: %d", resp.StatusCode)
	}
	types := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if typ, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				types <- typ
			}
		}
	}()

	if r, err := c.Do(ctx, "POST", "/api/sandbox/fund", map[string]any{"amount": 5000}, nil); err != nil || r.Status != 200 {
		t.Fatalf("fund: %v %d %s", err, r.Status, r.Body)
	}
	want := map[string]bool{"INCOMING_PAYMENT.COMPLETED": false, "INTERNAL_ACCOUNT.BALANCE_UPDATED": false}
	deadline := time.After(10 * time.Second)
	for heard := 0; heard < len(want); {
		select {
		case typ := <-types:
			if seen, ok := want[typ]; ok && !seen {
				want[typ] = true
				heard++
			}
		case <-deadline:
			t.Fatalf("events heard after funding: %v", want)
		}
	}
}
