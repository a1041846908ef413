package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The money pages (balance, sending, transactions) against a fake of the
// BFF's money routes, next to page_test.go's fake of the rest.

type fakeCurrency struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Decimals int    `json:"decimals"`
}

var fakeCurrencies = map[string]fakeCurrency{
	"USD": {"USD", "United States Dollar", "$", 2},
	"MXN": {"MXN", "Mexican Peso", "$", 2},
	"XOF": {"XOF", "West African CFA franc", "CFA", 0},
}

// fakeRates are US dollars per major unit of each currency.
var fakeRates = map[string]float64{"USD": 1, "MXN": 0.0585, "XOF": 0.00165}

const (
	fakeFee      = 125 // cents, in every quote
	mxnAccount   = "ExternalAccount:0199a000-0000-7000-8000-0000000000a1"
	xofAccount   = "ExternalAccount:0199a000-0000-7000-8000-0000000000a2"
	usdPending   = "ExternalAccount:0199a000-0000-7000-8000-0000000000a3"
	usdReview    = "ExternalAccount:0199a000-0000-7000-8000-0000000000a4"
	moneyInitial = 123456 // the wallet's balance at the start, in cents
)

var moneyAccounts = []string{
	`{"id":"` + mxnAccount + `","status":"ACTIVE","currency":"MXN","accountInfo":{"accountType":"MXN_ACCOUNT","clabeNumber":"002010077777777771","paymentRails":["SPEI"],"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Ana Diaz"}}}`,
	`{"id":"` + xofAccount + `","status":"ACTIVE","currency":"XOF","accountInfo":{"accountType":"XOF_ACCOUNT","phoneNumber":"+221771234567","provider":"ORANGE","paymentRails":["MOBILE_MONEY"],"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Awa Ndiaye"}}}`,
	`{"id":"` + usdPending + `","status":"PENDING","currency":"USD","accountInfo":{"accountType":"USD_ACCOUNT","accountNumber":"12345678","routingNumber":"021000021","paymentRails":["ACH"],"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Pat Pending"}}}`,
	`{"id":"` + usdReview + `","status":"UNDER_REVIEW","currency":"USD","accountInfo":{"accountType":"USD_ACCOUNT","accountNumber":"87654321","routingNumber":"021000021","paymentRails":["ACH"],"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Rae Review"}}}`,
}

// fakeTx is a transaction of the fake. A PROCESSING one reaches outcome
// after `after` more reads of it by id.
type fakeTx struct {
	id, status, typ, dest, description, reason, rail, quoteID string
	sent, received                                            int64
	fees                                                      *int64
	sentCur, recvCur                                          string
	rate                                                      float64
	created, settled, confirmed                               string
	outcome, outcomeReason                                    string
	keepHeld                                                  bool // a failure whose money stays on hold
	after                                                     int
}

func (x *fakeTx) json() map[string]any {
	out := map[string]any{
		"id": x.id, "status": x.status, "type": x.typ,
		"destination":                map[string]any{"destinationType": "ACCOUNT", "accountId": x.dest, "currency": x.recvCur},
		"customerId":                 "Customer:0199a000-0000-7000-8000-0000000000cc",
		"platformCustomerId":         "ada@example.com",
		"receivedAmount":             map[string]any{"amount": x.received, "currency": fakeCurrencies[x.recvCur]},
		"createdAt":                  x.created,
		"updatedAt":                  x.created,
		"reconciliationInstructions": map[string]any{"reference": "PW" + strings.ToUpper(x.id[len(x.id)-12:])},
	}
	if x.typ == "OUTGOING" {
		out["source"] = map[string]any{"sourceType": "ACCOUNT", "accountId": fakeAccount, "currency": x.sentCur}
		out["sentAmount"] = map[string]any{"amount": x.sent, "currency": fakeCurrencies[x.sentCur]}
		out["exchangeRate"] = x.rate
		out["quoteId"] = x.quoteID
		out["paymentRail"] = x.rail
	}
	if x.fees != nil {
		out["fees"] = *x.fees
	}
	for k, v := range map[string]string{"description": x.description, "failureReason": x.reason, "settledAt": x.settled, "receiptDeliveryConfirmedAt": x.confirmed} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// fakeMoney answers the money routes: quotes, their execution, the
// transactions, sandbox funding, exchange rates; and puts its balance into
// GET /api/me.
type fakeMoney struct {
	mu         sync.Mutex
	api        *fakeAPI
	production bool
	available  int64
	total      int64
	quoteTTL   time.Duration
	quotes     map[string]map[string]any
	txs        []*fakeTx // newest first
	n          int
	outcome    string // what an executed payment becomes: COMPLETED, FAILED, REJECTED
	reason     string // its failureReason
	keepHeld   bool   // a failure keeps the money on hold
	after      int    // reads while PROCESSING
	tamper     func(u map[string]any) string
	executes   []reply // queued answers to execute; the fake's own when empty
	delay      time.Duration
	entries    []map[string]any // the wallet's ledger entries, newest first (statement_test.go)
	entryCap   int              // the largest page of entries the fake gives; 100 when 0
	perPayment *int64           // the person's own limit per payment (GET …/limits); none when nil
}

func (m *fakeMoney) set(change func(*fakeMoney)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	change(m)
}

func (m *fakeMoney) nextID(kind string) string {
	m.n++
	return fmt.Sprintf("%s:0199a000-0000-7000-8000-%012d", kind, m.n)
}

func (m *fakeMoney) account() map[string]any {
	usd := fakeCurrencies["USD"]
	return map[string]any{"id": fakeAccount, "type": "EMBEDDED_WALLET", "status": "ACTIVE",
		"balance":      map[string]any{"amount": m.available, "currency": usd},
		"totalBalance": map[string]any{"amount": m.total, "currency": usd}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, message string, details any) {
	body := map[string]any{"status": status, "code": code, "message": message}
	if details != nil {
		body["details"] = details
	}
	writeJSON(w, status, body)
}

// startMoneySite is startSite with the money routes answered by a fakeMoney.
func startMoneySite(t *testing.T) (string, *fakeAPI, *fakeMoney) {
	t.Helper()
	api := &fakeAPI{external: append([]string(nil), moneyAccounts...), events: &fakeEvents{}}
	m := &fakeMoney{api: api, available: moneyInitial, total: moneyInitial, quoteTTL: time.Minute,
		quotes: map[string]map[string]any{}, outcome: "COMPLETED", after: 2}
	files := siteFiles()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		switch {
		case r.URL.Path == "/api/events":
			api.events.ServeHTTP(w, r)
		case r.URL.Path == "/api/me" || r.URL.Path == "/api/config":
			m.patch(w, r)
		case m.handles(r.URL.Path):
			body, _ := io.ReadAll(r.Body)
			api.set(func(f *fakeAPI) {
				f.calls = append(f.calls, apiCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, body: string(body), header: r.Header.Clone()})
			})
			m.serve(w, r, body)
		case strings.HasPrefix(r.URL.Path, "/api/"):
			api.ServeHTTP(w, r)
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), api, m
}

func (m *fakeMoney) handles(path string) bool {
	for _, p := range []string{"/api/quotes", "/api/transactions", "/api/sandbox/fund", "/api/exchange-rates", "/api/internal-accounts"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// patch lets the page_test.go fake answer, then puts the fake's balance
// into /api/me and its mode into /api/config.
func (m *fakeMoney) patch(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	m.api.ServeHTTP(rec, r)
	var body map[string]any
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	m.mu.Lock()
	if r.URL.Path == "/api/me" {
		body["internalAccount"] = m.account()
	} else if m.production {
		body["mode"] = "production"
	}
	m.mu.Unlock()
	writeJSON(w, 200, body)
}

func (m *fakeMoney) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	var accounts []map[string]any
	m.api.set(func(f *fakeAPI) {
		for _, s := range f.external {
			var a map[string]any
			_ = json.Unmarshal([]byte(s), &a)
			accounts = append(accounts, a)
		}
	})
	m.mu.Lock()
	delay := m.delay
	m.mu.Unlock()
	if delay > 0 && r.Method == "POST" {
		time.Sleep(delay)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	path := r.URL.Path
	switch {
	case r.Method == "GET" && path == "/api/exchange-rates":
		code := r.URL.Query().Get("destinationCurrency")
		c, ok := fakeCurrencies[code]
		if !ok {
			fail(w, 400, "INVALID_INPUT", "no rates", nil)
			return
		}
		writeJSON(w, 200, map[string]any{"data": []any{map[string]any{
			"sourceCurrency": fakeCurrencies["USD"], "destinationCurrency": c, "destinationPaymentRail": "SPEI",
			"minSendingAmount": 100, "maxSendingAmount": 10000000, "sendingAmount": 10000, "receivingAmount": 1,
			"exchangeRate": fakeRates[code], "fees": map[string]any{"fixed": fakeFee, "total": fakeFee}, "updatedAt": "2026-11-01T00:00:00Z"}}})
	case r.Method == "POST" && path == "/api/quotes":
		m.createQuote(w, body, accounts)
	case r.Method == "POST" && strings.HasPrefix(path, "/api/quotes/") && strings.HasSuffix(path, "/execute"):
		m.execute(w, r, strings.TrimSuffix(strings.TrimPrefix(path, "/api/quotes/"), "/execute"))
	case r.Method == "GET" && path == "/api/transactions":
		m.list(w, r)
	case r.Method == "GET" && path == "/api/internal-accounts/"+fakeAccount+"/entries":
		m.listEntries(w, r)
	case r.Method == "GET" && path == "/api/internal-accounts/"+fakeAccount+"/limits":
		writeJSON(w, 200, map[string]any{"accountId": fakeAccount, "currency": "USD", "perPayment": m.perPayment, "daily": nil,
			"newRecipientCoolingOffHours": 0, "pending": nil, "updatedAt": "2026-11-01T00:00:00Z"})
	case r.Method == "GET" && strings.HasPrefix(path, "/api/transactions/"):
		x := m.tx(strings.TrimPrefix(path, "/api/transactions/"))
		if x == nil {
			fail(w, 404, "TRANSACTION_NOT_FOUND", "no transaction with this id", nil)
			return
		}
		m.advance(x)
		writeJSON(w, 200, x.json())
	case r.Method == "POST" && strings.HasPrefix(path, "/api/transactions/") && strings.HasSuffix(path, "/confirm"):
		x := m.tx(strings.TrimSuffix(strings.TrimPrefix(path, "/api/transactions/"), "/confirm"))
		if x == nil {
			fail(w, 404, "TRANSACTION_NOT_FOUND", "no transaction with this id", nil)
			return
		}
		x.confirmed = time.Now().UTC().Format(time.RFC3339)
		writeJSON(w, 200, x.json())
	case r.Method == "POST" && path == "/api/sandbox/fund":
		if m.production {
			fail(w, 403, "FORBIDDEN", "sandbox endpoints are only available in sandbox mode", nil)
			return
		}
		var in struct{ Amount int64 }
		if err := json.Unmarshal(body, &in); err != nil || in.Amount < 1 || in.Amount > 100000000000 {
			fail(w, 400, "INVALID_INPUT", "invalid input", map[string]any{"errors": []any{map[string]any{"field": "amount", "message": "must be an integer from 1 to 100000000000"}}})
			return
		}
		m.available += in.Amount
		m.total += in.Amount
		now := time.Now().UTC().Format(time.RFC3339)
		m.txs = append([]*fakeTx{{id: m.nextID("Transaction"), status: "COMPLETED", typ: "INCOMING", dest: fakeAccount, description: "Sandbox funding",
			received: in.Amount, recvCur: "USD", created: now, settled: now}}, m.txs...)
		writeJSON(w, 200, m.account())
	default:
		fail(w, 404, "NOT_FOUND", "not found", nil)
	}
}

func (m *fakeMoney) tx(id string) *fakeTx {
	for _, x := range m.txs {
		if x.id == id {
			return x
		}
	}
	return nil
}

// advance moves a PROCESSING transaction on, one read at a time.
func (m *fakeMoney) advance(x *fakeTx) {
	if x.status != "PROCESSING" {
		return
	}
	if x.after > 0 {
		x.after--
		return
	}
	x.status, x.reason = x.outcome, x.outcomeReason
	switch {
	case x.outcome == "COMPLETED":
		m.total -= x.sent
		x.settled = time.Now().UTC().Format(time.RFC3339)
	case !x.keepHeld:
		m.available += x.sent
	}
}

func (m *fakeMoney) createQuote(w http.ResponseWriter, body []byte, accounts []map[string]any) {
	var in struct {
		Source      any
		Destination struct {
			DestinationType, AccountID string
		}
		LockedCurrencySide   string
		LockedCurrencyAmount int64
		Description          string
	}
	if err := json.Unmarshal(body, &in); err != nil || in.Source != nil || in.Destination.DestinationType != "ACCOUNT" {
		fail(w, 400, "INVALID_REQUEST_FORMAT", "bad body", nil)
		return
	}
	var dest map[string]any
	for _, a := range accounts {
		if a["id"] == in.Destination.AccountID {
			dest = a
		}
	}
	if dest == nil || dest["status"] != "ACTIVE" {
		fail(w, 400, "INVALID_INPUT", "invalid input", map[string]any{"errors": []any{map[string]any{"field": "destination.accountId", "message": "must be an ACTIVE external account"}}})
		return
	}
	code := dest["currency"].(string)
	to, from := fakeCurrencies[code], fakeCurrencies["USD"]
	rate := fakeRates[code] // USD per unit of the destination currency
	scale := math.Pow10(to.Decimals) / math.Pow10(from.Decimals)
	var send, receive int64
	switch in.LockedCurrencySide {
	case "SENDING":
		send = in.LockedCurrencyAmount
		receive = int64(math.Floor(float64(send-fakeFee) / rate * scale))
	case "RECEIVING":
		receive = in.LockedCurrencyAmount
		send = int64(math.Ceil(float64(receive)*rate/scale)) + fakeFee
	default:
		fail(w, 400, "INVALID_INPUT", "invalid input", map[string]any{"errors": []any{map[string]any{"field": "lockedCurrencySide", "message": "must be SENDING or RECEIVING"}}})
		return
	}
	if send < 100 || send > 10000000 {
		fail(w, 400, "AMOUNT_OUT_OF_RANGE", "lockedCurrencyAmount: out of range", map[string]any{"field": "lockedCurrencyAmount", "minSendingAmount": 100, "maxSendingAmount": 10000000})
		return
	}
	id, txID := m.nextID("Quote"), m.nextID("Transaction")
	now := time.Now().UTC()
	rail := dest["accountInfo"].(map[string]any)["paymentRails"].([]any)[0].(string)
	u := map[string]any{"quoteId": id, "transactionId": txID, "destinationAccountId": in.Destination.AccountID,
		"sendingCurrency": "USD", "totalSendingAmount": send, "receivingCurrency": code, "totalReceivingAmount": receive,
		"expiresAt": now.Add(m.quoteTTL).Format(time.RFC3339)}
	payload, _ := json.Marshal(map[string]any{"organizationId": fakeAccount, "type": "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
		"timestampMs": strconv.FormatInt(now.UnixMilli(), 10),
		"parameters":  map[string]any{"signWith": fakeAccount, "type": "TRANSACTION_TYPE_PAYMENT", "unsignedTransaction": u}})
	if m.tamper != nil {
		if s := m.tamper(u); s != "" {
			payload = []byte(s)
		} else {
			payload, _ = json.Marshal(map[string]any{"parameters": map[string]any{"unsignedTransaction": u}})
		}
	}
	// Whole seconds, as the service writes them: the page counts down from
	// expiresAt − createdAt.
	q := map[string]any{"id": id, "status": "PENDING", "createdAt": now.Format(time.RFC3339), "expiresAt": now.Add(m.quoteTTL).Format(time.RFC3339),
		"source":          map[string]any{"sourceType": "ACCOUNT", "accountId": fakeAccount, "customerId": "Customer:0199a000-0000-7000-8000-0000000000cc"},
		"destination":     map[string]any{"destinationType": "ACCOUNT", "accountId": in.Destination.AccountID, "paymentRail": rail},
		"sendingCurrency": from, "receivingCurrency": to, "totalSendingAmount": send, "totalReceivingAmount": receive,
		"exchangeRate": rate, "feesIncluded": fakeFee, "transactionId": txID,
		"paymentInstructions": []any{map[string]any{"accountOrWalletInfo": map[string]any{"accountType": "EMBEDDED_WALLET", "payloadToSign": string(payload)}}}}
	if in.Description != "" {
		q["description"] = in.Description
	}
	m.quotes[id] = q
	fees := int64(math.Round(fakeFee / rate * scale))
	m.txs = append([]*fakeTx{{id: txID, status: "PENDING", typ: "OUTGOING", dest: in.Destination.AccountID, description: in.Description,
		sent: send, received: receive, fees: &fees, sentCur: "USD", recvCur: code, rate: rate, rail: rail, quoteID: id,
		created: now.Format(time.RFC3339)}}, m.txs...)
	writeJSON(w, 201, q)
}

func (m *fakeMoney) execute(w http.ResponseWriter, r *http.Request, id string) {
	if len(m.executes) > 0 {
		rp := m.executes[0]
		m.executes = m.executes[1:]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		_, _ = io.WriteString(w, rp.body)
		return
	}
	q := m.quotes[id]
	if q == nil {
		fail(w, 404, "QUOTE_NOT_FOUND", "no quote with this id", nil)
		return
	}
	payload := q["paymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["payloadToSign"].(string)
	if r.Header.Get("Service-Wallet-Signature") != "stamp-of-"+payload {
		fail(w, 401, "WALLET_SIGNATURE_INVALID", "the stamp does not verify over this quote's payloadToSign", nil)
		return
	}
	x := m.tx(q["transactionId"].(string))
	if x.status != "PENDING" {
		fail(w, 409, "INVALID_STATE_TRANSITION", "the quote is "+x.status, map[string]any{"quoteStatus": x.status})
		return
	}
	if expires, _ := time.Parse(time.RFC3339, q["expiresAt"].(string)); time.Now().After(expires) {
		x.status, x.reason = "EXPIRED", "QUOTE_EXPIRED"
		fail(w, 409, "INVALID_STATE_TRANSITION", "the quote expired", map[string]any{"quoteStatus": "EXPIRED"})
		return
	}
	if m.available < x.sent {
		fail(w, 400, "INSUFFICIENT_BALANCE", "the available balance does not cover totalSendingAmount", map[string]any{"available": m.available, "required": x.sent})
		return
	}
	m.available -= x.sent
	x.status, x.outcome, x.outcomeReason, x.keepHeld, x.after = "PROCESSING", m.outcome, m.reason, m.keepHeld, m.after
	out := map[string]any{}
	for k, v := range q {
		out[k] = v
	}
	out["status"] = "PROCESSING"
	writeJSON(w, 200, out)
}

func (m *fakeMoney) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var all []*fakeTx
	for _, x := range m.txs {
		if (q.Get("status") == "" || q.Get("status") == x.status) && (q.Get("type") == "" || q.Get("type") == x.typ) {
			all = append(all, x)
		}
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 20
	}
	from, _ := strconv.Atoi(strings.TrimPrefix(q.Get("cursor"), "at:"))
	from = min(from, len(all))
	to := min(from+limit, len(all))
	data := []any{}
	for _, x := range all[from:to] {
		data = append(data, x.json())
	}
	out := map[string]any{"data": data, "hasMore": to < len(all), "totalCount": len(all)}
	if to < len(all) {
		out["nextCursor"] = "at:" + strconv.Itoa(to)
	}
	writeJSON(w, 200, out)
}

// calls are the requests made with method to path, or under it when path
// ends with a slash.
func (m *fakeMoney) calls(api *fakeAPI, method, path string) []apiCall {
	var out []apiCall
	for _, c := range api.requests("") {
		if c.method == method && (c.path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(c.path, path)) {
			out = append(out, c)
		}
	}
	return out
}

func text(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	return strings.TrimSpace(eval[string](t, ctx, `(document.getElementById("`+id+`") || {textContent: ""}).textContent`))
}

// typeInto replaces what the input holds with value, as typing would.
func typeInto(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	v, _ := json.Marshal(value)
	eval[chromedp.Void](t, ctx, `(() => { const el = document.getElementById("`+id+`"); el.value = `+string(v)+`;
  el.dispatchEvent(new Event("input", {bubbles: true})); })()`)
}

func clickID(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	do(t, ctx, chromedp.WaitEnabled(chromedp.ID(id)), chromedp.Click(chromedp.ID(id)))
}

// heldRow: Home's balance card has its "On hold" line (the card may be
// in a view not on screen).
const heldRow = `!document.getElementById("on-hold-row").hidden`

// moneyShown: the money sections are drawn (each in its own view).
const moneyShown = `!document.getElementById("balance").hidden && !document.getElementById("send").hidden && !document.getElementById("transactions").hidden`

// getQuote fills the Send form and asks for a quote; it returns when the
// quote is shown.
func getQuote(t *testing.T, ctx context.Context, account, side, amount, note string) {
	t.Helper()
	goTo(t, ctx, "/send", "send")
	if eval[bool](t, ctx, shown("send-change")) {
		clickID(t, ctx, "send-change")
	}
	waitFor(t, ctx, `[...document.getElementById("send-account").options].some((o) => o.value === "`+account+`" && !o.disabled)`)
	choose(t, ctx, "#send-account", account)
	clickID(t, ctx, "send-next")
	eval[chromedp.Void](t, ctx, `document.getElementById("send-side-`+strings.ToLower(side)+`").click()`)
	typeInto(t, ctx, "send-amount", amount)
	typeInto(t, ctx, "send-note", note)
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, shown("quote"))
}

// openRow clicks the row of this transaction in the list (found at the
// moment of the click: the list is drawn again as payments move).
func openRow(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if !eval[bool](t, ctx, `(() => { const b = document.querySelector('#transactions-list > li[data-id="`+id+`"] a');
  if (!b) return false; b.click(); return true; })()`) {
		t.Fatalf("no row for %s in the list", id)
	}
}

var (
	uuidV4       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	minuteLeft   = regexp.MustCompile(`^(00:5[0-9]|01:00)$`)
	onlySecsLeft = regexp.MustCompile(`^00:[0-5][0-9]$`)
)

// TestMoneyQuoteAndSend: the Send section offers the ACTIVE accounts only;
// a quote shows what is sent, the fees, the rate both ways, what arrives,
// the rail and a countdown; Send stamps exactly the quote's payloadToSign
// with this tab's key and executes it once, with the stamp and a fresh
// Idempotency-Key; the transaction view follows the payment to COMPLETED,
// the balance shows the money on hold meanwhile, and the receipt is
// confirmed once.
func TestMoneyQuoteAndSend(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	waitFor(t, ctx, moneyShown)
	if got := text(t, ctx, "account-balance"); got != "$1,234.56 USD" {
		t.Errorf("available %q", got)
	}
	if eval[bool](t, ctx, heldRow) {
		t.Error("on hold shown with nothing on hold")
	}

	// Every account is listed; only the ACTIVE ones can be chosen.
	waitFor(t, ctx, `document.getElementById("send-account").options.length === 5`)
	var options []struct {
		Value, Text string
		Disabled    bool
	}
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `JSON.stringify([...document.getElementById("send-account").options].map((o) => ({value: o.value, text: o.text, disabled: o.disabled})))`)), &options); err != nil {
		t.Fatal(err)
	}
	for _, o := range options {
		switch o.Value {
		case mxnAccount, xofAccount:
			if o.Disabled {
				t.Errorf("active account %q disabled", o.Text)
			}
		case usdPending, usdReview:
			if !o.Disabled || !strings.Contains(o.Text, map[string]string{usdPending: "pending", usdReview: "under review"}[o.Value]) {
				t.Errorf("account %q (disabled %v): want it disabled with its status", o.Text, o.Disabled)
			}
		}
	}
	if !strings.Contains(text(t, ctx, "send-account-hint"), "not active") {
		t.Errorf("hint %q", text(t, ctx, "send-account-hint"))
	}

	getQuote(t, ctx, mxnAccount, "SENDING", "100", "Rent, March")
	quotes := m.calls(api, "POST", "/api/quotes")
	if len(quotes) != 1 {
		t.Fatalf("%d POST /api/quotes", len(quotes))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(quotes[0].body), &body); err != nil {
		t.Fatal(err)
	}
	want := `{"description":"Rent, March","destination":{"accountId":"` + mxnAccount + `","destinationType":"ACCOUNT"},"lockedCurrencyAmount":10000,"lockedCurrencySide":"SENDING"}`
	if got, _ := json.Marshal(body); string(got) != want {
		t.Errorf("quote body %s\nwant %s", got, want)
	}
	for id, want := range map[string]string{
		"quote-send":         "$100.00",
		"quote-fees":         "$1.25",
		"quote-receive":      "MX$1,688.03",
		"quote-rate":         "1\u00a0USD = 17.094\u00a0MXN",
		"quote-rate-inverse": "(1\u00a0MXN = 0.0585\u00a0USD)",
		"quote-rail":         "SPEI",
		"quote-note":         "Rent, March",
		"quote-to":           "Ana Diaz, Mexican bank account, CLABE •••• 7771",
	} {
		if got := text(t, ctx, id); got != want {
			t.Errorf("#%s %q, want %q", id, got, want)
		}
	}
	if got := text(t, ctx, "quote-expiry"); !minuteLeft.MatchString(got) {
		t.Errorf("countdown %q, want about a minute", got)
	}
	first := text(t, ctx, "quote-expiry")
	waitFor(t, ctx, `document.getElementById("quote-expiry").textContent !== "`+first+`"`) // it runs
	if eval[bool](t, ctx, `document.getElementById("send-submit").disabled`) {
		t.Fatalf("Send disabled: %s", text(t, ctx, "send-disabled-reason"))
	}

	// Two clicks in a row send once.
	eval[chromedp.Void](t, ctx, `(() => { const b = document.getElementById("send-submit"); b.click(); b.click(); })()`)
	waitFor(t, ctx, shown("transaction"))
	execs := m.calls(api, "POST", "/api/quotes/")
	if len(execs) != 1 {
		t.Fatalf("%d execute calls, want 1", len(execs))
	}
	qid := eval[string](t, ctx, `document.getElementById("quote-id").textContent`)
	var payload string
	m.set(func(m *fakeMoney) {
		payload = m.quotes[qid]["paymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["payloadToSign"].(string)
	})
	if execs[0].path != "/api/quotes/"+qid+"/execute" {
		t.Errorf("execute path %s", execs[0].path)
	}
	if got := execs[0].header.Get("Service-Wallet-Signature"); got != "stamp-of-"+payload {
		t.Errorf("Service-Wallet-Signature %q, want the stamp of the quote's payload", got)
	}
	if got := execs[0].header.Get("Idempotency-Key"); !uuidV4.MatchString(got) {
		t.Errorf("Idempotency-Key %q, want a random UUID", got)
	}
	if !called(walletCalls(t, ctx), "stamp", "h1", payload) {
		t.Errorf("the payload was not stamped with this tab's key h1: %v", walletCalls(t, ctx))
	}

	// On its way: the money is on hold, then the payment completes.
	waitFor(t, ctx, heldRow+` && document.getElementById("account-on-hold").textContent === "$100.00 USD"`)
	if got := text(t, ctx, "account-balance"); got != "$1,134.56 USD" {
		t.Errorf("available while on its way %q", got)
	}
	waitFor(t, ctx, `document.getElementById("transaction").dataset.status === "COMPLETED"`)
	waitFor(t, ctx, shown("tx-receipt"))
	if got := text(t, ctx, "tx-receipt"); !strings.HasPrefix(got, "Receipt delivered ") {
		t.Errorf("receipt line %q", got)
	}
	waitFor(t, ctx, `!(`+heldRow+`) && document.getElementById("account-balance").textContent === "$1,134.56 USD"`)
	if got := text(t, ctx, "tx-status-text"); got != "The payment was delivered." {
		t.Errorf("status %q", got)
	}
	facts := eval[string](t, ctx, `JSON.stringify(Object.fromEntries([...document.querySelectorAll("#tx-facts > div")].map((d) => [d.dataset.fact, d.querySelector("dd").textContent])))`)
	var f map[string]string
	_ = json.Unmarshal([]byte(facts), &f)
	for k, want := range map[string]string{"sent": "$100.00", "received": "MX$1,688.03", "fees": "MX$21.37", "rail": "SPEI", "note": "Rent, March"} {
		if f[k] != want {
			t.Errorf("transaction %s %q, want %q", k, f[k], want)
		}
	}
	if !strings.HasPrefix(f["reference"], "PW") || f["settled"] == "" {
		t.Errorf("reference %q, settled %q", f["reference"], f["settled"])
	}
	// Delivered: "They received", as the receipt says, not "They receive".
	if got := eval[string](t, ctx, `document.querySelector('#tx-facts > div[data-fact="received"] dt').textContent`); got != "They received" {
		t.Errorf("the delivered payment's received amount is labelled %q", got)
	}
	if n := len(m.calls(api, "POST", "/api/transactions/")); n != 1 {
		t.Errorf("%d receipt confirmations, want 1", n)
	}

	// The list shows the payment (the quote's transaction, now sent) first.
	waitFor(t, ctx, `(() => { const li = document.querySelector("#transactions-list > li"); return !!li && li.dataset.status === "COMPLETED"; })()`)
	row := text(t, ctx, "transactions-list")
	for _, want := range []string{"Sent", "to Ana Diaz", "-$100.00", "Completed"} {
		if !strings.Contains(row, want) {
			t.Errorf("list %q lacks %q", row, want)
		}
	}
	// Opened again, a confirmed receipt is not confirmed twice.
	clickID(t, ctx, "tx-close")
	openRow(t, ctx, eval[string](t, ctx, `document.querySelector("#transactions-list > li").dataset.id`))
	waitFor(t, ctx, shown("tx-receipt"))
	time.Sleep(300 * time.Millisecond)
	if n := len(m.calls(api, "POST", "/api/transactions/")); n != 1 {
		t.Errorf("%d receipt confirmations after reopening, want 1", n)
	}
}

// TestMoneyRefusesUnboundPayload: a payloadToSign that does not name the
// quote shown, or its amounts, is never stamped and never executed.
func TestMoneyRefusesUnboundPayload(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	for _, tc := range []struct {
		name   string
		tamper func(u map[string]any) string
	}{
		{"another quote", func(u map[string]any) string { u["quoteId"] = "Quote:0199a000-0000-7000-8000-000000000999"; return "" }},
		{"another sending amount", func(u map[string]any) string { u["totalSendingAmount"] = 999999; return "" }},
		{"another receiving amount", func(u map[string]any) string { u["totalReceivingAmount"] = 1; return "" }},
		{"another account", func(u map[string]any) string { u["destinationAccountId"] = xofAccount; return "" }},
		{"no amounts", func(u map[string]any) string { delete(u, "totalSendingAmount"); return "" }},
		{"not JSON", func(map[string]any) string { return "sign me" }},
	} {
		m.set(func(m *fakeMoney) { m.tamper = tc.tamper })
		getQuote(t, ctx, mxnAccount, "SENDING", "25.00", "")
		waitFor(t, ctx, shown("quote-error"))
		if got := text(t, ctx, "quote-error"); !strings.Contains(got, "cannot be signed") {
			t.Errorf("%s: error %q", tc.name, got)
		}
		if !eval[bool](t, ctx, `document.getElementById("send-submit").disabled`) || !strings.Contains(text(t, ctx, "send-disabled-reason"), "cannot be signed") {
			t.Errorf("%s: Send is not disabled with the reason (%q)", tc.name, text(t, ctx, "send-disabled-reason"))
		}
		if !eval[bool](t, ctx, shown("quote-renew")) {
			t.Errorf("%s: no way to a new quote", tc.name)
		}
		eval[chromedp.Void](t, ctx, `document.getElementById("send-submit").click()`)
		clickID(t, ctx, "quote-cancel")
		waitFor(t, ctx, shown("send-form"))
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(m.calls(api, "POST", "/api/quotes/")); n != 0 {
		t.Errorf("%d execute calls for quotes that do not bind", n)
	}
	for _, c := range walletCalls(t, ctx) {
		if c[0] == "stamp" && c[2] != fakePayload {
			t.Errorf("the wallet stamped %q", c[2])
		}
	}
}

// TestMoneyQuoteExpiry: when the countdown ends the quote says it expired,
// Send is disabled, and "Get a new quote" asks again with the same body (the
// same account, side and amount); a 409 EXPIRED from execute does the same.
func TestMoneyQuoteExpiry(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	m.set(func(m *fakeMoney) { m.quoteTTL = 3 * time.Second })
	ctx := newTab(t)
	signIn(t, ctx, site)
	// They receive 1,500.50 MXN: the amount is in pesos, with their decimals.
	getQuote(t, ctx, mxnAccount, "RECEIVING", "1,500.50", "")
	first := eval[string](t, ctx, `document.getElementById("quote-id").textContent`)
	if got := text(t, ctx, "quote-receive"); got != "MX$1,500.50" {
		t.Errorf("they receive %q", got)
	}
	if got := text(t, ctx, "quote-expiry"); !onlySecsLeft.MatchString(got) || got > "00:03" {
		t.Errorf("countdown %q, want 3 s or less", got)
	}
	waitFor(t, ctx, shown("quote-expired"))
	if text(t, ctx, "quote-expiry") != "00:00" {
		t.Errorf("countdown %q at expiry", text(t, ctx, "quote-expiry"))
	}
	if !eval[bool](t, ctx, `document.getElementById("send-submit").disabled`) || !strings.Contains(text(t, ctx, "send-disabled-reason"), "expired") {
		t.Errorf("Send after expiry: disabled %v, reason %q", eval[bool](t, ctx, `document.getElementById("send-submit").disabled`), text(t, ctx, "send-disabled-reason"))
	}

	m.set(func(m *fakeMoney) { m.quoteTTL = time.Minute })
	clickID(t, ctx, "quote-renew")
	waitFor(t, ctx, `document.getElementById("quote-id").textContent !== "`+first+`" && !(`+shown("quote-expired")+`)`)
	quotes := m.calls(api, "POST", "/api/quotes")
	if len(quotes) != 2 || quotes[0].body != quotes[1].body {
		t.Fatalf("quote requests %d: %v; want the same body twice", len(quotes), quotes)
	}
	if !strings.Contains(quotes[0].body, `"lockedCurrencySide":"RECEIVING"`) || !strings.Contains(quotes[0].body, `"lockedCurrencyAmount":150050`) {
		t.Errorf("quote body %s", quotes[0].body)
	}
	if got := text(t, ctx, "quote-expiry"); !minuteLeft.MatchString(got) {
		t.Errorf("new countdown %q", got)
	}

	// The service says it expired (the device's clock may be behind).
	m.set(func(m *fakeMoney) {
		m.executes = append(m.executes, reply{status: 409, body: `{"status":409,"code":"INVALID_STATE_TRANSITION","message":"the quote expired","details":{"quoteStatus":"EXPIRED"}}`})
	})
	clickID(t, ctx, "send-submit")
	waitFor(t, ctx, shown("quote-expired")+` && `+shown("quote-renew"))
	if !eval[bool](t, ctx, `document.getElementById("send-submit").disabled`) {
		t.Error("Send still enabled after the service said the quote expired")
	}
	clickID(t, ctx, "quote-renew")
	waitFor(t, ctx, `!(`+shown("quote-expired")+`) && !document.getElementById("send-submit").disabled`)
	if n := len(m.calls(api, "POST", "/api/quotes")); n != 3 {
		t.Errorf("%d quote requests, want 3", n)
	}
}

// TestMoneySendErrors: a balance too small and a refused signature are said
// in plain words, and the quote stays to try again.
func TestMoneySendErrors(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	getQuote(t, ctx, mxnAccount, "SENDING", "10", "")
	// Spent elsewhere after the quote (the page refuses an amount above the
	// balance before asking for a quote): the service's refusal.
	m.set(func(m *fakeMoney) { m.available = 500 })
	clickID(t, ctx, "send-submit")
	waitFor(t, ctx, shown("quote-error"))
	if got := text(t, ctx, "quote-error"); !strings.Contains(got, "does not cover") || !strings.Contains(got, "$5.00 available") || !strings.Contains(got, "$10.00") {
		t.Errorf("insufficient balance said as %q", got)
	}
	m.set(func(m *fakeMoney) {
		m.executes = append(m.executes, reply{status: 401, body: `{"status":401,"code":"WALLET_SIGNATURE_INVALID","message":"bad"}`})
	})
	clickID(t, ctx, "send-submit")
	waitFor(t, ctx, `document.getElementById("quote-error").textContent.includes("signature was not accepted")`)
	if !eval[bool](t, ctx, shown("signed-in")) {
		t.Error("a refused signature signed the page out")
	}
	// An amount outside the corridor's range is shown at the amount.
	clickID(t, ctx, "quote-cancel")
	typeInto(t, ctx, "send-amount", "0.50")
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, shown("send-amount-error"))
	if got := text(t, ctx, "send-amount-error"); !strings.Contains(got, "$1.00") || !strings.Contains(got, "$100,000.00") {
		t.Errorf("amount error %q", got)
	}
	if n := len(m.calls(api, "POST", "/api/quotes/")); n != 2 {
		t.Errorf("%d execute calls, want 2", n)
	}
}

// TestMoneySendHintOwnLimit: the amount step's range is the corridor's,
// capped by the person's own limit per payment when that is lower, and
// says so; a limit below the corridor's least is said plainly. (Before,
// Send offered up to $100,000.00 and then refused $50 over a $10 limit.)
func TestMoneySendHintOwnLimit(t *testing.T) {
	t.Parallel()
	site, _, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	hint := func(perPayment *int64) string {
		t.Helper()
		m.set(func(m *fakeMoney) { m.perPayment = perPayment })
		goTo(t, ctx, "/send", "send")
		if eval[bool](t, ctx, shown("send-change")) {
			clickID(t, ctx, "send-change")
		}
		waitFor(t, ctx, `[...document.getElementById("send-account").options].some((o) => o.value === "`+mxnAccount+`" && !o.disabled)`)
		choose(t, ctx, "#send-account", xofAccount)
		choose(t, ctx, "#send-account", mxnAccount)
		waitFor(t, ctx, `document.getElementById("send-amount-hint").textContent.includes("send")`)
		return text(t, ctx, "send-amount-hint")
	}
	ten, cents := int64(1000), int64(50)
	for _, tc := range []struct {
		limit *int64
		want  string
	}{
		{nil, "You can send from $1.00 to $100,000.00."},
		{&ten, "You can send from $1.00 to $10.00, your own limit per payment (Security)."},
		{&cents, "Your own limit per payment is $0.50 (Security): raise it there to send from this wallet."},
	} {
		if got := hint(tc.limit); !strings.Contains(got, tc.want) {
			limit := "none"
			if tc.limit != nil {
				limit = strconv.FormatInt(*tc.limit, 10) + " cents"
			}
			t.Errorf("with a limit of %s: hint %q, want it to contain %q", limit, got, tc.want)
		}
	}
}

// TestMoneySendNeedsKey: a tab whose wallet module does not start (here:
// after a reload) shows the wallet without a key; a quote can still be had,
// but Send is disabled and says why.
func TestMoneySendNeedsKey(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t, `if (sessionStorage.getItem("break-wallet")) { delete globalThis.paywallet; globalThis.WebAssembly = undefined; }`)
	signIn(t, ctx, site)
	eval[chromedp.Void](t, ctx, `sessionStorage.setItem("break-wallet", "1")`)
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("key-missing")))
	getQuote(t, ctx, xofAccount, "RECEIVING", "5000", "")
	if got := text(t, ctx, "quote-receive"); got != "F\u202fCFA\u00a05,000" {
		t.Errorf("they receive %q", got)
	}
	if !eval[bool](t, ctx, `document.getElementById("send-submit").disabled`) {
		t.Fatal("Send enabled without a key")
	}
	if got := text(t, ctx, "send-disabled-reason"); !strings.Contains(got, "signing key") {
		t.Errorf("reason %q", got)
	}
	eval[chromedp.Void](t, ctx, `document.getElementById("send-submit").click()`)
	time.Sleep(200 * time.Millisecond)
	if n := len(m.calls(api, "POST", "/api/quotes/")); n != 0 {
		t.Errorf("%d execute calls without a key", n)
	}
	// The XOF amount takes no decimals.
	clickID(t, ctx, "quote-cancel")
	typeInto(t, ctx, "send-amount", "12.5")
	clickID(t, ctx, "quote-submit")
	waitFor(t, ctx, shown("send-amount-error"))
	if got := text(t, ctx, "send-amount-error"); !strings.Contains(got, "XOF has no decimals") {
		t.Errorf("XOF amount error %q", got)
	}
}

// TestMoneyFailures: each failed outcome is told in plain words, the
// balance follows, and the final receipt is confirmed.
func TestMoneyFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, outcome, reason string
		keepHeld              bool
		badge, want           string
	}{
		{"offramp failed, money back", "FAILED", "OFFRAMP_FAILED", false, "Failed", "The recipient's bank could not deliver the payment. The money is back in your wallet."},
		{"offramp failed, money held", "FAILED", "OFFRAMP_FAILED", true, "Failed", "has not come back yet: it shows as on hold"},
		{"execution failed", "FAILED", "QUOTE_EXECUTION_FAILED", false, "Failed", "could not be started. The money is back in your wallet."},
		{"rejected", "REJECTED", "", false, "Rejected", "The recipient's institution rejected the payment; the money was returned."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site, api, m := startMoneySite(t)
			m.set(func(m *fakeMoney) { m.outcome, m.reason, m.keepHeld, m.after = tc.outcome, tc.reason, tc.keepHeld, 1 })
			ctx := newTab(t)
			signIn(t, ctx, site)
			getQuote(t, ctx, mxnAccount, "SENDING", "40", "")
			clickID(t, ctx, "send-submit")
			waitFor(t, ctx, `document.getElementById("transaction").dataset.status === "`+tc.outcome+`"`)
			waitFor(t, ctx, `document.getElementById("tx-reason").textContent.includes(`+quote(tc.want)+`)`)
			if got := text(t, ctx, "tx-badge"); got != tc.badge {
				t.Errorf("badge %q", got)
			}
			waitFor(t, ctx, shown("tx-receipt"))
			if tc.keepHeld {
				waitFor(t, ctx, heldRow+` && document.getElementById("account-on-hold").textContent === "$40.00 USD"`)
			} else {
				waitFor(t, ctx, `!(`+heldRow+`) && document.getElementById("account-balance").textContent === "$1,234.56 USD"`)
			}
			if n := len(m.calls(api, "POST", "/api/transactions/")); n != 1 {
				t.Errorf("%d receipt confirmations", n)
			}
		})
	}
}

// TestMoneyTransactionsList: newest first, each with its date, direction,
// counterparty, amount in its currency's decimals and status; quotes never
// sent are left out; "Load more" follows nextCursor; a click opens one.
func TestMoneyTransactionsList(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	m.set(func(m *fakeMoney) {
		fee := int64(300)
		for i := range 25 {
			at := base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
			var x *fakeTx
			switch i % 5 {
			case 0:
				x = &fakeTx{status: "COMPLETED", typ: "INCOMING", dest: fakeAccount, description: "Sandbox funding", received: int64(10000 + i), recvCur: "USD"}
			case 1:
				x = &fakeTx{status: "COMPLETED", typ: "OUTGOING", dest: xofAccount, sent: 1000, received: 5000 + int64(i), sentCur: "USD", recvCur: "XOF", fees: &fee, rate: 0.00165, rail: "MOBILE_MONEY"}
			case 2:
				x = &fakeTx{status: "EXPIRED", reason: "QUOTE_EXPIRED", typ: "OUTGOING", dest: mxnAccount, sent: 999, received: 1, sentCur: "USD", recvCur: "MXN"}
			case 3:
				x = &fakeTx{status: "FAILED", reason: "OFFRAMP_FAILED", typ: "OUTGOING", dest: mxnAccount, sent: 2550, received: 40000, sentCur: "USD", recvCur: "MXN", rate: 0.0585, rail: "SPEI"}
			case 4:
				x = &fakeTx{status: "REFUNDED", reason: "OFFRAMP_FAILED", typ: "OUTGOING", dest: mxnAccount, sent: 1234567, received: 2000000, sentCur: "USD", recvCur: "MXN", rate: 0.0585, rail: "SPEI"}
			}
			x.id = fmt.Sprintf("Transaction:0199a000-0000-7000-8000-%012d", 500+i)
			x.created = at
			m.txs = append([]*fakeTx{x}, m.txs...)
		}
	})
	ctx := newTab(t)
	signIn(t, ctx, site)
	// 20 on the first page, 4 of them quotes never sent.
	waitFor(t, ctx, `document.querySelectorAll("#transactions-list > li").length === 16`)
	type row struct{ ID, Status, When, What, Amount, Badge string }
	rows := func() []row {
		var out []row
		js := `JSON.stringify([...document.querySelectorAll("#transactions-list > li")].map((li) => ({id: li.dataset.id, status: li.dataset.status,
  when: li.querySelector(".tx-when").dateTime, what: li.querySelector(".tx-what").textContent, amount: li.querySelector(".tx-amount").textContent,
  badge: li.querySelector(".badge").textContent})))`
		if err := json.Unmarshal([]byte(eval[string](t, ctx, js)), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := rows()
	if got[0].ID != "Transaction:0199a000-0000-7000-8000-000000000524" || got[0].When != base.Add(24*time.Hour).Format(time.RFC3339) {
		t.Errorf("first row %+v, want the newest", got[0])
	}
	byID := map[string]row{}
	for _, r := range got {
		byID[r.ID] = r
		if r.Status == "EXPIRED" || r.Status == "PENDING" {
			t.Errorf("a quote never sent is listed: %+v", r)
		}
	}
	for id, want := range map[int]row{
		520: {What: "Added funds Sandbox funding", Amount: "+$100.20", Badge: "Completed"},
		521: {What: "Sent to Awa Ndiaye, West African mobile money •••• 4567", Amount: "-$10.00", Badge: "Completed"},
		523: {What: "Sent to Ana Diaz, Mexican bank account, CLABE •••• 7771", Amount: "$25.50", Badge: "Failed"},
		524: {What: "Sent to Ana Diaz, Mexican bank account, CLABE •••• 7771", Amount: "$12,345.67", Badge: "Returned"},
	} {
		r := byID[fmt.Sprintf("Transaction:0199a000-0000-7000-8000-%012d", id)]
		if r.What != want.What || r.Amount != want.Amount || r.Badge != want.Badge {
			t.Errorf("row %d: %+v\nwant %+v", id, r, want)
		}
	}
	goTo(t, ctx, "/activity", "activity")
	if !eval[bool](t, ctx, shown("transactions-more")) {
		t.Fatal("no Load more")
	}
	clickID(t, ctx, "transactions-more")
	waitFor(t, ctx, `document.querySelectorAll("#transactions-list > li").length === 20`)
	if eval[bool](t, ctx, shown("transactions-more")) {
		t.Error("Load more still shown at the end")
	}
	var cursors []string
	for _, c := range m.calls(api, "GET", "/api/transactions") {
		if c.path == "/api/transactions" {
			cursors = append(cursors, c.query)
		}
	}
	if len(cursors) < 2 || !strings.Contains(cursors[len(cursors)-1], "cursor=at%3A20") {
		t.Errorf("list requests %v: want the last one with the nextCursor", cursors)
	}
	last := rows()[19]
	if last.ID != "Transaction:0199a000-0000-7000-8000-000000000500" {
		t.Errorf("last row %+v, want the oldest", last)
	}

	// The XOF payment, opened: what arrived in whole francs, the fees too.
	openRow(t, ctx, "Transaction:0199a000-0000-7000-8000-000000000521")
	waitFor(t, ctx, shown("transaction")+` && document.getElementById("transaction").dataset.status === "COMPLETED"`)
	facts := eval[string](t, ctx, `JSON.stringify(Object.fromEntries([...document.querySelectorAll("#tx-facts > div")].map((d) => [d.dataset.fact, d.querySelector("dd").textContent])))`)
	var f map[string]string
	_ = json.Unmarshal([]byte(facts), &f)
	for k, want := range map[string]string{"sent": "$10.00", "received": "F\u202fCFA\u00a05,021", "fees": "F\u202fCFA\u00a0300", "rate": "1\u00a0USD = 606.06\u00a0XOF", "rail": "Mobile money"} {
		if f[k] != want {
			t.Errorf("XOF payment %s %q, want %q", k, f[k], want)
		}
	}
	// The refunded one says where the money is.
	clickID(t, ctx, "tx-close")
	openRow(t, ctx, "Transaction:0199a000-0000-7000-8000-000000000524")
	waitFor(t, ctx, `document.getElementById("tx-reason").textContent === "The payment was returned after delivery; the money is back in your wallet."`)
	waitFor(t, ctx, shown("tx-receipt"))
}

// TestMoneyAddFunds: the sandbox form refuses what is not an amount of the
// wallet's currency, in plain words and without a request; a good amount
// is added in cents, the balance and the list follow. In production mode the
// form is not there.
func TestMoneyAddFunds(t *testing.T) {
	t.Parallel()
	site, api, m := startMoneySite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	waitFor(t, ctx, shown("home-fund"))
	clickID(t, ctx, "home-fund")
	waitFor(t, ctx, shown("fund-form"))
	if got := text(t, ctx, "fund-currency"); got != "USD" {
		t.Errorf("fund currency %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "Type an amount"},
		{"12.345", "at most 2 decimals"},
		{"-5", "minus"},
		{"abc", "like 12.50"},
		{"12,50", "Use “.” for the decimals"},
		{"0", "above zero"},
		{"1000000000.01", "at most $1,000,000,000.00 USD"},
	} {
		typeInto(t, ctx, "fund-amount", tc.in)
		clickID(t, ctx, "fund-submit")
		waitFor(t, ctx, shown("fund-error"))
		if got := text(t, ctx, "fund-error"); !strings.Contains(got, tc.want) {
			t.Errorf("%q: error %q, want %q", tc.in, got, tc.want)
		}
		if got := eval[string](t, ctx, `document.getElementById("fund-amount").getAttribute("aria-invalid") || ""`); got != "true" {
			t.Errorf("%q: aria-invalid %q", tc.in, got)
		}
	}
	if n := len(m.calls(api, "POST", "/api/sandbox/fund")); n != 0 {
		t.Fatalf("%d fund requests for bad amounts", n)
	}
	lists := len(m.calls(api, "GET", "/api/transactions"))
	typeInto(t, ctx, "fund-amount", "250.75")
	if eval[bool](t, ctx, shown("fund-error")) {
		t.Error("the error stayed while typing")
	}
	clickID(t, ctx, "fund-submit")
	waitFor(t, ctx, `document.getElementById("account-balance").textContent === "$1,485.31 USD"`)
	funds := m.calls(api, "POST", "/api/sandbox/fund")
	if len(funds) != 1 || funds[0].body != `{"amount":25075}` {
		t.Fatalf("fund requests %+v", funds)
	}
	if got := text(t, ctx, "status"); got != "Added $250.75 USD to your wallet." {
		t.Errorf("status %q", got)
	}
	if v := eval[string](t, ctx, `document.getElementById("fund-amount").value`); v != "" {
		t.Errorf("amount left in the form: %q", v)
	}
	waitFor(t, ctx, `(() => { const li = document.querySelector("#transactions-list > li"); return !!li && li.textContent.includes("Added funds") && li.textContent.includes("+$250.75"); })()`)
	if n := len(m.calls(api, "GET", "/api/transactions")); n <= lists {
		t.Error("the list was not reloaded after the funding")
	}

	// Production: no funding form.
	site2, _, m2 := startMoneySite(t)
	m2.set(func(m *fakeMoney) { m.production = true })
	ctx2 := newTab(t)
	signIn(t, ctx2, site2)
	waitFor(t, ctx2, shown("balance"))
	if eval[bool](t, ctx2, shown("fund-form")) || eval[bool](t, ctx2, shown("sandbox-banner")) {
		t.Error("the sandbox funding form is shown in production mode")
	}
}

// TestParseAmountNode checks format.js's parseMoney and formatMoney in en-US
// under Node (whose Intl may differ from the browser's), when Node is
// installed: the module needs no DOM.
func TestParseAmountNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	type want struct {
		OK     bool   `json:"ok"`
		Amount int64  `json:"amount,omitempty"`
		Reason string `json:"reason,omitempty"`
	}
	cases := []struct {
		Text     string `json:"text"`
		Decimals int    `json:"decimals"`
		Max      int64  `json:"max,omitempty"`
		Want     want   `json:"want"`
	}{
		{"12.50", 2, 0, want{OK: true, Amount: 1250}},
		{" 1,234.5 ", 2, 0, want{OK: true, Amount: 123450}},
		{".5", 2, 0, want{OK: true, Amount: 50}},
		{"7.", 2, 0, want{OK: true, Amount: 700}},
		{"12.500", 2, 0, want{OK: true, Amount: 1250}},
		{"1500", 0, 0, want{OK: true, Amount: 1500}},
		{"0.00000001", 8, 0, want{OK: true, Amount: 1}},
		{"90071992547409.91", 2, 0, want{OK: true, Amount: 9007199254740991}},
		{"90071992547409.92", 2, 0, want{Reason: "TOO_LARGE"}},
		{"1000000000.00", 2, 100000000000, want{OK: true, Amount: 100000000000}},
		{"1000000000.01", 2, 100000000000, want{Reason: "TOO_LARGE"}},
		{"1.005", 2, 0, want{Reason: "DECIMALS"}},
		{"12.5", 0, 0, want{Reason: "DECIMALS"}},
		{"-3", 2, 0, want{Reason: "NEGATIVE"}},
		{"−3", 2, 0, want{Reason: "NEGATIVE"}},
		{"0", 2, 0, want{Reason: "ZERO"}},
		{"0.00", 2, 0, want{Reason: "ZERO"}},
		{"", 2, 0, want{Reason: "EMPTY"}},
		{"   ", 2, 0, want{Reason: "EMPTY"}},
		{"abc", 2, 0, want{Reason: "INVALID"}},
		{"1e5", 2, 0, want{Reason: "INVALID"}},
		{"12,5", 2, 0, want{Reason: "SEPARATOR"}},
		{"1,23", 2, 0, want{Reason: "SEPARATOR"}},
		{"1 000", 2, 0, want{OK: true, Amount: 100000}},
		{"1,000", 8, 0, want{Reason: "AMBIGUOUS"}},
		{"+5", 2, 0, want{Reason: "INVALID"}},
		{".", 2, 0, want{Reason: "INVALID"}},
		{"0x10", 2, 0, want{Reason: "INVALID"}},
	}
	in, _ := json.Marshal(cases)
	script := `Promise.all([import("./web/static/js/format.js"), import("./web/static/js/i18n.js")]).then(async ([{ parseMoney, formatMoney }, { setLocale }]) => {
  await setLocale("en-US");
  const cases = JSON.parse(process.argv[1]);
  const codes = { 0: "XOF", 2: "USD", 8: "BTC" };
  const out = cases.map((c) => {
    const r = parseMoney(c.text, { code: codes[c.decimals], decimals: c.decimals }, c.max ? { max: c.max } : {});
    return r.ok ? { ok: true, amount: r.amount } : { ok: false, reason: r.reason, message: r.message }; });
  const amounts = [formatMoney(123456, {code: "USD", symbol: "$", decimals: 2}),
    formatMoney(168803, {code: "MXN", symbol: "$", decimals: 2}),
    formatMoney(-5, {code: "USD", decimals: 2}),
    formatMoney(150000, {code: "BTC", decimals: 8}),
    formatMoney(1250, {decimals: 2}),
    formatMoney(1250, "USD")];
  console.log(JSON.stringify({ out, amounts }));
});`
	cmd := exec.Command(node, "--input-type=module", "-e", script, string(in))
	cmd.Dir = ".."
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, b)
	}
	var res struct {
		Out []struct {
			want
			Message string `json:"message"`
		} `json:"out"`
		Amounts []string `json:"amounts"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Out) != len(cases) {
		t.Fatalf("node said %s (%v)", b, err)
	}
	for i, c := range cases {
		got := res.Out[i]
		if got.want != c.Want {
			t.Errorf("parseMoney(%q, %d decimals) = %+v, want %+v", c.Text, c.Decimals, got.want, c.Want)
		}
		if !got.OK && got.Message == "" {
			t.Errorf("parseMoney(%q): no message", c.Text)
		}
	}
	if got := res.Out[11].Message; got != "Use at most 2 decimals for USD, like 12.50." {
		t.Errorf("parseMoney(%q) says %q", cases[11].Text, got)
	}
	// Intl's layout for en-US; no currency code, no amount.
	wantAmounts := []string{"$1,234.56", "MX$1,688.03", "-$0.05", "0.0015\u00a0BTC", "", "$12.50"}
	if strings.Join(res.Amounts, "|") != strings.Join(wantAmounts, "|") {
		t.Errorf("formatMoney: %q, want %q", res.Amounts, wantAmounts)
	}
}
