package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	"paywallet/service"
)

// TestRemoveRecipient: through the whole stack, a recipient added with the
// form is opened from the list, its view shows the holder, and Remove, once
// confirmed, deactivates it on the service (INACTIVE, through the BFF's
// DELETE /api/customers/external-accounts/{id}): the view says so where the
// focus is, the list drops it and Send no longer offers it.
func TestRemoveRecipient(t *testing.T) {
	s := startStack(t, service.ModeSandbox)
	const email = "remover@example.com"
	ctx := newBrowser(t)
	s.signIn(ctx, email)
	customer := s.customerOf(email)
	id := addActiveUSDAccount(t, ctx, "12345678", 1)

	goTo(t, ctx, "/recipients", "recipients")
	waitJS(t, ctx, "the recipient's link", `(() => { const a = document.querySelector('#accounts-list > li[data-id=`+jsString(id)+`] a');
  return !!a && a.textContent.includes("Sam Receiver"); })()`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#accounts-list > li[data-id=`+jsString(id)+`] a`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the recipient view", `document.body.dataset.view === "recipient" && location.pathname === `+jsString("/recipients/"+id))
	waitJS(t, ctx, "its facts", `(() => { const h = document.querySelector('#recipient-detail [data-fact="holder"] dd');
  return !!h && h.textContent === "Sam Receiver"; })()`)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#recipient-detail [data-action="remove"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the confirmation", `document.activeElement && document.activeElement.dataset.action === "cancel-remove"`)
	for _, a := range s.externalAccounts(customer) {
		if a.ID == id && a.Status == "INACTIVE" {
			t.Fatal("removed before the removal was confirmed")
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#recipient-detail [data-action="confirm-remove"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the result, focused", `(() => { const s = document.querySelector("#recipient-detail [role=status]");
  return !!s && !s.hidden && document.activeElement === s && s.textContent.startsWith("Removed Sam Receiver"); })()`)
	held := s.externalAccounts(customer)
	if len(held) != 1 || held[0].ID != id || held[0].Status != "INACTIVE" {
		t.Fatalf("service holds %+v, want %s INACTIVE", held, id)
	}
	waitJS(t, ctx, "the list and Send without it", `(() => {
  const o = [...document.getElementById("send-account").options].find((o) => o.value === `+jsString(id)+`);
  return !document.querySelector('#accounts-list > li[data-id=`+jsString(id)+`]') && (!o || o.disabled); })()`)
}
