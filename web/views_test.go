package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The views of issue 16 against the money fake: Home on a phone, Send's
// balance check, Activity's filter, a receipt.

// someActivity puts a funding, a completed XOF payment, a failed and a
// returned MXN payment into the fake, newest last.
func someActivity(m *fakeMoney) (funding, xof, failed, returned string) {
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	fee := int64(300)
	txs := []*fakeTx{
		{status: "COMPLETED", typ: "INCOMING", dest: fakeAccount, description: "Sandbox funding", received: 10000, recvCur: "USD"},
		{status: "COMPLETED", typ: "OUTGOING", dest: xofAccount, sent: 1000, received: 5021, sentCur: "USD", recvCur: "XOF", fees: &fee, rate: 0.00165, rail: "MOBILE_MONEY"},
		{status: "FAILED", reason: "OFFRAMP_FAILED", typ: "OUTGOING", dest: mxnAccount, sent: 2550, received: 40000, sentCur: "USD", recvCur: "MXN", rate: 0.0585, rail: "SPEI"},
		{status: "REFUNDED", reason: "OFFRAMP_FAILED", typ: "OUTGOING", dest: mxnAccount, sent: 1234, received: 20000, sentCur: "USD", recvCur: "MXN", rate: 0.0585, rail: "SPEI"},
	}
	for i, x := range txs {
		x.id = fmt.Sprintf("Transaction:0199a000-0000-7000-8000-%012d", 700+i)
		x.created = base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		m.txs = append([]*fakeTx{x}, m.txs...)
	}
	return txs[0].id, txs[1].id, txs[2].id, txs[3].id
}

// signedInPhone is a tab signed in to the money site with someActivity,
// on a phone's screen of width×height.
func signedInPhone(t *testing.T, width, height int64) context.Context {
	t.Helper()
	site, _, m := startMoneySite(t)
	m.set(func(m *fakeMoney) { someActivity(m) })
	ctx := newTab(t)
	do(t, ctx, chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulateTouch))
	signIn(t, ctx, site)
	return ctx
}

// TestHomeFitsAPhone: at 390×844 Home shows the balance, both actions and
// the last payments on the first screen, above the navigation bar (the
// page's footer may follow below).
func TestHomeFitsAPhone(t *testing.T) {
	t.Parallel()
	ctx := signedInPhone(t, 390, 844)
	waitFor(t, ctx, `document.body.dataset.view === "home" && document.querySelectorAll("#recent-list > li").length === 4 && !document.getElementById("home-fund").hidden`)
	type fitting struct {
		Bottom, NavTop, Inner float64
		Overflow              []string
	}
	js := `(() => {
  const nav = document.getElementById("nav").getBoundingClientRect();
  const parts = ["account-balance", "home-send", "home-fund", "recent-list"].map((id) => [id, document.getElementById(id).getBoundingClientRect()]);
  return {Bottom: Math.max(...parts.map(([, r]) => r.bottom)), NavTop: nav.top, Inner: innerHeight, Overflow: parts.filter(([, r]) => r.bottom > nav.top).map(([id]) => id)};
})()`
	fit := eval[fitting](t, ctx, js)
	if len(fit.Overflow) > 0 || fit.NavTop > fit.Inner {
		t.Errorf("at 390×844 %v end below the navigation bar (content ends at %.0f px, the bar starts at %.0f px, screen %.0f px)",
			fit.Overflow, fit.Bottom, fit.NavTop, fit.Inner)
	}
}

// TestSendRefusesAboveBalance: an amount above what is available is refused
// at the amount, with what is available, and no quote is asked for.
func TestSendRefusesAboveBalance(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/send", "send")
	waitFor(t, ctx, `[...document.getElementById("send-account").options].some((o) => o.value === "`+mxnAccount+`" && !o.disabled)`)
	choose(t, ctx, "#send-account", mxnAccount)
	clickID(t, ctx, "send-next")
	if got := text(t, ctx, "send-available"); got != "You have $1,234.56 available." {
		t.Errorf("available line %q", got)
	}
	typeInto(t, ctx, "send-amount", "1234.57")
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, shown("send-amount-error"))
	if got := text(t, ctx, "send-amount-error"); !strings.Contains(got, "You have $1,234.56 available") {
		t.Errorf("amount error %q", got)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(m.calls(api, "POST", "/api/quotes")); n != 0 {
		t.Errorf("%d quotes asked for an amount above the balance", n)
	}
	// What they receive, set instead: estimated from the indicative rate
	// (MXN at 0.0585 USD): 30,000 MXN is about 1,755 USD.
	eval[chromedp.Void](t, ctx, `document.getElementById("send-side-receiving").click()`)
	typeInto(t, ctx, "send-amount", "30000")
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, `document.getElementById("send-amount-error").textContent.includes("about $1,755.00.")`)
	// The full balance is fine.
	eval[chromedp.Void](t, ctx, `document.getElementById("send-side-sending").click()`)
	typeInto(t, ctx, "send-amount", "1234.56")
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, shown("quote"))
}

// TestFocusAboveTheMenu: on a phone, where the menu is fixed at the
// bottom of the screen, whatever the keyboard focuses is scrolled above
// the menu, never left under it (a focused "Review payment" button that
// cannot be seen). Tabs through the long Security view and Send.
func TestFocusAboveTheMenu(t *testing.T) {
	t.Parallel()
	ctx := signedInPhone(t, 412, 823)
	for _, v := range []struct{ path, view string }{{"/security", "security"}, {"/send", "send"}} {
		goTo(t, ctx, v.path, v.view)
		seen := 0
		for range 60 {
			do(t, ctx, chromedp.KeyEvent("\t"))
			got := eval[struct {
				Name   string  `json:"name"`
				Bottom float64 `json:"bottom"`
				NavTop float64 `json:"navTop"`
				InNav  bool    `json:"inNav"`
				Big    bool    `json:"big"` // the body, or a region taller than the screen
			}](t, ctx, `(() => {
  const el = document.activeElement, nav = document.querySelector("nav.nav");
  const r = el.getBoundingClientRect();
  return {name: el.id || el.textContent.trim().slice(0, 40) || el.tagName, bottom: r.bottom,
    navTop: nav.getBoundingClientRect().top, inNav: nav.contains(el),
    big: el === document.body || r.height > innerHeight / 2};
})()`)
			if got.InNav || got.Bottom == 0 || got.Big {
				continue
			}
			seen++
			if got.Bottom > got.NavTop+0.5 {
				t.Errorf("%s: the focused %q ends at %.0f px, under the menu from %.0f px", v.path, got.Name, got.Bottom, got.NavTop)
			}
		}
		if seen < 5 {
			t.Errorf("%s: only %d focused elements outside the menu", v.path, seen)
		}
	}
}

// TestSecurityLogNotActivity: the security log's heading is not the name
// of the menu's Activity (payments), so that "Activity" names one place.
func TestSecurityLogNotActivity(t *testing.T) {
	t.Parallel()
	ctx := signedInPhone(t, 412, 823)
	goTo(t, ctx, "/security", "security")
	got := eval[[]string](t, ctx, `[document.getElementById("security-log-title").textContent.trim(),
  document.querySelector('#nav a[data-nav="activity"]').textContent.trim()]`)
	if got[0] == got[1] || got[0] == "" {
		t.Errorf("the security log is titled %q, and the menu's payments %q", got[0], got[1])
	}
}

// TestActivityFilterAndReceipt: the filter asks the service for one status
// and lists only it; failed and returned payments read as money coming
// back; a receipt says what happened, with the rate people read and the
// fees in the currency chosen.
func TestActivityFilterAndReceipt(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	var xof, failed, returned string
	m.set(func(m *fakeMoney) { _, xof, failed, returned = someActivity(m) })
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/activity", "activity")
	waitFor(t, ctx, `document.querySelectorAll("#transactions-list > li").length === 4`)
	for id, want := range map[string]string{failed: "Not delivered: the money comes back to your wallet", returned: "Returned: the money came back to your wallet"} {
		got := eval[string](t, ctx, `document.querySelector('#transactions-list > li[data-id="`+id+`"] .tx-back').textContent`)
		if got != want {
			t.Errorf("%s reads %q, want %q", id, got, want)
		}
		if amount := eval[string](t, ctx, `document.querySelector('#transactions-list > li[data-id="`+id+`"] .tx-amount').textContent`); strings.HasPrefix(amount, "−") {
			t.Errorf("%s shows %q: money that came back is not money lost", id, amount)
		}
	}

	choose(t, ctx, "#transactions-filter", "REFUNDED")
	waitFor(t, ctx, `document.querySelectorAll("#transactions-list > li").length === 1`)
	if got := eval[string](t, ctx, `document.querySelector("#transactions-list > li").dataset.id`); got != returned {
		t.Errorf("filtered list shows %s", got)
	}
	asked := false
	for _, c := range m.calls(api, "GET", "/api/transactions") {
		asked = asked || strings.Contains(c.query, "status=REFUNDED")
	}
	if !asked {
		t.Error("the filtered list was not asked of the service with status=REFUNDED")
	}

	goTo(t, ctx, "/activity/"+xof+"/receipt", "receipt")
	waitFor(t, ctx, `document.querySelectorAll("#receipt-facts > div").length > 5`)
	facts := func() map[string]string {
		var f map[string]string
		f = eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("#receipt-facts > div")].map((d) => [d.dataset.fact, d.querySelector("dd").textContent]))`)
		return f
	}
	f := facts()
	if f["rate"] != "1\u00a0USD = 606.06\u00a0XOF" {
		t.Errorf("rate %q, want it the way people read it", f["rate"])
	}
	if f["fees"] != "≈ $0.50 (F\u202fCFA\u00a0300)" {
		t.Errorf("fees in USD %q", f["fees"])
	}
	if got := text(t, ctx, "receipt-summary"); !strings.HasPrefix(got, "You sent $10.00 to ") || !strings.HasSuffix(got, "It was delivered.") {
		t.Errorf("summary %q", got)
	}
	choose(t, ctx, "#receipt-fee-currency", "XOF")
	waitFor(t, ctx, `document.querySelector('#receipt-facts > div[data-fact="fees"] dd').textContent === "F\u202fCFA\u00a0300"`)
	if f := facts(); f["reference"] == "" && f["id"] != xof {
		t.Errorf("receipt names neither a reference nor the payment: %v", f)
	}

	// A payment in one currency converts nothing: its fees are shown as
	// they are, not "≈ $0.43 ($0.43)".
	const usd = "Transaction:0199a000-0000-7000-8000-000000000799"
	m.set(func(m *fakeMoney) {
		fee := int64(43)
		m.txs = append([]*fakeTx{{id: usd, status: "COMPLETED", typ: "OUTGOING", dest: usdPending, sent: 2500, received: 2457,
			sentCur: "USD", recvCur: "USD", fees: &fee, rate: 1, rail: "ACH", created: "2026-11-02T12:00:00Z"}}, m.txs...)
	})
	goTo(t, ctx, "/activity/"+usd+"/receipt", "receipt")
	waitFor(t, ctx, `document.querySelector('#receipt-facts > div[data-fact="id"] dd')?.textContent === "`+usd+`"`)
	if f := facts(); f["fees"] != "$0.43" {
		t.Errorf("fees of a payment in one currency %q, want $0.43", f["fees"])
	}
}
