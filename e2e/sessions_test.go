package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/service"
	"paywallet/service/store"
)

// session returns the session as the store holds it (revoked ones too).
func (s *stack) session(id string) store.Session {
	s.t.Helper()
	var out *store.Session
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.GetSession(context.Background(), id)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return *out
}

// waitUntil polls cond every 100 ms for up to d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSessionRefresh: a session close to its end is refreshed by the page
// with a new key made in the wasm module and a retry signed by the old one;
// the service holds one active session, a new one, the old one revoked, and
// the person keeps working with it.
func TestSessionRefresh(t *testing.T) {
	// 95 s sessions: the page refreshes 90 s before the end, so at once.
	s := startStack(t, service.ModeProduction, func(c *service.Config) { c.SessionTTL = 95 * time.Second })
	ctx := newBrowser(t)
	const email = "refresh@example.com"
	s.signIn(ctx, email)
	account := s.accountOf(email)
	first := s.activeSessions(account)
	if len(first) != 1 {
		t.Fatalf("%d sessions after sign-in", len(first))
	}
	var fresh store.Session
	waitUntil(t, 45*time.Second, "the page to refresh its session", func() bool {
		active := s.activeSessions(account)
		if len(active) == 1 && active[0].ID != first[0].ID {
			fresh = active[0]
			return true
		}
		return false
	})
	if old := s.session(first[0].ID); old.RevokedAt.IsZero() {
		t.Error("the refreshed session is still usable")
	}
	if string(fresh.PublicKey) == string(first[0].PublicKey) {
		t.Error("the refreshed session kept the old key")
	}

	// Keep working: a signed-in action after the refresh succeeds.
	goTo(t, ctx, "/recipients/new", "recipient-new")
	chooseType(t, ctx, "SPARK_WALLET")
	fill(t, ctx, map[string]string{"accountInfo.address": sparkAddress})
	click(t, ctx, "account-submit")
	if got := waitListed(t, ctx, 1); got.status != "Active" {
		t.Errorf("Spark wallet listed as %q after the refresh", got.status)
	}
}

// TestRevokeAnotherSessionAndLogout: the same person signed in on two
// browsers; the first signs the second out from its Sessions panel (the
// second is signed out at once), then signs out itself, which revokes its
// wallet session instead of leaving it to expire.
func TestRevokeAnotherSessionAndLogout(t *testing.T) {
	s := startStack(t, service.ModeProduction, func(c *service.Config) { c.OTPResendInterval = -1 })
	const email = "two-devices@example.com"
	laptop := newBrowser(t)
	s.signIn(laptop, email)
	phone := newBrowser(t)
	s.signIn(phone, email)
	account := s.accountOf(email)
	if n := len(s.activeSessions(account)); n != 2 {
		t.Fatalf("%d active sessions, want 2", n)
	}

	// The laptop's panel shows both; it signs the phone out.
	goTo(t, laptop, "/security", "security")
	click(t, laptop, "sessions-refresh")
	var ids struct{ Own, Other string }
	ids, err := chromedp.Run(laptop, chromedp.Poll[struct{ Own, Other string }](`(() => {
  const items = [...document.querySelectorAll("#sessions-list > li")];
  if (items.length !== 2) return null;
  const own = items.find((li) => li.querySelector(".badge"));
  const other = items.find((li) => li.querySelector("button[data-revoke]"));
  return own && other ? {Own: own.dataset.id, Other: other.dataset.id} : null;
})()`, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("the laptop's sessions panel: %v", err)
	}
	if err := chromedp.Do(laptop, chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-revoke=%q]`, ids.Other)))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the phone's session to be revoked", func() bool {
		active := s.activeSessions(account)
		return len(active) == 1 && active[0].ID == ids.Own
	})
	me, err := chromedp.Run(phone, chromedp.Evaluate[string](`fetch("/api/me", {headers: {"X-CSRF": "1"}}).then(async (r) => r.status + " " + (await r.text()))`, chromedp.EvalAwaitPromise))
	if err != nil || me != `200 {"signedIn":false}` {
		t.Errorf("the phone after being signed out: GET /api/me = %q %v, want nobody signed in", me, err)
	}
	if err := chromedp.Do(laptop, chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		t.Fatal(err)
	}

	// Signing out on the laptop revokes its own session.
	click(t, laptop, "logout")
	if err := chromedp.Do(laptop, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the laptop's session to be revoked", func() bool {
		return !s.session(ids.Own).RevokedAt.IsZero()
	})
	if n := len(s.activeSessions(account)); n != 0 {
		t.Errorf("%d active sessions after signing out everywhere", n)
	}
}
