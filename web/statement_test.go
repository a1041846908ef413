package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// The statement (/activity/statement, views/statement.js) against the fake's
// ledger entries: lines per ledger transaction with the balance after
// each, "Load more", and a month downloaded as CSV.

// fakeBook writes a wallet's ledger transactions as the service's books
// do: each is one or two entries on the wallet's sides, every entry
// carrying the wallet's balances after the whole transaction.
type fakeBook struct {
	available, held int64
	n               int
	entries         []map[string]any // oldest first
}

// post writes a ledger transaction that moves available and held by the
// amounts given and returns its id. The side that gives comes first, as
// package ledger's builders write them.
func (b *fakeBook) post(kind, payment, description string, at time.Time, available, held int64) string {
	b.n++
	id := fmt.Sprintf("LedgerTransaction:0199b000-0000-7000-8000-%012d", b.n)
	b.available += available
	b.held += held
	type side struct {
		name   string
		amount int64
	}
	sides := []side{{"AVAILABLE", available}, {"HELD", held}}
	if held < 0 {
		slices.Reverse(sides)
	}
	n := 0
	for _, s := range sides {
		if s.amount == 0 {
			continue
		}
		n++
		e := map[string]any{
			"id": fmt.Sprintf("LedgerEntry:%s-%d", strings.TrimPrefix(id, "LedgerTransaction:"), n), "ledgerTransactionId": id,
			"kind": kind, "account": "LedgerAccount:" + strings.TrimPrefix(fakeAccount, "InternalAccount:") + ":" + strings.ToLower(s.name),
			"side": s.name, "amount": s.amount, "currency": "USD", "availableAfter": b.available, "heldAfter": b.held,
			"description": description, "createdAt": at.UTC().Format("2006-01-02T15:04:05.000Z"),
		}
		if payment != "" {
			e["transactionId"] = payment
		}
		b.entries = append(b.entries, e)
	}
	return id
}

// newestFirst is the entries as the service lists them.
func (b *fakeBook) newestFirst() []map[string]any {
	out := slices.Clone(b.entries)
	slices.Reverse(out)
	return out
}

// listEntries answers GET /api/internal-accounts/{id}/entries: newest
// first, limit (at most 100, and at most entryCap), cursor,
// createdAfter (inclusive) and createdBefore (exclusive).
func (m *fakeMoney) listEntries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var bad []any
	bound := func(name string) time.Time {
		v := q.Get(name)
		if v == "" {
			return time.Time{}
		}
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			bad = append(bad, map[string]any{"field": name, "message": "must be an RFC 3339 time"})
		}
		return at
	}
	after, before := bound("createdAfter"), bound("createdBefore")
	limit, err := strconv.Atoi(q.Get("limit"))
	if q.Get("limit") == "" {
		limit = 20
	} else if err != nil || limit < 1 || limit > 100 {
		bad = append(bad, map[string]any{"field": "limit", "message": "must be an integer from 1 to 100"})
	}
	if len(bad) > 0 {
		fail(w, 400, "INVALID_INPUT", "invalid input", map[string]any{"errors": bad})
		return
	}
	if m.entryCap > 0 {
		limit = min(limit, m.entryCap)
	}
	var all []map[string]any
	for _, e := range m.entries {
		at, _ := time.Parse(time.RFC3339, e["createdAt"].(string))
		if (after.IsZero() || !at.Before(after)) && (before.IsZero() || at.Before(before)) {
			all = append(all, e)
		}
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "at:"))
	from = min(from, len(all))
	to := min(from+limit, len(all))
	data := []any{}
	for _, e := range all[from:to] {
		data = append(data, e)
	}
	out := map[string]any{"data": data, "hasMore": to < len(all), "totalCount": len(all)}
	if to < len(all) {
		out["nextCursor"] = "at:" + strconv.Itoa(to)
	}
	writeJSON(w, 200, out)
}

// statementBook is a wallet's month: $1,000 added the month before, a $25
// payment held then sent, a $40 payment held then failed (its money back),
// 46 additions of $1, and the newest, a line of a kind the pages do not
// know whose description starts like a spreadsheet formula. With 50
// entries to a page, the first page ends inside the $40 payment's HOLD.
type statementBook struct {
	entries              []map[string]any
	month, next          time.Time
	funding, sent, fails string // payments
	hold1, post, hold2   string // ledger transactions
	void, adjustment     string
}

const formula = `=HYPERLINK("https://example.com","fee")`

func newStatementBook() statementBook {
	now := time.Now().UTC()
	var s statementBook
	s.month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	s.next = s.month.AddDate(0, 1, 0)
	s.funding, s.sent, s.fails = "Transaction:0199b000-0000-7000-8000-0000000000f1", "Transaction:0199b000-0000-7000-8000-0000000000f2",
		"Transaction:0199b000-0000-7000-8000-0000000000f3"
	var b fakeBook
	at := func(hours int) time.Time { return s.month.Add(time.Duration(hours) * time.Hour) }
	b.post("FUNDING", s.funding, "Sandbox funding", s.month.Add(-72*time.Hour), 100000, 0)
	s.hold1 = b.post("HOLD", s.sent, "Payment on its way", at(1), -2500, 2500)
	s.post = b.post("POST", s.sent, "Payment sent", at(2), 0, -2500)
	s.hold2 = b.post("HOLD", s.fails, "Payment on its way", at(3), -4000, 4000)
	s.void = b.post("VOID", s.fails, "Payment failed", at(4), 4000, -4000)
	for i := range 46 {
		b.post("FUNDING", fmt.Sprintf("Transaction:0199b000-0000-7000-8000-%012d", 100+i), "Sandbox funding", at(5+i), 100, 0)
	}
	s.adjustment = b.post("ADJUSTMENT", "", formula, at(60), -50, 0)
	s.entries = b.newestFirst()
	return s
}

// statementRow is a line of the table as a person reads it.
type statementRow struct {
	Ledger, Kind, What, Link, When, Amount, Balance string
}

func statementRows(t *testing.T, ctx context.Context) []statementRow {
	t.Helper()
	return eval[[]statementRow](t, ctx, `[...document.querySelectorAll("#statement-lines > tr")].map((tr) => {
  const text = (el) => el ? [...el.children].map((c) => c.textContent.trim()).join(" | ") : "";
  const link = tr.querySelector("th a");
  return {Ledger: tr.dataset.ledgerTransaction, Kind: tr.dataset.kind, What: tr.querySelector(".statement-what").textContent,
    Link: link ? link.getAttribute("href") : "", When: tr.querySelector("time").dateTime,
    Amount: text(tr.querySelector(".statement-amount")), Balance: text(tr.querySelector(".statement-balance"))};
})`)
}

// TestStatementLinesAndPaging: the statement is reached from Activity; it
// shows one line per ledger transaction, newest first, in words, with the
// amount it changed the balance by (or what it put on hold or released)
// and the balance after it, with the money on hold; a line of a payment
// links to it; "Load more" brings the rest, completing the line the first
// page ended inside, and the focus goes on to the first line it brought.
func TestStatementLinesAndPaging(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	book := newStatementBook()
	m.set(func(m *fakeMoney) { m.entries = book.entries })
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/activity", "activity")
	clickID(t, ctx, "activity-statement")
	waitFor(t, ctx, `document.body.dataset.view === "statement" && location.pathname === "/activity/statement"`)
	if got := eval[string](t, ctx, `document.title`); got != "Statement · Wallet" {
		t.Errorf("title %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#nav a[aria-current="page"]').dataset.nav`); got != "activity" {
		t.Errorf("navigation marks %q as the current page", got)
	}
	waitFor(t, ctx, `document.querySelectorAll("#statement-lines > tr").length > 0 && !document.getElementById("statement-more").hidden`)
	rows := statementRows(t, ctx)
	// 47 lines and the $40 payment's VOID; its HOLD waits for its other entry.
	if len(rows) != 48 {
		t.Fatalf("%d lines after the first page, want 48 (the 49th is incomplete)", len(rows))
	}
	calls := m.calls(api, "GET", "/api/internal-accounts/"+fakeAccount+"/entries")
	if len(calls) != 1 || calls[0].query != "limit=50" {
		t.Errorf("asked for the entries with %v", calls)
	}
	want := map[int]statementRow{
		0:  {Ledger: book.adjustment, Kind: "ADJUSTMENT", What: formula, Amount: "-$0.50", Balance: "$1,020.50"},
		1:  {Kind: "FUNDING", What: "Added funds", Link: "/activity/Transaction:0199b000-0000-7000-8000-000000000145", Amount: "+$1.00", Balance: "$1,021.00"},
		46: {Kind: "FUNDING", What: "Added funds", Link: "/activity/Transaction:0199b000-0000-7000-8000-000000000100", Amount: "+$1.00", Balance: "$976.00"},
		47: {Ledger: book.void, Kind: "VOID", What: "Payment failed — money back", Link: "/activity/" + book.fails, Amount: "$40.00 | back from hold", Balance: "$975.00"},
	}
	checkRows(t, "first page", rows, want)
	if rows[0].When != book.month.Add(60*time.Hour).Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("newest line at %q", rows[0].When)
	}

	do(t, ctx, chromedp.Focus(chromedp.ID("statement-more")))
	eval[chromedp.Void](t, ctx, `document.getElementById("statement-more").click()`)
	waitFor(t, ctx, `document.getElementById("statement-more").hidden && document.querySelectorAll("#statement-lines > tr").length === 52`)
	rows = statementRows(t, ctx)
	want[48] = statementRow{Ledger: book.hold2, Kind: "HOLD", What: "Payment on its way (held)", Link: "/activity/" + book.fails,
		Amount: "$40.00 | put on hold", Balance: "$975.00 | $40.00 on hold"}
	want[49] = statementRow{Ledger: book.post, Kind: "POST", What: "Payment sent", Link: "/activity/" + book.sent, Amount: "-$25.00", Balance: "$975.00"}
	want[50] = statementRow{Ledger: book.hold1, Kind: "HOLD", What: "Payment on its way (held)", Link: "/activity/" + book.sent, Amount: "$25.00 | put on hold", Balance: "$1,000.00 | $25.00 on hold"}
	want[51] = statementRow{Kind: "FUNDING", What: "Added funds", Link: "/activity/" + book.funding, Amount: "+$1,000.00", Balance: "$1,000.00"}
	checkRows(t, "all pages", rows, want)
	if calls := m.calls(api, "GET", "/api/internal-accounts/"+fakeAccount+"/entries"); len(calls) != 2 || calls[1].query != "limit=50&cursor=at%3A50" {
		t.Errorf("Load more asked %v", calls)
	}
	if got := eval[string](t, ctx, `document.activeElement.closest("tr") ? document.activeElement.closest("tr").dataset.ledgerTransaction : document.activeElement.id`); got != book.hold2 {
		t.Errorf("focus on %q after the last page, want the first line it brought (%s)", got, book.hold2)
	}

	// A line of a payment opens the payment.
	eval[chromedp.Void](t, ctx, `document.querySelector('#statement-lines > tr[data-ledger-transaction="`+book.post+`"] th a').click()`)
	waitFor(t, ctx, `document.body.dataset.view === "payment" && location.pathname === "/activity/`+book.sent+`"`)
}

func checkRows(t *testing.T, stage string, rows []statementRow, want map[int]statementRow) {
	t.Helper()
	for i, w := range want {
		if i >= len(rows) {
			t.Errorf("%s: no line %d", stage, i)
			continue
		}
		got := rows[i]
		if w.Ledger == "" {
			w.Ledger = got.Ledger
		}
		got.When = ""
		if got != w {
			t.Errorf("%s: line %d\n got %+v\nwant %+v", stage, i, got, w)
		}
	}
}

// TestStatementEmpty: a wallet without entries says so in words, without
// an empty table.
func TestStatementEmpty(t *testing.T) {
	t.Parallel()
	site, _, _ := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	goTo(t, ctx, "/activity/statement", "statement")
	waitFor(t, ctx, shown("statement-empty"))
	if eval[bool](t, ctx, shown("statement-table")) || eval[bool](t, ctx, shown("statement-more")) {
		t.Error("an empty statement shows its table or Load more")
	}
	if got := text(t, ctx, "statement-empty"); !strings.HasPrefix(got, "Nothing here yet.") {
		t.Errorf("empty statement reads %q", got)
	}
}

// TestStatementDownload: the month picker offers this month first; the
// download reads the month's entries page by page (createdAfter its first
// instant, createdBefore the next month's) and saves statement-YYYY-MM.csv
// through a Blob URL: one row per ledger transaction, oldest first,
// amounts in major units with a dot, the balances after each, the ids, and
// a text cell that would run as a formula made harmless.
func TestStatementDownload(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	book := newStatementBook()
	m.set(func(m *fakeMoney) {
		m.entries = book.entries
		m.entryCap = 20 // pages end inside ledger transactions
	})
	ctx := newTab(t)
	dir := t.TempDir()
	if err := browsertest.AllowDownloads(ctx, dir); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, site)
	goTo(t, ctx, "/activity/statement", "statement")
	month := book.month.Format("2006-01")
	waitFor(t, ctx, `document.getElementById("statement-month").value === "`+month+`"`)
	if got := eval[string](t, ctx, `document.getElementById("statement-month").selectedOptions[0].textContent`); got != book.month.Format("January 2006") {
		t.Errorf("the month reads %q", got)
	}
	clickID(t, ctx, "statement-download")
	name := "statement-" + month + ".csv"
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := browsertest.Downloaded(wait, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("statement-download-status").textContent === "Downloaded `+name+`: 51 lines for `+book.month.Format("January 2006")+`."`)

	calls := m.calls(api, "GET", "/api/internal-accounts/"+fakeAccount+"/entries")
	var asked []string
	for _, c := range calls {
		q, _ := url.ParseQuery(c.query)
		if q.Get("createdAfter") == "" {
			continue // the view's own
		}
		if q.Get("createdAfter") != book.month.Format(time.RFC3339) || q.Get("createdBefore") != book.next.Format(time.RFC3339) || q.Get("limit") != "100" {
			t.Errorf("the download asked %s", c.query)
		}
		asked = append(asked, q.Get("cursor"))
	}
	// 54 entries in the month, 20 to a page.
	if !slices.Equal(asked, []string{"", "at:20", "at:40"}) {
		t.Errorf("the download asked for the pages %q", asked)
	}

	if !bytes.HasPrefix(raw, []byte("\ufeff")) || !bytes.Contains(raw, []byte("\r\n")) {
		t.Errorf("the file does not start with a BOM or its lines do not end with CRLF: %q", raw[:min(len(raw), 80)])
	}
	if bytes.Contains(raw, []byte("'-")) {
		t.Error("a negative amount was written as text")
	}
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\ufeff")))).ReadAll()
	if err != nil {
		t.Fatalf("the file is not CSV: %v\n%s", err, raw)
	}
	header := []string{"Date (UTC)", "Description", "Amount", "Currency", "Available after", "On hold after", "Ledger transaction", "Payment"}
	if !slices.Equal(records[0], header) {
		t.Errorf("header %q", records[0])
	}
	rows := records[1:]
	if len(rows) != 51 {
		t.Fatalf("%d rows, want 51 (the month's ledger transactions)", len(rows))
	}
	at := func(hours int) string {
		return book.month.Add(time.Duration(hours) * time.Hour).Format("2006-01-02T15:04:05.000Z")
	}
	want := map[int][]string{
		0:  {at(1), "Payment on its way (held)", "0.00", "USD", "975.00", "25.00", book.hold1, book.sent},
		1:  {at(2), "Payment sent", "-25.00", "USD", "975.00", "0.00", book.post, book.sent},
		2:  {at(3), "Payment on its way (held)", "0.00", "USD", "935.00", "40.00", book.hold2, book.fails},
		3:  {at(4), "Payment failed — money back", "0.00", "USD", "975.00", "0.00", book.void, book.fails},
		4:  {at(5), "Added funds", "1.00", "USD", "976.00", "0.00", rows[4][6], "Transaction:0199b000-0000-7000-8000-000000000100"},
		50: {at(60), "'" + formula, "-0.50", "USD", "1020.50", "0.00", book.adjustment, ""},
	}
	for i, w := range want {
		if !slices.Equal(rows[i], w) {
			t.Errorf("row %d\n got %q\nwant %q", i, rows[i], w)
		}
	}
}

// TestStatementPureParts: csv.js's fields (quoting, formula injection,
// numbers), format.js's decimalAmount, and views/statement.js's months and
// lines, in the browser that runs them.
func TestStatementPureParts(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	type result struct {
		Fields  []string
		Amounts []string
		Bounds  []any
		Months  []struct{ Value, Label string }
		Lines   []struct {
			ID, Payment           string
			Amount, Held, Entries int64
		}
	}
	var got result
	inModules(t, ctx, nil, `
  const c = await import("/js/csv.js");
  const s = await import("/js/views/statement.js");
  const fields = [
    c.csvField("plain"), c.csvField("a,b"), c.csvField('say "hi"'), c.csvField("two\nlines"), c.csvField(" padded"),
    c.csvField("=1+2"), c.csvField("+1"), c.csvField("-1"), c.csvField("@SUM(A1)"), c.csvField("\t=1"), c.csvField("\r=1"),
    c.csvField('=HYPERLINK("x","y")'), c.csvField("-25.00", {numeric: true}), c.csvField("-2e5", {numeric: true}),
    c.csvField("=1", {numeric: true}), c.csvField(null), c.csvField(12),
    c.toCSV(["a", "=b"], [["1", "-1.50"]], {numeric: [1]}),
  ];
  const amounts = [
    f.decimalAmount(-2500, "USD"), f.decimalAmount(5, "USD"), f.decimalAmount(-5, "USD"), f.decimalAmount(0, "USD"),
    f.decimalAmount(1500, "XOF"), f.decimalAmount("150000", "BTC"), f.decimalAmount(123456789012345678n, {code: "USD", decimals: 2}),
    f.decimalAmount(1.5, "USD"), f.decimalAmount(100, "usd!"),
  ];
  const bounds = [s.monthBounds("2026-12"), s.monthBounds("2024-02"), s.monthBounds("2026-13"), s.monthBounds("12-2026")];
  const months = s.monthsBefore(new Date(Date.UTC(2026, 0, 31, 23, 59)), 3).map((m) => ({Value: m.value, Label: m.label}));
  const lines = s.addEntries(s.addEntries([], [
    {ledgerTransactionId: "L3", kind: "FUNDING", side: "AVAILABLE", amount: 100, availableAfter: 1100, heldAfter: 0},
    {ledgerTransactionId: "L2", kind: "HOLD", side: "HELD", amount: 300, availableAfter: 1000, heldAfter: 300},
  ]), [
    {ledgerTransactionId: "L2", kind: "HOLD", side: "AVAILABLE", amount: -300, availableAfter: 1000, heldAfter: 300},
    {ledgerTransactionId: "L1", kind: "POST", side: "HELD", amount: -200, availableAfter: 1300, heldAfter: 0, transactionId: "Transaction:x"},
  ]).map((l) => ({ID: l.id, Amount: l.amount, Held: l.held, Entries: l.entries, Payment: l.transactionId}));
  return {Fields: fields, Amounts: amounts, Bounds: bounds, Months: months, Lines: lines};`, &got)

	wantFields := []string{
		"plain", `"a,b"`, `"say ""hi"""`, "\"two\nlines\"", `" padded"`,
		"'=1+2", "'+1", "'-1", "'@SUM(A1)", "'\t=1", "\"'\r=1\"",
		`"'=HYPERLINK(""x"",""y"")"`, "-25.00", "'-2e5",
		"'=1", "", "12",
		"\ufeffa,'=b\r\n1,-1.50\r\n",
	}
	if !slices.Equal(got.Fields, wantFields) {
		for i := range max(len(got.Fields), len(wantFields)) {
			if i >= len(got.Fields) || i >= len(wantFields) || got.Fields[i] != wantFields[i] {
				t.Errorf("field %d: got %q, want %q", i, at(got.Fields, i), at(wantFields, i))
			}
		}
	}
	wantAmounts := []string{"-25.00", "0.05", "-0.05", "0.00", "1500", "0.00150000", "1234567890123456.78", "", ""}
	if !slices.Equal(got.Amounts, wantAmounts) {
		t.Errorf("decimalAmount: got %q, want %q", got.Amounts, wantAmounts)
	}
	wantBounds := `[{"createdAfter":"2026-12-01T00:00:00Z","createdBefore":"2027-01-01T00:00:00Z"},` +
		`{"createdAfter":"2024-02-01T00:00:00Z","createdBefore":"2024-03-01T00:00:00Z"},null,null]`
	if b := jsonOf(t, got.Bounds); b != wantBounds {
		t.Errorf("monthBounds: %s", b)
	}
	if m := jsonOf(t, got.Months); m != `[{"Value":"2026-01","Label":"January 2026"},{"Value":"2025-12","Label":"December 2025"},{"Value":"2025-11","Label":"November 2025"}]` {
		t.Errorf("monthsBefore: %s", m)
	}
	if l := jsonOf(t, got.Lines); l != `[{"ID":"L3","Payment":"","Amount":100,"Held":0,"Entries":1},`+
		`{"ID":"L2","Payment":"","Amount":0,"Held":300,"Entries":2},{"ID":"L1","Payment":"Transaction:x","Amount":-200,"Held":-200,"Entries":1}]` {
		t.Errorf("addEntries: %s", l)
	}
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return "<none>"
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
