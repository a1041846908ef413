package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// These tests cover what a new user hit in the Recipients and Security views
// (issue 16): the bank list asked for before sign-in, a refused removal's
// error wiped at once, focus lost after adding an account, two-letter country
// fields, the service's own wording shown to a person, and the recovery
// phrase's "still hidden" notice next to the shown words; and the recipient
// view with its removal.

// fakeMore answers, for startRecipientsSite, what the fake of page_test.go
// does not: the bank list as the BFF does (401 signed out), one external
// account by id and its removal, the sign-in methods and their removal, and
// the recovery phrase export.
type fakeMore struct {
	api *fakeAPI
	// credentials are the sign-in methods (JSON objects) GET /api/auth/credentials lists.
	credentials []string
	// refuse, when set, is the answer to the signed leg of a credential removal.
	refuse *reply
}

func startRecipientsSite(t *testing.T) (string, *fakeAPI, *fakeMore) {
	t.Helper()
	api := &fakeAPI{events: &fakeEvents{}}
	m := &fakeMore{api: api, credentials: []string{
		`{"id":"AuthMethod:0199a000-0000-7000-8000-0000000000e0","type":"EMAIL_OTP","nickname":"ada@example.com"}`,
		`{"id":"AuthMethod:0199a000-0000-7000-8000-0000000000e1","type":"PASSKEY","nickname":"Laptop"}`,
	}}
	files := http.FileServer(http.FS(Files()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		switch {
		case r.URL.Path == "/api/events":
			api.events.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, "/api/") && m.serve(w, r):
		case strings.HasPrefix(r.URL.Path, "/api/"):
			api.ServeHTTP(w, r)
		default:
			if !strings.Contains(r.URL.Path, ".") {
				// A view's address (/recipients/…), as the BFF answers it: the page.
				r = r.Clone(r.Context())
				r.URL.Path = "/"
			}
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), api, m
}

// serve answers the routes of fakeMore and records them with the fake's
// calls; it reports false for the others.
func (m *fakeMore) serve(w http.ResponseWriter, r *http.Request) bool {
	const eaPrefix = "/api/customers/external-accounts/"
	p := r.URL.Path
	ours := p == "/api/discoveries" || strings.HasPrefix(p, eaPrefix) || p == "/api/auth/credentials" ||
		strings.HasPrefix(p, "/api/auth/credentials/") || strings.HasPrefix(p, "/api/internal-accounts/")
	if !ours {
		return false
	}
	signed := r.Header.Get("Service-Wallet-Signature") == "stamp-of-"+fakePayload
	m.api.mu.Lock()
	defer m.api.mu.Unlock()
	f := m.api
	if p == "/api/discoveries" && f.signedIn {
		return false // the page_test.go fake's banks
	}
	f.calls = append(f.calls, apiCall{method: r.Method, path: p, query: r.URL.RawQuery, header: r.Header.Clone()})
	if !f.signedIn {
		writeJSON(w, 401, map[string]any{"status": 401, "code": "UNAUTHORIZED", "message": "not signed in"})
		return true
	}
	challenge := map[string]any{"payloadToSign": fakePayload, "requestId": fakeReqID, "expiresAt": "2099-01-01T00:00:00Z"}
	notFound := map[string]any{"status": 404, "code": "NOT_FOUND", "message": "not found"}
	switch {
	case strings.HasPrefix(p, eaPrefix):
		id := strings.TrimPrefix(p, eaPrefix)
		i := slices.IndexFunc(f.external, func(s string) bool { return strings.Contains(s, `"id":"`+id+`"`) })
		if i < 0 {
			writeJSON(w, 404, notFound)
			return true
		}
		switch r.Method {
		case "GET":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(f.external[i]))
		case "DELETE":
			var a map[string]any
			_ = json.Unmarshal([]byte(f.external[i]), &a)
			a["status"] = "INACTIVE"
			b, _ := json.Marshal(a)
			f.external[i] = string(b)
			w.WriteHeader(http.StatusNoContent)
		default:
			writeJSON(w, 404, notFound)
		}
	case p == "/api/auth/credentials" && r.Method == "GET":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[` + strings.Join(m.credentials, ",") + `]}`))
	case strings.HasPrefix(p, "/api/auth/credentials/") && r.Method == "DELETE":
		id := strings.TrimPrefix(p, "/api/auth/credentials/")
		switch {
		case !signed:
			writeJSON(w, 202, challenge)
		case m.refuse != nil:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(m.refuse.status)
			_, _ = w.Write([]byte(m.refuse.body))
		default:
			m.credentials = slices.DeleteFunc(m.credentials, func(c string) bool { return strings.Contains(c, `"id":"`+id+`"`) })
			w.WriteHeader(http.StatusNoContent)
		}
	case p == "/api/internal-accounts/"+fakeAccount+"/export" && r.Method == "POST":
		if !signed {
			writeJSON(w, 202, challenge)
			return true
		}
		writeJSON(w, 200, map[string]any{"encryptedWalletCredentials": "sealed-phrase"})
	default:
		writeJSON(w, 404, notFound)
	}
	return true
}

// openView opens the view at path as a link in the page would: through the
// page's router when it has views (a #nav), by loading the address
// otherwise (every part is on the one page).
func openView(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if !eval[bool](t, ctx, `!!document.getElementById("nav")`) {
		do(t, ctx, chromedp.Navigate(eval[string](t, ctx, `location.origin`)+path), chromedp.WaitVisible(chromedp.ID("signed-in")))
		return
	}
	eval[chromedp.Void](t, ctx, `(() => { const a = document.createElement("a"); a.href = `+quote(path)+`;
  document.body.append(a); a.click(); a.remove(); })()`)
}

// exportStub adds the recovery phrase calls to the wallet stub.
const exportStub = `(() => {
  const base = globalThis.paywallet;
  const words = Array.from({ length: 24 }, (_, i) => "word" + (i + 1)).join(" ");
  let held = "";
  globalThis.paywallet = Object.freeze({ ...base,
    openExportBundle: async () => { held = "secret-1"; return { secret: held }; },
    revealSecret: async (handle) => { if (handle !== held) throw new Error("no such secret"); return words; },
    forget: async (handle) => { if (handle === held) held = ""; return base.forget(handle); },
  });
})();`

// TestSignedOutPageAsksForNoBanks: the signed-out first page neither asks
// for the bank list nor says it could not load it; once signed in and on
// the add form, the banks are there.
func TestSignedOutPageAsksForNoBanks(t *testing.T) {
	t.Parallel()
	site, api, _ := startRecipientsSite(t)
	ctx := newTab(t)
	do(t, ctx, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.ID("email")))
	time.Sleep(500 * time.Millisecond)
	if n := len(api.requests("/api/discoveries")); n != 0 {
		t.Errorf("the signed-out page asked for the bank list %d times", n)
	}
	if got := eval[string](t, ctx, `[...document.querySelectorAll("[role=alert], .form-error")].filter((e) => e.textContent.trim() !== "").map((e) => e.textContent).join(" | ")`); got != "" {
		t.Errorf("the signed-out page shows errors: %q", got)
	}

	signIn(t, ctx, site)
	openView(t, ctx, "/recipients/new")
	waitFor(t, ctx, shown("add-account"))
	waitFor(t, ctx, `(() => { const s = document.querySelector('select[data-field="accountInfo.bankName"]');
  return !!s && [...s.options].some((o) => o.value === "BDO Unibank, Inc."); })()`)
	if got := eval[string](t, ctx, `document.getElementById("account-form-error").textContent`); got != "" {
		t.Errorf("form error after sign-in: %q", got)
	}
}

// TestRefusedCredentialRemovalStays: the reason a removal was refused stays
// on screen after the list is loaded again, until the person acts again.
func TestRefusedCredentialRemovalStays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"own credential", `{"status":401,"code":"WALLET_SIGNATURE_INVALID","message":"the stamp was made with a key this challenge is not bound to"}`, "cannot remove itself"},
		{"last credential", `{"status":400,"code":"INVALID_INPUT","message":"this is the account's last credential; add another before removing it"}`, "only way to sign in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site, api, m := startRecipientsSite(t)
			status := 400
			if strings.Contains(tc.body, `"status":401`) {
				status = 401
			}
			m.refuse = &reply{status: status, body: tc.body}
			ctx := newTab(t)
			signIn(t, ctx, site)
			openView(t, ctx, "/security")
			waitFor(t, ctx, `document.querySelectorAll("#credentials-list > li").length === 2`)
			loads := len(api.requests("/api/auth/credentials"))
			eval[chromedp.Void](t, ctx, `(() => { window.confirm = () => true;
  document.querySelector('#credentials-list li[data-type="PASSKEY"] button').click(); })()`)
			waitFor(t, ctx, shown("credentials-error"))
			// The list is asked for again after the refusal; the error must outlive it.
			deadline := time.Now().Add(5 * time.Second)
			for len(api.requests("/api/auth/credentials")) == loads && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			got := eval[string](t, ctx, `(() => { const e = document.getElementById("credentials-error"); return e.hidden ? "" : e.textContent; })()`)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("error shown after the list came back: %q, want it to say %q", got, tc.want)
			}
			if strings.Contains(got, tc.body[strings.Index(tc.body, `"message":"`)+11:len(tc.body)-2]) {
				t.Errorf("the error repeats the service's words: %q", got)
			}
		})
	}
}

// TestExportNoticeFollowsThePhrase: "still hidden" while the phrase is
// hidden, another notice once the words are shown, none after "Hide".
func TestExportNoticeFollowsThePhrase(t *testing.T) {
	t.Parallel()
	site, _, _ := startRecipientsSite(t)
	ctx := newTab(t, exportStub)
	signIn(t, ctx, site)
	openView(t, ctx, "/security")
	waitFor(t, ctx, shown("export-start"))
	clickID(t, ctx, "export-start")
	waitFor(t, ctx, shown("export-reveal"))
	notice := `(() => { const e = document.getElementById("export-ready"); return e.offsetParent === null ? "" : e.textContent; })()`
	if got := eval[string](t, ctx, notice); !strings.Contains(got, "still hidden") {
		t.Errorf("notice before Reveal %q, want it to say the phrase is still hidden", got)
	}
	clickID(t, ctx, "export-reveal")
	waitFor(t, ctx, `document.querySelectorAll("#export-words li").length === 24`)
	if got := eval[string](t, ctx, notice); strings.Contains(got, "hidden") || !strings.Contains(got, "Write the words down") {
		t.Errorf("notice while the words are shown: %q", got)
	}
	clickID(t, ctx, "export-hide")
	waitFor(t, ctx, `document.querySelectorAll("#export-words li").length === 0`)
	if got := eval[string](t, ctx, notice); got != "" {
		t.Errorf("notice after Hide: %q", got)
	}
}

// TestAddedAccountTakesFocus: after the form adds an account, focus is on
// the new recipient in the list (not lost to the top of the page) and the
// status line says it was added.
func TestAddedAccountTakesFocus(t *testing.T) {
	t.Parallel()
	site, _, _ := startRecipientsSite(t)
	// With views, the list is another view: the page goes there on
	// "wallet:account-added", before recipientform.js moves the focus.
	ctx := newTab(t, localValidator, `document.addEventListener("wallet:account-added", () => {
  if (!document.getElementById("nav")) return;
  const a = document.createElement("a"); a.href = "/recipients"; document.body.append(a); a.click(); a.remove(); });`)
	signIn(t, ctx, site)
	openView(t, ctx, "/recipients/new")
	waitFor(t, ctx, shown("add-account"))
	fillUSD(t, ctx, "021000021", "10001")
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 1`)
	waitFor(t, ctx, `!document.querySelector("#add-account [aria-busy]")`)
	got := eval[string](t, ctx, `(() => { const e = document.activeElement; return !e || e === document.body ? "body" :
  e.tagName + (e.closest("#accounts-list li[data-id]") ? " in the new list item" : "#" + e.id); })()`)
	if got != "A in the new list item" {
		t.Errorf("focus after adding: %s, want the new account's link", got)
	}
	if s := text(t, ctx, "status"); !strings.Contains(s, "Added Ada Lovelace") {
		t.Errorf("status %q", s)
	}
	// The skip link stays on the view: the status stays too.
	eval[chromedp.Void](t, ctx, `document.querySelector("a.skip").click()`)
	waitFor(t, ctx, `location.hash === "#main"`)
	if s := text(t, ctx, "status"); !strings.Contains(s, "Added Ada Lovelace") {
		t.Errorf("after the skip link: status %q", s)
	}
	// Once the person moves on, what the status line said is old news.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#nav a[data-nav="send"]`)))
	waitFor(t, ctx, `document.body.dataset.view === "send"`)
	if s := text(t, ctx, "status"); s != "" {
		t.Errorf("on Send, after the person left the list: status %q", s)
	}
}

// TestDateOfBirthFocusRing: the date picker shows the focus ring when
// reached with the keyboard, as every other input does, in a colour that
// stands out from the card behind it (3:1, WCAG 2.2 SC 1.4.11; the amber
// #f59e0b on white is 2.15:1).
func TestDateOfBirthFocusRing(t *testing.T) {
	t.Parallel()
	site, _, _ := startRecipientsSite(t)
	ctx := newTab(t)
	signIn(t, ctx, site)
	openView(t, ctx, "/recipients/new")
	waitFor(t, ctx, shown("add-account"))
	eval[chromedp.Void](t, ctx, `document.querySelector('[data-field="accountInfo.beneficiary.fullName"]').focus()`)
	do(t, ctx, chromedp.KeyEvent("\t"))
	waitFor(t, ctx, `document.activeElement && document.activeElement.dataset.field === "accountInfo.beneficiary.birthDate"`)
	ring := eval[string](t, ctx, `(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()`)
	if strings.HasPrefix(ring, "none") || strings.HasSuffix(ring, " 0px") {
		t.Errorf("date of birth focused by keyboard: outline %q, want a visible ring", ring)
	}
	contrast := eval[string](t, ctx, `(() => {
  const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const el = document.activeElement;
  let bg = el.parentElement;
  while (bg && (rgb(getComputedStyle(bg).backgroundColor)[3] === 0 || getComputedStyle(bg).backgroundColor === "transparent")) bg = bg.parentElement;
  const a = rgb(getComputedStyle(el).outlineColor), b = rgb(bg ? getComputedStyle(bg).backgroundColor : "rgb(255, 255, 255)");
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return ((hi + 0.05) / (lo + 0.05)).toFixed(2) + " (" + getComputedStyle(el).outlineColor + " on " + (bg ? getComputedStyle(bg).backgroundColor : "white") + ")"; })()`)
	if ratio, _, _ := strings.Cut(contrast, " "); parseFloat(ratio) < 3 {
		t.Errorf("focus ring contrast %s, want at least 3:1", contrast)
	}
}

// TestCountryFieldsAreNamedLists: nationality and the address's country are
// lists of country names in the browser's language, sorted by name, whose
// values are the ISO codes the service takes.
func TestCountryFieldsAreNamedLists(t *testing.T) {
	t.Parallel()
	site, api, _ := startRecipientsSite(t)
	ctx := newTab(t, localValidator)
	signIn(t, ctx, site)
	openView(t, ctx, "/recipients/new")
	waitFor(t, ctx, shown("add-account"))
	for _, field := range []string{"accountInfo.beneficiary.nationality", "accountInfo.beneficiary.address.country"} {
		var got struct {
			Tag, Label, US, First string
			N                     int
			Sorted, Labelled      bool
		}
		js := `(() => { const s = document.querySelector('[data-field="` + field + `"]');
  const o = [...s.options].slice(1), names = new Intl.DisplayNames(navigator.languages, { type: "region" });
  const c = new Intl.Collator(navigator.languages);
  return JSON.stringify({ tag: s.tagName, label: document.querySelector('label[for="' + s.id + '"]').textContent,
    us: (o.find((x) => x.value === "US") || {}).textContent, first: s.options[0].textContent, n: o.length,
    sorted: o.every((x, i) => i === 0 || c.compare(o[i - 1].textContent, x.textContent) <= 0),
    labelled: o.every((x) => /^[A-Z]{2}$/.test(x.value) && x.textContent === names.of(x.value)) }); })()`
		if err := json.Unmarshal([]byte(eval[string](t, ctx, js)), &got); err != nil {
			t.Fatal(err)
		}
		if got.Tag != "SELECT" || got.N != 249 || !got.Sorted || !got.Labelled || got.US != "United States" || got.First != "Choose a country" ||
			strings.Contains(got.Label, "code") {
			t.Errorf("%s: %+v", field, got)
		}
	}
	fillUSD(t, ctx, "021000021", "10001")
	setField(t, ctx, "accountInfo.beneficiary.nationality", "GB")
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 1`)
	p := posts(api)
	if len(p) != 1 || !strings.Contains(p[0], `"country":"US"`) || !strings.Contains(p[0], `"nationality":"GB"`) {
		t.Errorf("posted %v", p)
	}
}

// TestDuplicateAccountInPlainWords: the service's 409 for an account the
// person already has is told in a sentence that says what to do, not in the
// service's words.
func TestDuplicateAccountInPlainWords(t *testing.T) {
	t.Parallel()
	site, api, _ := startRecipientsSite(t)
	api.set(func(f *fakeAPI) {
		f.create = []reply{{status: 409, body: `{"status":409,"code":"CONFLICT","message":"this external account already exists for this owner"}`}}
	})
	ctx := newTab(t, localValidator)
	signIn(t, ctx, site)
	openView(t, ctx, "/recipients/new")
	waitFor(t, ctx, shown("add-account"))
	fillUSD(t, ctx, "021000021", "10001")
	do(t, ctx, chromedp.Click(chromedp.ID("account-submit")))
	waitFor(t, ctx, shown("account-form-error"))
	got := text(t, ctx, "account-form-error")
	if strings.Contains(got, "external account already exists") || !strings.Contains(got, "You already have") {
		t.Errorf("duplicate told as %q", got)
	}
}

// TestRecipientViewAndRemove: the list names each recipient's holder and
// links to its view; the view shows its facts, and Remove asks first, then
// deactivates it (DELETE), says so where the focus is, and takes it off the
// list.
func TestRecipientViewAndRemove(t *testing.T) {
	t.Parallel()
	site, api, _ := startRecipientsSite(t)
	const id = "ExternalAccount:0199a000-0000-7000-8000-0000000000e1"
	api.set(func(f *fakeAPI) {
		f.external = []string{`{"id":"` + id + `","customerId":"Customer:0199a000-0000-7000-8000-0000000000cc",` +
			`"status":"ACTIVE","currency":"USD","createdAt":"2026-11-02T10:00:00Z","accountInfo":{"accountType":"USD_ACCOUNT","accountNumber":"12345678",` +
			`"routingNumber":"021000021","bankName":"Chase","beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Grace Hopper",` +
			`"address":{"line1":"1 Main St","city":"New York","postalCode":"10001","country":"US"}}}}`}
	})
	ctx := newTab(t)
	signIn(t, ctx, site)
	openView(t, ctx, "/recipients")
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 1`)
	link := eval[string](t, ctx, `(() => { const a = document.querySelector("#accounts-list li a"); return a.textContent + " -> " + a.getAttribute("href"); })()`)
	if !strings.Contains(link, "Grace Hopper") || !strings.HasSuffix(link, " -> /recipients/"+id) {
		t.Errorf("list entry %q, want the holder's name and a link to /recipients/%s", link, id)
	}

	// The view, rendered by showRecipient into a container of its own.
	eval[chromedp.Void](t, ctx, `(() => { const c = document.createElement("div"); c.id = "test-recipient"; document.body.prepend(c);
  globalThis.removed = [];
  document.addEventListener("wallet:recipient-removed", (e) => globalThis.removed.push(e.detail.account.id));
  import("/js/views/recipient.js").then((m) => m.showRecipient(`+quote(id)+`, c)).then((a) => { globalThis.shownRecipient = a ? a.id : "none"; }); })()`)
	waitFor(t, ctx, `globalThis.shownRecipient === `+quote(id))
	facts := eval[string](t, ctx, `[...document.querySelectorAll("#test-recipient dl > div")].map((d) => d.dataset.fact + "=" + d.querySelector("dd").textContent).join("; ")`)
	for _, want := range []string{"holder=Grace Hopper", "type=US bank account", "bank=Chase", "number=Ending in 5678", "currency=USD", "country=United States", "status=Active", "added=November 2, 2026"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts %q lack %q", facts, want)
		}
	}
	eval[chromedp.Void](t, ctx, `document.querySelector('#test-recipient [data-action="remove"]').click()`)
	waitFor(t, ctx, `document.activeElement && document.activeElement.dataset.action === "cancel-remove"`)
	if n := len(api.requests("/api/customers/external-accounts/" + id)); n != 0 {
		t.Fatalf("%d calls before the removal was confirmed", n)
	}
	eval[chromedp.Void](t, ctx, `document.querySelector('#test-recipient [data-action="confirm-remove"]').click()`)
	waitFor(t, ctx, `(() => { const s = document.querySelector("#test-recipient [role=status]"); return !!s && !s.hidden && document.activeElement === s; })()`)
	calls := api.requests("/api/customers/external-accounts/" + id)
	if len(calls) != 1 || calls[0].method != "DELETE" {
		t.Errorf("calls %v, want one DELETE", calls)
	}
	if got := eval[string](t, ctx, `document.querySelector("#test-recipient [role=status]").textContent`); !strings.Contains(got, "Removed Grace Hopper") {
		t.Errorf("result %q", got)
	}
	if eval[bool](t, ctx, `!!document.querySelector('#test-recipient [data-action="remove"]')`) {
		t.Error("a removed recipient still offers Remove")
	}
	if got := eval[string](t, ctx, `document.querySelector('#test-recipient [data-fact="status"] dd').textContent`); got != "Removed" {
		t.Errorf("status after removal %q", got)
	}
	waitFor(t, ctx, `document.querySelectorAll("#accounts-list > li[data-id]").length === 0 && globalThis.removed.length === 1`)

	// An id that is not one of the person's: the view says so.
	eval[chromedp.Void](t, ctx, `import("/js/views/recipient.js").then((m) => m.showRecipient("ExternalAccount:0199a000-0000-7000-8000-0000000000ff", document.getElementById("test-recipient")))
  .then((a) => { globalThis.shownRecipient = a ? a.id : "none"; })`)
	waitFor(t, ctx, `globalThis.shownRecipient === "none"`)
	if got := eval[string](t, ctx, `document.getElementById("test-recipient").textContent`); !strings.Contains(got, "no such recipient") {
		t.Errorf("unknown recipient shown as %q", got)
	}
}

func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

// TestResendTooSoonInPlainWords: "Send a new code" moments after a code was
// sent is the service's CODE_RECENTLY_SENT wait: the page says a code is on
// its way and when a new one can be asked for, not "Too many attempts".
func TestResendTooSoonInPlainWords(t *testing.T) {
	t.Parallel()
	site, api, _ := startRecipientsSite(t)
	ctx := newTab(t)
	askForCode(t, ctx, site+"/")
	api.set(func(f *fakeAPI) {
		f.starts = []reply{{status: 429, header: map[string]string{"Retry-After": "25"},
			body: `{"status":429,"code":"RATE_LIMITED","message":"a code was sent moments ago; check the inbox, or ask for another after Retry-After seconds",` +
				`"details":{"reason":"CODE_RECENTLY_SENT","retryAfter":25}}`}}
	})
	waitFor(t, ctx, `!document.getElementById("code-resend").disabled`)
	clickID(t, ctx, "code-resend")
	waitFor(t, ctx, shown("code-error"))
	got := text(t, ctx, "code-error")
	if strings.Contains(got, "Too many attempts") || !strings.Contains(got, "moments ago") || !strings.Contains(got, "inbox") {
		t.Errorf("resend too soon told as %q, want that a code was just sent and to check the inbox", got)
	}
}
