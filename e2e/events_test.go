package e2e

import (
	"testing"
	"time"

	"paywallet/bff"
	"paywallet/service"
)

// withWebhooks makes the stack's service deliver its webhooks to the
// stack's BFF (whose origin is the WebAuthn origin startStack set), as the
// wallet binary wires them.
func withWebhooks(c *service.Config) {
	c.WebhookURL = c.WebAuthnOrigins[0] + bff.WebhookPath
}

// TestMoneyReturnedLive: a sandbox payment to an account whose number ends
// in 005 completes, then comes back. The open page follows it to
// "Returned" and shows the money back in the balance, without a reload or
// a click: the transaction view stops asking once a payment is COMPLETED
// (a final status), so only the service's webhook, through the BFF's
// event stream, can tell the page that it was returned.
func TestMoneyReturnedLive(t *testing.T) {
	s := startStack(t, service.ModeSandbox, withWebhooks, func(c *service.Config) {
		// Long enough that the page sees COMPLETED before the return.
		c.SettlementDelay = 3 * time.Second
	})
	ctx := newBrowser(t)
	const email = "returned@example.com"
	s.signIn(ctx, email)
	wallet := s.accountOf(email)
	addFunds(t, ctx, "100", 10000)
	dest := addActiveUSDAccount(t, ctx, "12345005", 1)
	qid := quoteFor(t, ctx, dest, "40")
	q := s.quote(qid)
	click(t, ctx, "send-submit")

	waitJS(t, ctx, "the payment to complete", `document.getElementById("transaction").dataset.status === "COMPLETED"`)
	waitJS(t, ctx, "the balance after the payment", `document.getElementById("account-balance").textContent === `+jsString(balanceUSD(10000-q.TotalSendingAmount)))
	if x := s.transaction(q.TransactionID); x.Status != "COMPLETED" {
		t.Fatalf("the service holds the payment as %s when the page shows it completed", x.Status)
	}

	waitJS(t, ctx, "the payment to be returned", `document.getElementById("transaction").dataset.status === "REFUNDED"`)
	if got := textOf(t, ctx, "tx-badge"); got != "Returned" {
		t.Errorf("badge %q, want Returned", got)
	}
	waitJS(t, ctx, "the balance restored", `document.getElementById("account-balance").textContent === `+jsString(balanceUSD(10000))+
		` && document.getElementById("on-hold-row").hidden`)
	waitJS(t, ctx, "the list showing it returned", `[...document.querySelectorAll("#transactions-list > li")].some((li) =>
  li.dataset.id === `+jsString(q.TransactionID)+` && li.dataset.status === "REFUNDED")`)
	if x := s.transaction(q.TransactionID); x.Status != "REFUNDED" {
		t.Errorf("the service holds the payment as %s", x.Status)
	}
	if a := s.wallet(wallet); a.Available != 10000 || a.Held != 0 {
		t.Errorf("the wallet holds %d available, %d held; want 10000, 0", a.Available, a.Held)
	}
	screenshot(t, ctx, "money-returned-live.png")
}
