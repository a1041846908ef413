package web

import (
	"context"
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// routeCases are addresses with the view each names ("" for none), shared
// by the Go table test and the check that router.js agrees: an address of
// every view of the table (its {id} filled in, plain and escaped), the
// words of the table taken for an id where one may stand, and addresses
// that are no view.
var routeCases = append(tableCases(), []struct{ path, view string }{
	{"/activity/Statement", "payment"},
	{"/send/", ""},
	{"/activity/", ""},
	{"/activity/a/b", ""},
	{"/activity/a/receipt/x", ""},
	{"/activity/a b", ""},
	{"/activity/%ZZ", ""},
	{"/activity/..", ""},
	{"/recipients/new/x", ""},
	{"/settings", ""},
	{"/index.html", ""},
	{"/js/app.js", ""},
	{"//send", ""},
	{"", ""},
	{"send", ""},
}...)

// tableCases are, for every view of the table, its address with a
// resource id for {id}, as it is and with its ':' escaped.
func tableCases() []struct{ path, view string } {
	var out []struct{ path, view string }
	for _, v := range Views() {
		out = append(out, struct{ path, view string }{strings.ReplaceAll(v.Path, "{id}", "Transaction:019a1b2c-0000-7000-8000-000000000001"), v.Name})
		if strings.Contains(v.Path, "{id}") {
			out = append(out, struct{ path, view string }{strings.ReplaceAll(v.Path, "{id}", "Transaction%3A019a"), v.Name})
		}
	}
	return out
}

// TestViewsTable: the table has every view once, each with a module of
// its own and a navigation entry that is a view;
// and no address of a view is hidden by an earlier pattern.
func TestViewsTable(t *testing.T) {
	names := map[string]bool{}
	for _, v := range Views() {
		if names[v.Name] {
			t.Errorf("view %q twice", v.Name)
		}
		names[v.Name] = true
		if _, err := fs.Stat(Files(), "js/views/"+v.Name+".js"); err != nil {
			t.Errorf("view %q has no module: %v", v.Name, err)
		}
		if got, _ := View(strings.ReplaceAll(v.Path, "{id}", "x1")); got != v.Name {
			t.Errorf("the address %s of view %q is read as %q", v.Path, v.Name, got)
		}
	}
	for _, v := range Views() {
		if !names[v.Nav] {
			t.Errorf("view %q: navigation entry %q is no view", v.Name, v.Nav)
		}
	}
	if len(names) < 10 {
		t.Errorf("only %d views", len(names))
	}
}

// TestViewsInPage: index.html has a section for every view of the table
// (id view-<name>, data-view <name>), and its navigation lists, in the
// table's order, the views that are a navigation entry of their own, each
// linked to its address.
func TestViewsInPage(t *testing.T) {
	b, err := fs.ReadFile(Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	var want, got []string
	for _, v := range Views() {
		if !strings.Contains(page, `<div id="view-`+v.Name+`" class="view" data-view="`+v.Name+`" hidden>`) {
			t.Errorf("index.html has no section for view %q", v.Name)
		}
		if v.Nav == v.Name {
			want = append(want, v.Path+" "+v.Name)
		}
	}
	for _, m := range regexp.MustCompile(`<a href="([^"]*)" data-nav="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	if !slices.Equal(got, want) {
		t.Errorf("the navigation of index.html links %q; the table of views has %q", got, want)
	}
	if n := strings.Count(page, `class="view" data-view="`); n != len(Views()) {
		t.Errorf("index.html has %d view sections, the table %d views", n, len(Views()))
	}
}

func TestView(t *testing.T) {
	for _, tc := range routeCases {
		got, ok := View(tc.path)
		if ok != (tc.view != "") || got != tc.view {
			t.Errorf("View(%q) = %q, %v; want %q", tc.path, got, ok, tc.view)
		}
	}
}

// TestRoutesAgree loads router.js in Chromium and checks that it reads
// every address of the table as the server does: a view the server does not
// know would 404 on reload, and one the pages do not know would show "not
// found" for a page the server served.
func TestRoutesAgree(t *testing.T) {
	t.Parallel()
	site, _ := startSite(t)
	ctx := newTab(t)
	do(t, ctx, chromedp.Navigate(site+"/favicon.svg"))
	paths := make([]string, len(routeCases))
	for i, tc := range routeCases {
		paths[i] = tc.path
	}
	in, _ := json.Marshal(paths)
	js := `import("/js/router.js").then((m) => JSON.stringify(` + string(in) + `.map((p) => { const r = m.routeOf(p); return r ? r.name : ""; })))`
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for i, tc := range routeCases {
		if got[i] != tc.view {
			t.Errorf("router.js routeOf(%q) = %q; routes.go says %q", tc.path, got[i], tc.view)
		}
	}
}

// TestViewsHistory walks the views the way a person does: a deep link
// while signed out lands on its view after sign-in; the navigation, back,
// forward and a reload keep the address and the view together; an unknown
// address shows "Page not found" with a way back.
func TestViewsHistory(t *testing.T) {
	t.Parallel()
	site, _ := startSite(t)
	ctx := newTab(t)
	view := func(want string) {
		t.Helper()
		waitFor(t, ctx, `document.body.dataset.view === `+quote(want))
	}
	at := func(path string) {
		t.Helper()
		if got := eval[string](t, ctx, `location.pathname`); got != path {
			t.Fatalf("address %q, want %q", got, path)
		}
	}

	// A link to Activity, followed signed out: the sign-in page, then Activity.
	askForCode(t, ctx, site+"/activity")
	view("signin")
	at("/activity")
	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("code"), "123456"),
		chromedp.Click(chromedp.ID("code-submit")),
	)
	view("activity")
	at("/activity")
	if got := eval[string](t, ctx, `document.activeElement.id`); got != "transactions-title" {
		t.Errorf("focus on %q after sign-in, want the view's heading", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#nav a[aria-current="page"]').dataset.nav`); got != "activity" {
		t.Errorf("navigation marks %q as the current page, want activity", got)
	}

	// The navigation, then back and forward.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#nav a[data-nav="send"]`)))
	view("send")
	at("/send")
	if got := eval[string](t, ctx, `document.title`); got != "Send money · Wallet" {
		t.Errorf("title %q", got)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#nav a[data-nav="security"]`)))
	view("security")
	eval[chromedp.Void](t, ctx, `history.back()`)
	view("send")
	at("/send")
	eval[chromedp.Void](t, ctx, `history.back()`)
	view("activity")
	eval[chromedp.Void](t, ctx, `history.forward()`)
	view("send")

	// A reload stays on the view.
	do(t, ctx, chromedp.Reload())
	view("send")
	at("/send")
	if !eval[bool](t, ctx, shown("send-account")) {
		t.Error("after a reload the send view does not show its first step")
	}

	// An address that is no view.
	do(t, ctx, chromedp.Navigate(site+"/no-such-page"))
	view("notfound")
	if !eval[bool](t, ctx, shown("notfound-home")) {
		t.Fatal(`"Page not found" has no way back`)
	}
	do(t, ctx, chromedp.Click(chromedp.ID("notfound-home")))
	view("home")
	at("/")
}

// goTo moves the signed-in page to the view at path as a click on a link
// does (History API, no page load) and waits until the view named view is
// shown.
func goTo(t *testing.T, ctx context.Context, path, view string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, `(() => { const a = document.createElement("a"); a.href = `+quote(path)+`;
  document.body.append(a); a.click(); a.remove(); })()`)
	waitFor(t, ctx, `document.body.dataset.view === `+quote(view))
}
