package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
	"paywallet/service/store"
)

// The statement (/activity/statement) against the whole stack: the
// wallet's ledger entries as the service's books wrote them, through the
// BFF's route scoped to the signed-in customer.

// statementLine is a line of the statement's table as the page draws it.
type statementLine struct {
	Ledger  string `json:"ledger"`
	Kind    string `json:"kind"`
	What    string `json:"what"`
	Link    string `json:"link"`
	Amount  string `json:"amount"`
	Balance string `json:"balance"`
	// What the line changed the balance by and the balance after it, in
	// cents (the row's data attributes).
	Change, After, Held int64
}

func statementLines(t *testing.T, ctx context.Context) []statementLine {
	t.Helper()
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]statementLine](`[...document.querySelectorAll("#statement-lines > tr")].map((tr) => {
  const text = (el) => [...el.children].map((c) => c.textContent.trim()).join(" | ");
  const link = tr.querySelector("th a");
  return {ledger: tr.dataset.ledgerTransaction, kind: tr.dataset.kind, what: tr.querySelector(".statement-what").textContent,
    link: link ? link.getAttribute("href") : "", amount: text(tr.querySelector(".statement-amount")),
    balance: text(tr.querySelector(".statement-balance")),
    Change: Number(tr.dataset.amount), After: Number(tr.dataset.balance), Held: Number(tr.dataset.held)};
})`))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// ledgerOf is the wallet's ledger entries as the store holds them, newest
// first.
func (s *stack) ledgerOf(wallet string) []store.LedgerEntry {
	s.t.Helper()
	var out []store.LedgerEntry
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		cursor := ""
		for {
			page, err := tx.ListLedgerEntries(context.Background(), store.LedgerEntryFilter{Wallet: wallet, Descending: true, Limit: 100, Cursor: cursor})
			if err != nil {
				return err
			}
			out = append(out, page.Items...)
			if !page.HasMore {
				return nil
			}
			cursor = page.NextCursor
		}
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// TestStatement: sign in, add $1,000 and send a $25 payment through the
// pages, then add $1 fifty times (through the BFF, as the page's "Add
// funds" does), and open the statement. Its lines are the wallet's ledger
// transactions as the service's books hold them, newest first, in words,
// each balance the one below it plus the line's amount, the payment's HOLD
// with its money on hold; "Load more" brings the oldest. axe-core finds no
// WCAG 2.2 AA violation at a laptop's or a phone's size. The month's CSV,
// downloaded through the page, has the same ledger transactions oldest
// first, with their amounts and balances in dollars.
func TestStatement(t *testing.T) {
	s := moneyStack(t)
	ctx := browsertest.New(t, 4*time.Minute)
	const email = "statement@example.com"
	s.signIn(ctx, email)
	wallet := s.accountOf(email)
	addFunds(t, ctx, "1,000", 100000)
	recipient := addActiveUSDAccount(t, ctx, "12345678", 1)
	payment := sendMoney(t, s, ctx, recipient, "25.00")
	sent := payment.SentAmount
	const ones = 50
	fund := `(async () => {
  for (let i = 0; i < ` + strconv.Itoa(ones) + `; i++) {
    const r = await fetch("/api/sandbox/fund", {method: "POST", credentials: "same-origin",
      headers: {"X-CSRF": "1", "Content-Type": "application/json", "Idempotency-Key": crypto.randomUUID()}, body: JSON.stringify({amount: 100})});
    if (r.status !== 200) return "funding " + i + ": " + r.status + " " + await r.text();
  }
  return "";
})()`
	if msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](fund, chromedp.EvalAwaitPromise)); err != nil || msg != "" {
		t.Fatalf("adding $1 %d times: %v %s", ones, err, msg)
	}
	final := 100000 - sent + ones*100
	if a := s.wallet(wallet); a.Available != final || a.Held != 0 {
		t.Fatalf("the wallet holds %d available, %d held; want %d, 0", a.Available, a.Held, final)
	}
	entries := s.ledgerOf(wallet)
	var books []string // the wallet's ledger transactions, newest first
	for _, e := range entries {
		if len(books) == 0 || books[len(books)-1] != e.LedgerTransactionID {
			books = append(books, e.LedgerTransactionID)
		}
	}
	if len(books) != ones+3 {
		t.Fatalf("the books hold %d ledger transactions of the wallet, want %d", len(books), ones+3)
	}

	goTo(t, ctx, "/activity", "activity")
	click(t, ctx, "activity-statement")
	waitJS(t, ctx, "the statement's first page", `document.body.dataset.view === "statement" && location.pathname === "/activity/statement" &&
  document.querySelectorAll("#statement-lines > tr").length > 0 && !document.getElementById("statement-more").hidden`)
	first := statementLines(t, ctx)
	// 50 entries to a page: the fifty $1 fundings, the oldest of them held
	// back while the page may have cut it.
	if len(first) != ones-1 {
		t.Fatalf("%d lines on the first page, want %d", len(first), ones-1)
	}
	if first[0].What != "Added funds" || first[0].Amount != "+$1.00" || first[0].Balance != usd(final) || first[0].After != final {
		t.Errorf("newest line %+v, want $1 added and %s after it", first[0], usd(final))
	}
	checkView(t, ctx, "statement")

	click(t, ctx, "statement-more")
	waitJS(t, ctx, "the statement's last page", `document.getElementById("statement-more").hidden &&
  document.querySelectorAll("#statement-lines > tr").length === `+strconv.Itoa(ones+3))
	lines := statementLines(t, ctx)
	var got []string
	for i, l := range lines {
		got = append(got, l.Ledger)
		below := int64(0)
		if i+1 < len(lines) {
			below = lines[i+1].After
		}
		if l.After != below+l.Change {
			t.Errorf("line %d (%s): balance %d after %+d, but the line below ends at %d", i, l.Kind, l.After, l.Change, below)
		}
	}
	if !slices.Equal(got, books) {
		t.Errorf("the statement's lines\n%q\nare not the books' ledger transactions\n%q", got, books)
	}
	n := len(lines)
	want := []statementLine{
		{Kind: "POST", What: "Payment sent", Link: "/activity/" + payment.ID, Amount: "-" + usd(sent), Balance: usd(100000 - sent)},
		{Kind: "HOLD", What: "Payment on its way (held)", Link: "/activity/" + payment.ID, Amount: usd(sent) + " | put on hold",
			Balance: usd(100000) + " | " + usd(sent) + " on hold"},
		{Kind: "FUNDING", What: "Added funds", Amount: "+" + usd(100000), Balance: usd(100000)},
	}
	for i, w := range want {
		l := lines[n-3+i]
		if l.Kind != w.Kind || l.What != w.What || l.Amount != w.Amount || l.Balance != w.Balance || (w.Link != "" && l.Link != w.Link) {
			t.Errorf("line %d\n got %+v\nwant %+v", n-3+i, l, w)
		}
		if !strings.HasPrefix(l.Link, "/activity/Transaction:") {
			t.Errorf("line %d links to %q, not to its payment", n-3+i, l.Link)
		}
	}
	if a := s.wallet(wallet); lines[0].After != a.Available+a.Held {
		t.Errorf("the statement ends at %d, the wallet holds %d", lines[0].After, a.Available+a.Held)
	}

	// The month as CSV: this month is chosen already.
	dir := t.TempDir()
	if err := browsertest.AllowDownloads(ctx, dir); err != nil {
		t.Fatal(err)
	}
	month := time.Now().UTC().Format("2006-01")
	waitJS(t, ctx, "this month in the picker", `document.getElementById("statement-month").value === `+jsString(month))
	click(t, ctx, "statement-download")
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := browsertest.Downloaded(wait, dir, "statement-"+month+".csv")
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the download's status", `document.getElementById("statement-download-status").textContent.startsWith("Downloaded statement-`+month+`.csv: `+strconv.Itoa(ones+3)+` lines")`)
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\ufeff")))).ReadAll()
	if err != nil {
		t.Fatalf("the file is not CSV: %v\n%s", err, raw)
	}
	if h := records[0]; !slices.Equal(h, []string{"Date (UTC)", "Description", "Amount", "Currency", "Available after", "On hold after", "Ledger transaction", "Payment"}) {
		t.Errorf("header %q", h)
	}
	rows := records[1:]
	if len(rows) != ones+3 {
		t.Fatalf("%d rows, want %d", len(rows), ones+3)
	}
	dollars := func(cents int64) string {
		return strconv.FormatInt(cents/100, 10) + "." + strconv.FormatInt(cents%100+100, 10)[1:]
	}
	wantRows := [][]string{
		{"Added funds", "1000.00", "USD", "1000.00", "0.00"},
		{"Payment on its way (held)", "0.00", "USD", dollars(100000 - sent), dollars(sent)},
		{"Payment sent", "-" + dollars(sent), "USD", dollars(100000 - sent), "0.00"},
		{"Added funds", "1.00", "USD", dollars(100000 - sent + 100), "0.00"},
	}
	for i, w := range wantRows {
		if !slices.Equal(rows[i][1:6], w) {
			t.Errorf("row %d %q, want %q", i, rows[i][1:6], w)
		}
	}
	if last := rows[len(rows)-1]; last[4] != dollars(final) {
		t.Errorf("the last row ends at %s, want %s", last[4], dollars(final))
	}
	for i, r := range rows {
		at, err := time.Parse(time.RFC3339, r[0])
		if err != nil || at.UTC().Format("2006-01") != month {
			t.Errorf("row %d at %q (%v), not in %s", i, r[0], err, month)
		}
		if r[6] != books[len(books)-1-i] {
			t.Errorf("row %d is ledger transaction %s, want %s (oldest first)", i, r[6], books[len(books)-1-i])
		}
		if !strings.HasPrefix(r[7], "Transaction:") {
			t.Errorf("row %d names the payment %q", i, r[7])
		}
	}
	if rows[1][7] != payment.ID || rows[2][7] != payment.ID {
		t.Errorf("the payment's rows name %q and %q, want %s", rows[1][7], rows[2][7], payment.ID)
	}

	// At a phone's size, reached by a link inside the running wallet.
	if err := chromedp.Do(ctx, screenSizes[1].emulate()); err != nil {
		t.Fatal(err)
	}
	goTo(t, ctx, "/activity", "activity")
	goTo(t, ctx, "/activity/statement", "statement")
	settle(t, ctx, "statement")
	waitJS(t, ctx, "the statement's lines", `document.querySelectorAll("#statement-lines > tr").length > 0`)
	checkView(t, ctx, "statement")
}
