package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/service"
	"paywallet/service/store"
)

// The money pages against the whole stack in sandbox mode: the settlement
// worker runs (startStack), payments settle after SettlementDelay.

// moneyStack is a sandbox stack whose payments settle after a second.
func moneyStack(t *testing.T, options ...func(*service.Config)) *stack {
	t.Helper()
	return startStack(t, service.ModeSandbox, append([]func(*service.Config){func(c *service.Config) {
		c.SettlementDelay = time.Second
	}}, options...)...)
}

// usd formats cents as the pages do in en-US (format.js formatMoney, the
// browser's locale fixed by browsertest): "$1,234.56".
func usd(cents int64) string {
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("$%s.%02d", whole, cents%100)
}

// balanceUSD is the balance as Home's card writes it, the amount followed
// by the currency's code: "$1,234.56 USD".
func balanceUSD(cents int64) string {
	return usd(cents) + " USD"
}

func jsString(s string) string { return strconv.Quote(s) }

// typeIn replaces what the input with this id holds by typing value.
func typeIn(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID(id)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById(`+jsString(id)+`).value = ""`),
		chromedp.SendKeys(chromedp.ID(id), value),
	); err != nil {
		t.Fatalf("typing into #%s: %v", id, err)
	}
}

func textOf(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById(`+jsString(id)+`) || {textContent: ""}).textContent.trim()`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// addFunds adds sandbox money through the Balance card and waits until the
// balance shows the new amount.
func addFunds(t *testing.T, ctx context.Context, amount string, after int64) {
	t.Helper()
	goTo(t, ctx, "/", "home")
	waitJS(t, ctx, "the Add funds action", `!document.getElementById("home-fund").hidden && !document.getElementById("balance").hidden`)
	if open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.getElementById("fund-form").hidden`)); err != nil {
		t.Fatal(err)
	} else if !open {
		click(t, ctx, "home-fund")
	}
	typeIn(t, ctx, "fund-amount", amount)
	click(t, ctx, "fund-submit")
	waitJS(t, ctx, "the balance after funding", `document.getElementById("account-balance").textContent === `+jsString(balanceUSD(after)))
}

// addActiveUSDAccount adds a US bank account through the Accounts section
// and waits until the service has verified it and the page shows it
// Active, listed as the n-th account. It returns the account's id.
func addActiveUSDAccount(t *testing.T, ctx context.Context, accountNumber string, n int) string {
	t.Helper()
	goTo(t, ctx, "/recipients/new", "recipient-new")
	chooseType(t, ctx, "USD_ACCOUNT")
	fill(t, ctx, map[string]string{
		"accountInfo.accountNumber":                  accountNumber,
		"accountInfo.routingNumber":                  "021000021",
		"accountInfo.beneficiary.fullName":           "Sam Receiver",
		"accountInfo.beneficiary.address.line1":      "1 Main Street",
		"accountInfo.beneficiary.address.city":       "New York",
		"accountInfo.beneficiary.address.postalCode": "10001",
		"accountInfo.beneficiary.address.country":    "US",
	})
	click(t, ctx, "account-submit")
	id := waitListed(t, ctx, n).id
	// The verifier makes it ACTIVE; the page looks again while it is PENDING.
	waitJS(t, ctx, "the account to become Active", `(() => {
  const li = document.querySelector('#accounts-list > li[data-id=`+jsString(id)+`]');
  const o = [...document.getElementById("send-account").options].find((o) => o.value === `+jsString(id)+`);
  return !!li && li.dataset.status === "ACTIVE" && !!o && !o.disabled; })()`)
	return id
}

// quoteFor asks for a quote in the Send section and returns its id.
func quoteFor(t *testing.T, ctx context.Context, accountID, amount string) string {
	t.Helper()
	goTo(t, ctx, "/send", "send")
	js := fmt.Sprintf(`(() => { const s = document.getElementById("send-account"); s.value = %s;
  s.dispatchEvent(new Event("change", {bubbles: true})); return s.value; })()`, jsString(accountID))
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js)); err != nil || got != accountID {
		t.Fatalf("choosing %s to send to: %q %v", accountID, got, err)
	}
	click(t, ctx, "send-next")
	typeIn(t, ctx, "send-amount", amount)
	click(t, ctx, "quote-submit")
	waitJS(t, ctx, "the quote", `!document.getElementById("quote").hidden && !!document.getElementById("quote").dataset.quoteId`)
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("quote").dataset.quoteId`))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (s *stack) quote(id string) store.Quote {
	s.t.Helper()
	var out *store.Quote
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.GetQuote(context.Background(), id)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return *out
}

func (s *stack) transaction(id string) store.Transaction {
	s.t.Helper()
	var out *store.Transaction
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.GetTransaction(context.Background(), id)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return *out
}

func (s *stack) wallet(id string) store.InternalAccount {
	s.t.Helper()
	var out *store.InternalAccount
	err := s.store.Tx(context.Background(), func(tx store.Tx) error {
		var err error
		out, err = tx.GetInternalAccount(context.Background(), id)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return *out
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifactsDir(t), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMoneySendCompletes: add sandbox funds, add a US bank account and wait
// for the service to verify it, get a quote, send it (signed by the wasm
// module with this tab's session key), and follow the payment to
// COMPLETED: the balance drops by exactly the quote's totalSendingAmount,
// and the receipt is confirmed to the service once shown.
func TestMoneySendCompletes(t *testing.T) {
	s := moneyStack(t)
	ctx := newBrowser(t)
	const email = "payer@example.com"
	s.signIn(ctx, email)
	wallet := s.accountOf(email)

	addFunds(t, ctx, "1,000", 100000)
	dest := addActiveUSDAccount(t, ctx, "12345678", 1)
	qid := quoteFor(t, ctx, dest, "25.00")
	q := s.quote(qid)
	if q.LockedSide != "SENDING" || q.LockedAmount != 2500 || q.DestinationAccountID != dest || q.SourceAccountID != wallet {
		t.Fatalf("the service holds the quote %+v", q)
	}
	if got := textOf(t, ctx, "quote-send"); got != usd(q.TotalSendingAmount) {
		t.Errorf("you send %q, want %q", got, usd(q.TotalSendingAmount))
	}
	if got := textOf(t, ctx, "quote-fees"); got != usd(q.FeesIncluded) {
		t.Errorf("fees %q, want %q", got, usd(q.FeesIncluded))
	}
	if got := textOf(t, ctx, "quote-receive"); got != usd(q.TotalReceivingAmount) {
		t.Errorf("they receive %q, want %q", got, usd(q.TotalReceivingAmount))
	}
	screenshot(t, ctx, "money-quote.png")

	click(t, ctx, "send-submit")
	waitJS(t, ctx, "the payment to complete", `document.getElementById("transaction").dataset.status === "COMPLETED"`)
	waitJS(t, ctx, "the receipt line", `!document.getElementById("tx-receipt").hidden && document.getElementById("tx-receipt").textContent.startsWith("Receipt delivered ")`)
	left := 100000 - q.TotalSendingAmount
	waitJS(t, ctx, "the balance after the payment", `document.getElementById("account-balance").textContent === `+jsString(balanceUSD(left))+
		` && document.getElementById("on-hold-row").hidden`)

	x := s.transaction(q.TransactionID)
	if x.Status != "COMPLETED" || x.SentAmount != q.TotalSendingAmount {
		t.Errorf("the service holds the payment as %s of %d", x.Status, x.SentAmount)
	}
	waitUntil(t, 5*time.Second, "the receipt confirmation", func() bool { return !s.transaction(q.TransactionID).ReceiptConfirmedAt.IsZero() })
	if a := s.wallet(wallet); a.Available != left || a.Held != 0 {
		t.Errorf("the wallet holds %d available, %d held; want %d, 0", a.Available, a.Held, left)
	}
	waitJS(t, ctx, "the payment in the list", `(() => { const li = document.querySelector("#transactions-list > li");
  return !!li && li.dataset.id === `+jsString(q.TransactionID)+` && li.dataset.status === "COMPLETED"; })()`)
	list := textOf(t, ctx, "transactions-list")
	for _, want := range []string{"Sent", "Sam Receiver", "-" + usd(q.TotalSendingAmount), "Added funds", "+" + usd(100000)} {
		if !strings.Contains(list, want) {
			t.Errorf("the list %q lacks %q", list, want)
		}
	}
	screenshot(t, ctx, "money-completed.png")
}

// TestMoneyQuoteExpires: a quote left alone until its expiresAt says it
// expired and cannot be sent; "Get a new quote" gets a fresh one (a new id)
// for the same payment in one click.
func TestMoneyQuoteExpires(t *testing.T) {
	s := moneyStack(t, func(c *service.Config) { c.QuoteTTL = 6 * time.Second })
	ctx := newBrowser(t)
	const email = "waiter@example.com"
	s.signIn(ctx, email)
	addFunds(t, ctx, "20", 2000) // the page refuses an amount above the balance before any quote
	dest := addActiveUSDAccount(t, ctx, "23456789", 1)
	first := quoteFor(t, ctx, dest, "10")
	waitJS(t, ctx, "the quote to expire", `!document.getElementById("quote-expired").hidden && !document.getElementById("quote-renew").hidden`)
	if disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("send-submit").disabled`)); err != nil || !disabled {
		t.Errorf("Send enabled on an expired quote (%v)", err)
	}
	click(t, ctx, "quote-renew")
	waitJS(t, ctx, "a new quote", `document.getElementById("quote").dataset.quoteId !== `+jsString(first)+
		` && document.getElementById("quote-expired").hidden && !document.getElementById("send-submit").disabled`)
	second, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("quote").dataset.quoteId`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.quote(first), s.quote(second)
	if a.ID == b.ID || b.DestinationAccountID != dest || b.LockedSide != a.LockedSide || b.LockedAmount != a.LockedAmount || b.LockedAmount != 1000 {
		t.Errorf("quotes %+v then %+v: want a new one for the same payment", a, b)
	}
	if !b.ExpiresAt.After(time.Now()) {
		t.Errorf("the new quote expires at %v", b.ExpiresAt)
	}
}

// TestMoneyPaymentFails: a sandbox destination whose number ends in 004
// takes the payment, then fails to deliver it: the page says so in plain
// words, and the money comes back to the available balance.
func TestMoneyPaymentFails(t *testing.T) {
	s := moneyStack(t)
	ctx := newBrowser(t)
	const email = "unlucky@example.com"
	s.signIn(ctx, email)
	wallet := s.accountOf(email)
	addFunds(t, ctx, "100", 10000)
	dest := addActiveUSDAccount(t, ctx, "12345004", 1)
	qid := quoteFor(t, ctx, dest, "40")
	q := s.quote(qid)
	click(t, ctx, "send-submit")
	waitJS(t, ctx, "the payment to fail", `document.getElementById("transaction").dataset.status === "FAILED"`)
	waitJS(t, ctx, "the reason in plain words", `document.getElementById("tx-reason").textContent ===
  "The recipient's bank could not deliver the payment. The money is back in your wallet."`)
	waitJS(t, ctx, "the balance restored", `document.getElementById("account-balance").textContent === `+jsString(balanceUSD(10000))+
		` && document.getElementById("on-hold-row").hidden`)
	x := s.transaction(q.TransactionID)
	if x.Status != "FAILED" || x.FailureReason != "OFFRAMP_FAILED" {
		t.Errorf("the service holds the payment as %s %s", x.Status, x.FailureReason)
	}
	if a := s.wallet(wallet); a.Available != 10000 || a.Held != 0 {
		t.Errorf("the wallet holds %d available, %d held; want 10000, 0", a.Available, a.Held)
	}
	waitJS(t, ctx, "the receipt line", `!document.getElementById("tx-receipt").hidden`)
	waitUntil(t, 5*time.Second, "the receipt confirmation", func() bool { return !s.transaction(q.TransactionID).ReceiptConfirmedAt.IsZero() })
	screenshot(t, ctx, "money-failed.png")
}
