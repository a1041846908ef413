package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
	"paywallet/service"
	"paywallet/service/seclog"
	"paywallet/service/store"
)

// Security → Activity and Limits, Send's refusal by a limit, and the
// "sign out everywhere" link of the security e-mails (issue 29).

// securityEvents returns the customer's security log as the store holds
// it, newest first.
func (s *stack) securityEvents(customerID string) []store.SecurityEvent {
	s.t.Helper()
	var out []store.SecurityEvent
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		cursor := ""
		for {
			p, err := tx.ListSecurityEvents(context.Background(), store.SecurityEventFilter{CustomerID: customerID, Limit: 100, Cursor: cursor})
			if err != nil {
				return err
			}
			out = append(out, p.Items...)
			if !p.HasMore {
				return nil
			}
			cursor = p.NextCursor
		}
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// walletLimits is the account's limits as the store holds them.
func (s *stack) walletLimits(accountID string) store.WalletLimits {
	s.t.Helper()
	var out *store.WalletLimits
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.GetWalletLimits(context.Background(), accountID)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return *out
}

// limitsString shows l for a test's message.
func limitsString(l store.WalletLimits) string {
	n := func(p *int64) string {
		if p == nil {
			return "none"
		}
		return strconv.FormatInt(*p, 10)
	}
	out := fmt.Sprintf("per payment %s, daily %s, cooling-off %dh", n(l.PerPayment), n(l.Daily), l.CoolingOffHours)
	if p := l.Pending; p != nil {
		out += fmt.Sprintf("; pending from %s: per payment %v %s, daily %v %s, cooling-off %v %dh", p.EffectiveAt.Format(time.RFC3339),
			p.PerPaymentSet, n(p.PerPayment), p.DailySet, n(p.Daily), p.CoolingOffSet, p.CoolingOffHours)
	}
	return out
}

// canonicalJSON is a JSON value in the canonical form the security log's
// chain covers (service/seclog): keys sorted, no spaces, numbers as
// written, no HTML escapes.
func canonicalJSON(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(out.Bytes()), nil
}

// TestSecurityLimitsAndActivity: Security shows the sign-in in words; a
// lower per-payment limit applies at once and Send refuses a payment over
// it in the page's words and a link to the limits; a higher limit
// asks for the e-mailed code (a cancel changes nothing) and then says from
// when it applies; the log downloads as JSON with every record, chained.
func TestSecurityLimitsAndActivity(t *testing.T) {
	s := moneyStack(t)
	ctx := newBrowser(t)
	const email = "limits@example.com"
	s.signIn(ctx, email)
	customer := s.customerOf(email)
	addFunds(t, ctx, "1,000", 100000)
	dest := addActiveUSDAccount(t, ctx, "12345678", 1)
	// A payment under way, reviewed before the limit is set.
	quoteFor(t, ctx, dest, "60.00")

	// The sign-in, in words, with where it came from.
	goTo(t, ctx, "/security", "security")
	waitJS(t, ctx, "the sign-in in the log", `document.querySelector('#security-log-list > li[data-type="SIGNED_IN"]') !== null`)
	signedIn, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#security-log-list > li[data-type="SIGNED_IN"]').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^Signed in with an e-mail code on \S.*\n.*· from this computer$`).MatchString(signedIn) {
		t.Errorf("the sign-in reads %q, want “Signed in with an e-mail code on <device>” and “from this computer”", signedIn)
	}
	waitJS(t, ctx, "the limits", `document.querySelectorAll("#limits-current > div").length === 3 && !document.getElementById("limits").hidden`)
	if got := textOf(t, ctx, "limits-current"); !strings.Contains(got, "No limit") || !strings.Contains(got, "No wait") {
		t.Errorf("the limits before any change: %q", got)
	}

	// Lower: at once, without a confirmation.
	typeIn(t, ctx, "limits-per-payment", "50.00")
	click(t, ctx, "limits-save")
	waitJS(t, ctx, "the limit saved", `document.getElementById("limits-result").textContent === "Saved: your new limits apply now."`)
	if got := textOf(t, ctx, "limits-current"); !strings.Contains(got, usd(5000)) {
		t.Errorf("the limits after lowering: %q, want %s", got, usd(5000))
	}
	if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("stepup").open`)); open {
		t.Error("lowering a limit asked for a confirmation")
	}

	// The payment reviewed before is over it now: Send refuses it with the
	// service's words and the way to the limits.
	goTo(t, ctx, "/send", "send")
	waitJS(t, ctx, "the payment under way", `!document.getElementById("quote").hidden`)
	click(t, ctx, "send-submit")
	waitJS(t, ctx, "the refusal of the payment", `!document.getElementById("quote-error").hidden && !document.getElementById("quote-limits-link").hidden`)
	if got := textOf(t, ctx, "quote-error"); !strings.Contains(got, "This payment of $60.00 is above your limit of $50.00 per payment") {
		t.Errorf("the refusal of the payment reads %q", got)
	}
	if a := s.wallet(s.accountOf(email)); a.Available != 100000 || a.Held != 0 {
		t.Errorf("after the refusal the wallet holds %d available, %d held", a.Available, a.Held)
	}

	// A new quote over it: refused at once, with the same words and link.
	click(t, ctx, "quote-cancel")
	typeIn(t, ctx, "send-amount", "60.00")
	click(t, ctx, "quote-submit")
	waitJS(t, ctx, "the refusal", `!document.getElementById("send-form-error").hidden && !document.getElementById("send-limits-link").hidden`)
	if got := textOf(t, ctx, "send-form-error"); !strings.Contains(got, "above your limit of $50.00 per payment") {
		t.Errorf("the refusal reads %q", got)
	}
	screenshot(t, ctx, "send-limit-refused.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#send-limits-link a`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "Security at its limits", `document.body.dataset.view === "security" && document.activeElement === document.getElementById("limits-title")`)

	// Higher: held for the e-mailed code; cancelled, nothing changes.
	waitJS(t, ctx, "the limits form", `document.getElementById("limits-per-payment").value === "50.00"`)
	typeIn(t, ctx, "limits-per-payment", "500")
	click(t, ctx, "limits-save")
	waitJS(t, ctx, "the confirmation dialog", `document.getElementById("stepup").open && document.getElementById("stepup-what").textContent === "Raise your limits"`)
	click(t, ctx, "stepup-cancel")
	waitJS(t, ctx, "the cancel said", `!document.getElementById("stepup").open && document.getElementById("limits-result").textContent === "You cancelled the confirmation. Nothing changed."`)
	if l := s.walletLimits(s.accountOf(email)); l.PerPayment == nil || *l.PerPayment != 5000 || l.Daily != nil || l.CoolingOffHours != 0 || l.Pending != nil {
		t.Errorf("after the cancel the store holds the limits %s, want only 5000 per payment and nothing pending", limitsString(l))
	}

	typeIn(t, ctx, "limits-per-payment", "500")
	click(t, ctx, "limits-save")
	waitJS(t, ctx, "the confirmation dialog again", `document.getElementById("stepup").open`)
	waitJS(t, ctx, "the code to be sent", `document.getElementById("stepup-code-hint").textContent !== ""`)
	typeIn(t, ctx, "stepup-code-input", s.latestCode(email))
	click(t, ctx, "stepup-code-submit")
	waitJS(t, ctx, "the higher limit pending", `!document.getElementById("stepup").open && !document.getElementById("limits-pending-box").hidden`)
	want := "Your higher limit per payment of " + usd(50000) + " applies from "
	if got := textOf(t, ctx, "limits-pending"); !strings.HasPrefix(got, want) {
		t.Errorf("pending: %q, want it to begin %q", got, want)
	}
	if got := textOf(t, ctx, "limits-result"); !strings.Contains(got, want) || !strings.Contains(got, "wait 24 hours") {
		t.Errorf("the answer to the save: %q", got)
	}
	if got := textOf(t, ctx, "limits-current"); !strings.Contains(got, usd(5000)) {
		t.Errorf("the limit that applies now: %q, want still %s", got, usd(5000))
	}
	if l := s.walletLimits(s.accountOf(email)); l.PerPayment == nil || *l.PerPayment != 5000 || l.Pending == nil ||
		!l.Pending.PerPaymentSet || l.Pending.PerPayment == nil || *l.Pending.PerPayment != 50000 || !l.Pending.EffectiveAt.After(time.Now()) {
		t.Errorf("after the confirmation the store holds the limits %s, want 5000 per payment now and 50000 pending", limitsString(l))
	}
	screenshot(t, ctx, "security-limits-pending.png")

	// A raise the person did not ask for (the e-mail says so) is stopped
	// from here, at once, with no confirmation.
	click(t, ctx, "limits-cancel-pending")
	waitJS(t, ctx, "the pending raise stopped", `document.getElementById("limits-result").textContent.includes("will not happen") &&
  document.getElementById("limits-pending-box").hidden && !document.getElementById("stepup").open`)
	if l := s.walletLimits(s.accountOf(email)); l.PerPayment == nil || *l.PerPayment != 5000 || l.Pending != nil {
		t.Errorf("after keeping the limits the store holds %s, want 5000 per payment and nothing pending", limitsString(l))
	}

	// The log has the changes; the download has every record, chained.
	click(t, ctx, "security-log-refresh")
	waitJS(t, ctx, "the limits changes in the log", `document.querySelectorAll('#security-log-list > li[data-type="LIMITS_CHANGED"]').length === 3`)
	dir := t.TempDir()
	if err := browsertest.AllowDownloads(ctx, dir); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "security-log-download")
	waitJS(t, ctx, "the download's status", `document.getElementById("security-log-download-status").textContent.startsWith("Downloaded security-log-")`)
	status := textOf(t, ctx, "security-log-download-status")
	name := regexp.MustCompile(`security-log-\d{4}-\d{2}-\d{2}\.json`).FindString(status)
	if name == "" {
		t.Fatalf("the status names no file: %q", status)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := browsertest.Downloaded(wait, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Records []struct {
			ID           string          `json:"id"`
			CustomerID   string          `json:"customerId"`
			AccountID    string          `json:"accountId"`
			Sequence     int64           `json:"sequence"`
			Type         string          `json:"type"`
			Details      json.RawMessage `json:"details"`
			CreatedAt    string          `json:"createdAt"`
			Hash         string          `json:"hash"`
			PreviousHash string          `json:"previousHash"`
		} `json:"records"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("the download is not JSON: %v\n%s", err, raw)
	}
	stored := s.securityEvents(customer)
	if len(file.Records) != len(stored) || len(stored) < 4 {
		t.Fatalf("the file has %d records, the service %d", len(file.Records), len(stored))
	}
	// Each record as the store holds it: every field the chain covers,
	// and its links.
	rows := make([]seclog.Row, len(file.Records))
	for i, r := range file.Records {
		e := stored[i]
		at, err := time.Parse(time.RFC3339Nano, r.CreatedAt)
		if err != nil {
			t.Errorf("record %d: createdAt %q: %v", i, r.CreatedAt, err)
		}
		details, err := canonicalJSON(r.Details)
		if err != nil {
			t.Errorf("record %d: details %s: %v", i, r.Details, err)
		}
		if r.ID != e.ID || r.Sequence != e.Seq || r.Type != e.Type || r.CustomerID != customer || r.CustomerID != e.CustomerID ||
			r.AccountID != e.AccountID || r.Hash != e.Hash || r.PreviousHash != e.PrevHash || !at.Equal(e.CreatedAt) ||
			!bytes.Equal(details, e.Details) {
			const f = "%s of %s #%d %s account %q created %s details %s prev %s hash %s"
			t.Errorf("record %d of the file:\n"+f+"\nthe store's:\n"+f, i,
				r.ID, r.CustomerID, r.Sequence, r.Type, r.AccountID, r.CreatedAt, details, r.PreviousHash, r.Hash,
				e.ID, e.CustomerID, e.Seq, e.Type, e.AccountID, e.CreatedAt.Format(time.RFC3339Nano), e.Details, e.PrevHash, e.Hash)
		}
		rows[len(rows)-1-i] = seclog.Row{Record: seclog.Record{ID: r.ID, CustomerID: r.CustomerID, AccountID: r.AccountID, Type: r.Type,
			Details: details, CreatedAt: at}, Seq: r.Sequence, PrevHash: r.PreviousHash, Hash: r.Hash}
	}
	// The chain recomputed from the file alone, oldest first, as anyone
	// who downloads it can (service/seclog), up to the store's newest.
	v := seclog.Verifier{Anchors: map[string]seclog.Head{customer: {Sequence: stored[0].Seq, Hash: stored[0].Hash}}}
	for i := range rows {
		v.Add(&rows[i])
	}
	if report := v.Finish(); report.ProblemCount != 0 || report.Records != int64(len(rows)) || report.Customers != 1 {
		t.Errorf("the file's chain does not verify: %d records of %d customers checked, problems %+v", report.Records, report.Customers, report.Problems)
	}
	if rows[0].Seq != 1 || rows[0].PrevHash != seclog.Zero {
		t.Errorf("the file's oldest record is #%d after %s, want #1 after %s", rows[0].Seq, rows[0].PrevHash, seclog.Zero)
	}
	if !strings.Contains(status, "records") {
		t.Errorf("status %q", status)
	}
}

// watchSignOutPosts keeps in window.__soePosts each request the page makes
// to /api/sign-out-everywhere (fetch, XMLHttpRequest or a beacon).
const watchSignOutPosts = `(() => {
  window.__soePosts = [];
  const note = (method, url) => {
    try {
      const u = new URL(url instanceof Request ? url.url : String(url), location.href);
      if (u.pathname === "/api/sign-out-everywhere") window.__soePosts.push(String(method || "GET").toUpperCase() + " " + u.pathname);
    } catch (e) {}
  };
  const fetch0 = window.fetch;
  window.fetch = function (input, init) {
    note((init && init.method) || (input instanceof Request ? input.method : "GET"), input);
    return fetch0.apply(this, arguments);
  };
  const open0 = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url) {
    note(method, url);
    return open0.apply(this, arguments);
  };
  if (navigator.sendBeacon) {
    const beacon0 = navigator.sendBeacon.bind(navigator);
    navigator.sendBeacon = (url, data) => { note("POST", url); return beacon0(url, data); };
  }
})();`

// soePosts is what watchSignOutPosts saw in the page so far.
func soePosts(t *testing.T, ctx context.Context) []string {
	t.Helper()
	posts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__soePosts === undefined ? ["(not watched)"] : window.__soePosts`))
	if err != nil {
		t.Fatal(err)
	}
	return posts
}

// TestSignOutEverywhereLink: the link of the new-sign-in e-mail, opened in
// another browser that is signed in nowhere, does nothing until the
// person presses the button, then signs out the wallet's session in the
// first browser and says so; the link works once.
func TestSignOutEverywhereLink(t *testing.T) {
	s := startStack(t, service.ModeProduction, func(c *service.Config) {
		c.WalletURL = c.WebAuthnOrigins[0] // the stack's own address
	})
	const email = "link@example.com"
	laptop := newBrowser(t)
	s.signIn(laptop, email)
	account := s.accountOf(email)

	// The e-mail about the new sign-in carries the link.
	var link string
	waitUntil(t, 10*time.Second, "the new sign-in e-mail", func() bool {
		for _, m := range s.mailbox.All() {
			if strings.EqualFold(m.To, email) {
				if l := regexp.MustCompile(`http://\S+/sign-out-everywhere#[A-Za-z0-9_-]+`).FindString(m.Body); l != "" {
					link = l
					return true
				}
			}
		}
		return false
	})
	if !strings.HasPrefix(link, s.url+"/sign-out-everywhere#") {
		t.Fatalf("the link %q does not open this wallet (%s)", link, s.url)
	}

	other := newBrowser(t)
	// Every request of the page to the link's endpoint, however made, so
	// that opening the link is seen to send nothing.
	if _, err := chromedp.Call(other, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchSignOutPosts}); err != nil {
		t.Fatal(err)
	}
	openView(t, other, link, "sign-out-everywhere", http.StatusOK)
	if posts := soePosts(t, other); len(posts) != 0 {
		t.Fatalf("opening the link sent %q before the button was pressed", posts)
	}
	if n := len(s.activeSessions(account)); n != 1 {
		t.Fatalf("opening the link changed the sessions: %d active", n)
	}
	if got := textOf(t, other, "soe-title"); got != "Sign out everywhere" {
		t.Errorf("the page's title %q", got)
	}
	checkView(t, other, "sign-out-everywhere")
	click(t, other, "soe-submit")
	waitJS(t, other, "the answer", `!document.getElementById("soe-done").hidden`)
	if posts := soePosts(t, other); len(posts) != 1 || posts[0] != "POST /api/sign-out-everywhere" {
		t.Errorf("the button sent %q, want one POST /api/sign-out-everywhere", posts)
	}
	if got := textOf(t, other, "soe-result"); got != "Done: 1 session was signed out." {
		t.Errorf("the answer reads %q", got)
	}
	if got, _ := chromedp.Run(other, chromedp.Evaluate[string](`location.hash`)); got != "" {
		t.Errorf("the used token stays in the address: %q", got)
	}
	if n := len(s.activeSessions(account)); n != 0 {
		t.Errorf("%d sessions still active after the link", n)
	}
	me, err := chromedp.Run(laptop, chromedp.Evaluate[string](`fetch("/api/me", {headers: {"X-CSRF": "1"}}).then(async (r) => r.status + " " + (await r.text()))`, chromedp.EvalAwaitPromise))
	if err != nil || me != `200 {"signedIn":false}` {
		t.Errorf("the laptop after the link: GET /api/me = %q %v, want nobody signed in", me, err)
	}
	if err := chromedp.Do(laptop, chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatalf("the laptop does not show the sign-in: %v", err)
	}

	// Once only (the link opened again, as a new page).
	if err := chromedp.Do(other, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	openView(t, other, link, "sign-out-everywhere", http.StatusOK)
	click(t, other, "soe-submit")
	waitJS(t, other, "the refusal", `!document.getElementById("soe-error").hidden`)
	if got := textOf(t, other, "soe-error"); !strings.HasPrefix(got, "This link was used already or has expired") {
		t.Errorf("a used link reads %q", got)
	}
}
