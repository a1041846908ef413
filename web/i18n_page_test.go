package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// languageTab opens a tab of the fake site whose browser reads the given
// languages, best first: navigator.languages and navigator.language say so
// before the page's scripts run, and Intl's default locale is the first one.
func languageTab(t *testing.T, languages ...string) context.Context {
	t.Helper()
	list := `["` + strings.Join(languages, `","`) + `"]`
	ctx := newTab(t, `(() => {
  const list = Object.freeze(`+list+`);
  Object.defineProperty(Navigator.prototype, "languages", { configurable: true, get: () => list });
  Object.defineProperty(Navigator.prototype, "language", { configurable: true, get: () => list[0] });
})();`)
	icu := strings.ReplaceAll(languages[0], "-", "_")
	if _, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: icu}); err != nil {
		t.Fatalf("locale override: %v", err)
	}
	return ctx
}

// pageTexts reads what a person sees of the page's frame: the texts of the
// sign-in page, the header, the navigation and Home, by id or selector.
func pageTexts(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	return eval[map[string]string](t, ctx, `(() => {
  const text = (sel) => { const el = document.querySelector(sel); return el ? el.textContent.trim().replace(/\s+/g, " ") : "<none>"; };
  const out = {
    lang: document.documentElement.lang, title: document.title,
    loginTitle: text("#login-title"), emailLabel: text("label[for=email]"), emailSubmit: text("#email-submit"),
    codeHint: text("#code-hint"), codeSubmit: text("#code-submit"), resend: text("#code-resend"),
    logout: text("#logout"), navLabel: document.getElementById("nav").getAttribute("aria-label"),
    skip: text(".skip"), footer: text("footer"), sandbox: text("#sandbox-banner"),
    walletTitle: text("#wallet-title"), balanceTitle: text("#balance-title"), available: text("#balance dt"),
    balance: text("#account-balance"), send: text("#home-send"), addFunds: text("#home-fund"),
    recent: text("#recent-title"), status: text("#status"),
    walletType: text("#wallet-type"), accountStatus: text("#account-status"),
  };
  for (const a of document.querySelectorAll("#nav a[data-nav]")) out["nav." + a.dataset.nav] = text("#nav a[data-nav=" + a.dataset.nav + "]");
  return out;
})()`)
}

// untranslated lists the marked elements of the page's frame (header,
// navigation, sign-in page, Home, footer) whose text or attributes are not
// the catalogue's message for the page's language.
func untranslated(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var out []string
	inPage(t, ctx, `
  const i = await import("/js/i18n.js");
  const messages = await i.loadCatalogue(i.getLanguage());
  const wrong = [];
  const roots = document.querySelectorAll("header, #nav, #login, #view-home, footer, .skip, #sandbox-banner");
  for (const root of roots) {
    for (const el of [root, ...root.querySelectorAll("[data-i18n], [data-i18n-attr]")]) {
      const key = el.getAttribute("data-i18n");
      // Texts the page writes itself once shown (the sign-in button of a
      // named provider) are left out.
      if (key && key !== "signin.oauth.button" && typeof messages[key] === "string" && el.textContent.trim() !== messages[key]) {
        wrong.push(key + ": " + JSON.stringify(el.textContent.trim()));
      }
      for (const pair of (el.getAttribute("data-i18n-attr") || "").split(",").filter(Boolean)) {
        const [name, attrKey] = pair.split(":");
        if (typeof messages[attrKey] === "string" && el.getAttribute(name) !== messages[attrKey]) {
          wrong.push(attrKey + " (" + name + "): " + JSON.stringify(el.getAttribute(name)));
        }
      }
    }
  }
  return wrong;`, &out)
	return out
}

// inPage runs an async function body in the page and stores its result.
func inPage(t *testing.T, ctx context.Context, body string, out any) {
	t.Helper()
	js := "(async () => JSON.stringify(await (async () => {" + body + "})()))()"
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("in the page: %v", err)
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
}

func checkTexts(t *testing.T, stage string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s = %q, want %q", stage, k, got[k], w)
		}
	}
}

// TestPageInGerman: a browser that reads German gets the sign-in page, the
// navigation, Home and the document titles in German (the catalogue's
// de.js, "du"), with the amounts of Home in de-DE conventions.
func TestPageInGerman(t *testing.T) {
	t.Parallel()
	site, _ := startSite(t)
	ctx := languageTab(t, "de-DE", "de")

	do(t, ctx, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.ID("email")))
	waitFor(t, ctx, `document.documentElement.lang === "de" && document.getElementById("login-title").textContent === "Anmelden"`)
	checkTexts(t, "sign-in page", pageTexts(t, ctx), map[string]string{
		"lang": "de", "title": "Anmelden · Wallet", "loginTitle": "Anmelden", "emailLabel": "E-Mail-Adresse",
		"emailSubmit": "Code senden", "skip": "Zum Inhalt springen",
		"sandbox": "Sandbox. Das ist eine Testumgebung: Es wird kein echtes Geld bewegt.",
	})
	if wrong := untranslated(t, ctx); len(wrong) > 0 {
		t.Errorf("sign-in page: not in German: %v", wrong)
	}

	// A wrong address reads in German too.
	do(t, ctx, chromedp.Click(chromedp.ID("email-submit")))
	waitFor(t, ctx, shown("email-error"))
	if got := text(t, ctx, "email-error"); got != "Gib deine E-Mail-Adresse ein." {
		t.Errorf("empty e-mail: %q", got)
	}

	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.Click(chromedp.ID("email-submit")),
		chromedp.WaitVisible(chromedp.ID("code")),
	)
	checkTexts(t, "code step", pageTexts(t, ctx), map[string]string{
		"codeHint":   "Gib den 6-stelligen Code ein, den wir an ada@example.com geschickt haben.",
		"codeSubmit": "Anmelden", "resend": "Neuen Code senden",
		"status": "Wir haben einen Code an ada@example.com geschickt.",
	})
	if got := eval[string](t, ctx, `document.querySelector("#code-hint strong#code-email").textContent`); got != "ada@example.com" {
		t.Errorf("the address in the hint: %q", got)
	}
	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("code"), "123456"),
		chromedp.Click(chromedp.ID("code-submit")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
	waitFor(t, ctx, `document.getElementById("account-balance").textContent !== ""`)
	got := pageTexts(t, ctx)
	checkTexts(t, "Home", got, map[string]string{
		"title": "Start · Wallet", "logout": "Abmelden", "navLabel": "Wallet",
		"nav.home": "Start", "nav.send": "Senden", "nav.activity": "Aktivität", "nav.recipients": "Empfänger", "nav.security": "Sicherheit",
		"walletTitle": "Dein Wallet", "balanceTitle": "Guthaben", "available": "Verfügbar",
		"send": "Senden", "addFunds": "Geld hinzufügen", "recent": "Letzte Aktivität",
		"status": "Du bist angemeldet.", "walletType": "Eingebettetes Wallet", "accountStatus": "Aktiv",
		"footer": "Deine privaten Schlüssel verwahrt dieser Browser so, dass keine Webseite sie lesen kann, auch diese nicht. Beim Abmelden werden sie gelöscht.",
	})
	// 123456 cents of USD, written by formatMoney in de-DE: a point groups
	// thousands, a comma marks the cents, the symbol follows.
	if b := strings.ReplaceAll(got["balance"], "\u00a0", " "); b != "1.234,56 $ USD" {
		t.Errorf("balance %q, want 1.234,56 $ USD", got["balance"])
	}
	if wrong := untranslated(t, ctx); len(wrong) > 0 {
		t.Errorf("Home: not in German: %v", wrong)
	}

	// The sandbox form takes an amount the German way.
	clickID(t, ctx, "home-fund")
	waitFor(t, ctx, shown("fund-form"))
	if got := eval[string](t, ctx, `document.getElementById("fund-amount").placeholder + " | " + document.getElementById("fund-amount-label").textContent`); got != "100,00 | Betrag in USD" {
		t.Errorf("funding form: %q", got)
	}
	typeInto(t, ctx, "fund-amount", "12.50")
	clickID(t, ctx, "fund-submit")
	waitFor(t, ctx, shown("fund-error"))
	if got := text(t, ctx, "fund-error"); !strings.Contains(got, "„,“") {
		t.Errorf("12.50 in German: %q, want the hint to use “,”", got)
	}

	// Every view's title.
	for _, v := range []struct{ path, view, title string }{
		{"/send", "send", "Geld senden · Wallet"},
		{"/activity", "activity", "Aktivität · Wallet"},
		{"/recipients", "recipients", "Empfänger · Wallet"},
		{"/security", "security", "Sicherheit · Wallet"},
	} {
		goTo(t, ctx, v.path, v.view)
		if got := eval[string](t, ctx, `document.title`); got != v.title {
			t.Errorf("%s: title %q, want %q", v.path, got, v.title)
		}
	}
	if got := eval[string](t, ctx, `document.getElementById("security-title").textContent + " | " + document.querySelector("#sessions .badge").textContent`); got != "Sicherheit | Dieses Gerät" {
		t.Errorf("Security: %q", got)
	}
}

// TestPageInEnglish: with English, the page reads exactly as it did before
// its texts came from the catalogue.
func TestPageInEnglish(t *testing.T) {
	t.Parallel()
	site, _ := startSite(t)
	ctx := languageTab(t, "en-US", "en")
	do(t, ctx, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.ID("email")))
	waitFor(t, ctx, `document.title === "Sign in · Wallet"`)
	checkTexts(t, "sign-in page", pageTexts(t, ctx), map[string]string{
		"lang": "en", "loginTitle": "Sign in", "emailLabel": "E-mail address", "emailSubmit": "Send code",
		"skip": "Skip to content", "sandbox": "Sandbox. This is a test environment: no real money moves.",
	})
	if wrong := untranslated(t, ctx); len(wrong) > 0 {
		t.Errorf("sign-in page: %v", wrong)
	}
	signIn(t, ctx, site)
	waitFor(t, ctx, `document.getElementById("account-balance").textContent !== ""`)
	checkTexts(t, "Home", pageTexts(t, ctx), map[string]string{
		"title": "Home · Wallet", "logout": "Sign out", "navLabel": "Wallet",
		"nav.home": "Home", "nav.send": "Send", "nav.activity": "Activity", "nav.recipients": "Recipients", "nav.security": "Security",
		"walletTitle": "Your wallet", "balanceTitle": "Balance", "available": "Available", "balance": "$1,234.56 USD",
		"send": "Send", "addFunds": "Add funds", "recent": "Recent activity", "status": "You are signed in.",
		"codeHint":   "Enter the 6-digit code we sent to ada@example.com.",
		"walletType": "Embedded wallet", "accountStatus": "Active",
		"footer": "Your private keys are kept by this browser so that no web page, this one included, can read them, and are deleted when you sign out.",
	})
	if wrong := untranslated(t, ctx); len(wrong) > 0 {
		t.Errorf("Home: %v", wrong)
	}
	goTo(t, ctx, "/send", "send")
	if got := eval[string](t, ctx, `document.title`); got != "Send money · Wallet" {
		t.Errorf("Send: title %q", got)
	}
}
