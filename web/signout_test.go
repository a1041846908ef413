package web

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// visibleErrors counts the error messages the wallet's views hold ready to
// show (the views themselves are hidden while signed out).
const visibleErrors = `[...document.querySelectorAll("#signed-in .form-error, #signed-in .field-error")].filter((el) => !el.hidden && el.textContent.trim() !== "").length`

// TestNextSessionStartsClean: errors one session showed (a refused amount,
// a refused recipient, an export that did not work) are gone when the wallet is signed out and in again.
// Before, they stayed on screen for the next session, which may be another
// person's.
func TestNextSessionStartsClean(t *testing.T) {
	t.Parallel()
	site, _ := startSite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	waitFor(t, ctx, shown("home-fund"))
	clickID(t, ctx, "home-fund")
	clickID(t, ctx, "fund-submit") // nothing typed
	waitFor(t, ctx, shown("fund-error"))
	goTo(t, ctx, "/recipients/new", "recipient-new")
	clickID(t, ctx, "account-submit") // nothing filled in
	waitFor(t, ctx, visibleErrors+` >= 2`)
	goTo(t, ctx, "/security", "security")
	clickID(t, ctx, "export-start") // the fake has no export: "The recovery phrase was not exported…"
	waitFor(t, ctx, shown("export-error"))

	// Signed out, before anything of a next session could load: nothing
	// of this session's errors is left to show.
	do(t, ctx, chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("email")))
	if n := eval[int](t, ctx, visibleErrors); n != 0 {
		t.Errorf("%d error messages of the last session are kept for the next: %s", n,
			eval[string](t, ctx, `[...document.querySelectorAll("#signed-in .form-error, #signed-in .field-error")].filter((el) => !el.hidden && el.textContent.trim() !== "").map((el) => el.id + ": " + el.textContent).join("; ")`))
	}
}
