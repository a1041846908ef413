package web

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// format.js (money in the person's locale) and i18n.js (the message
// catalogue), imported by a blank page of the embedded site in headless
// Chromium, whose Intl (ICU) is what people's browsers have. Each test sends
// its table to the page as JSON and checks what comes back.

// moduleTab serves the embedded files with the BFF's CSP plus an empty page,
// /blank.html, and opens it in Chromium after running scripts (before any
// of the page's own) in it.
func moduleTab(t *testing.T, scripts ...string) context.Context {
	t.Helper()
	return moduleTabWith(t, nil, scripts...)
}

// moduleTabWith is moduleTab with some scripts of the site replaced:
// replaced maps a URL path to the JavaScript served there instead.
func moduleTabWith(t *testing.T, replaced map[string]string, scripts ...string) context.Context {
	t.Helper()
	files := http.FileServer(http.FS(Files()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		if js, ok := replaced[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write([]byte(js))
			return
		}
		if r.URL.Path == "/blank.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>modules</title></head><body></body></html>`))
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t, 60*time.Second)
	for _, src := range scripts {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, chromedp.Navigate(srv.URL+"/blank.html"))
	return ctx
}

// inModules runs body (an async function body in which f is format.js, i
// is i18n.js and input is in, as JSON) in the tab and decodes its result
// into out. BigInts come back as strings.
func inModules(t *testing.T, ctx context.Context, in any, body string, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	js := `(async () => {
  const f = await import("/js/format.js");
  const i = await import("/js/i18n.js");
  f.setCurrencies(` + currencyFacts + `); // as the page does with GET /api/config's
  const input = ` + string(b) + `;
  const result = await (async () => {` + body + `})();
  return JSON.stringify(result, (k, v) => (typeof v === "bigint" ? v.toString() : v));
})()`
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("in the page: %v", err)
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
}

// spaces writes every kind of space as " ", for readable tables; the
// no-break kinds are checked apart.
var spaces = strings.NewReplacer("\u00a0", " ", "\u202f", " ", "\u2009", " ")

// serviceCurrencies reads the service's currency table: code → decimals.
func serviceCurrencies(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile("../service/rates/rates.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Currencies []struct {
			Code     string `json:"code"`
			Decimals int    `json:"decimals"`
		} `json:"currencies"`
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, c := range table.Currencies {
		out[c.Code] = c.Decimals
	}
	return out
}

// TestFormatMoney: every currency of the service in four locales, exact
// amounts beyond 2^53, BTC and sats, signs, and what is not an amount.
func TestFormatMoney(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	locales := []string{"en-US", "de-DE", "fr-FR", "en-IN"}
	// 123456789 in the smallest unit of each currency.
	want := [][5]string{
		{"USD", "$1,234,567.89", "1.234.567,89 $", "1 234 567,89 $US", "$12,34,567.89"},
		{"EUR", "€1,234,567.89", "1.234.567,89 €", "1 234 567,89 €", "€12,34,567.89"},
		{"GBP", "£1,234,567.89", "1.234.567,89 £", "1 234 567,89 £GB", "£12,34,567.89"},
		{"MXN", "MX$1,234,567.89", "1.234.567,89 MX$", "1 234 567,89 $MX", "MX$12,34,567.89"},
		{"BRL", "R$1,234,567.89", "1.234.567,89 R$", "1 234 567,89 R$", "R$12,34,567.89"},
		{"COP", "COP 1,234,567.89", "1.234.567,89 COP", "1 234 567,89 $CO", "COP 12,34,567.89"},
		{"INR", "₹1,234,567.89", "1.234.567,89 ₹", "1 234 567,89 ₹", "₹12,34,567.89"},
		{"PHP", "₱1,234,567.89", "1.234.567,89 PHP", "1 234 567,89 PHP", "₱12,34,567.89"},
		{"NGN", "NGN 1,234,567.89", "1.234.567,89 NGN", "1 234 567,89 NGN", "NGN 12,34,567.89"},
		{"ZAR", "ZAR 1,234,567.89", "1.234.567,89 ZAR", "1 234 567,89 ZAR", "ZAR 12,34,567.89"},
		{"CAD", "CA$1,234,567.89", "1.234.567,89 CA$", "1 234 567,89 $CA", "CA$12,34,567.89"},
		{"AED", "AED 1,234,567.89", "1.234.567,89 AED", "1 234 567,89 AED", "AED 12,34,567.89"},
		{"KES", "KES 1,234,567.89", "1.234.567,89 KES", "1 234 567,89 KES", "KES 12,34,567.89"},
		{"TZS", "TZS 1,234,567.89", "1.234.567,89 TZS", "1 234 567,89 TZS", "TZS 12,34,567.89"},
		{"ZMW", "ZMW 1,234,567.89", "1.234.567,89 ZMW", "1 234 567,89 ZMW", "ZMW 12,34,567.89"},
		{"RWF", "RWF 123,456,789", "123.456.789 RWF", "123 456 789 RWF", "RWF 12,34,56,789"},
		{"MWK", "MWK 1,234,567.89", "1.234.567,89 MWK", "1 234 567,89 MWK", "MWK 12,34,567.89"},
		{"UGX", "UGX 123,456,789", "123.456.789 UGX", "123 456 789 UGX", "UGX 12,34,56,789"},
		{"XOF", "F CFA 123,456,789", "123.456.789 F CFA", "123 456 789 F CFA", "F CFA 12,34,56,789"},
		{"BTC", "1.23456789 BTC", "1,23456789 BTC", "1,23456789 BTC", "1.23456789 BTC"},
	}
	service := serviceCurrencies(t)
	var table struct {
		Decimals  map[string]int    `json:"decimals"`
		Formatted [][]string        `json:"formatted"`
		Objects   map[string]string `json:"objects"`
	}
	codes := make([]string, len(want))
	for i, w := range want {
		codes[i] = w[0]
	}
	inModules(t, ctx, map[string]any{"codes": codes, "locales": locales, "service": service}, `
  await i.setLocale("en-US");
  return {
    // The decimals of a bare code: those of GET /api/config's currencies.
    decimals: Object.fromEntries(input.codes.map((c) => [c, (f.decimalAmount(1, c).split(".")[1] || "").length])),
    formatted: input.codes.map((c) => input.locales.map((l) => f.formatMoney(123456789n, c, { locale: l }))),
    // The service's Currency objects, with their own decimals, say the same.
    objects: Object.fromEntries(input.codes.map((c) => [c, f.formatMoney("123456789", { code: c, decimals: input.service[c], symbol: "?" }, { locale: "de-DE" })])),
  };`, &table)

	if len(service) != 20 || len(want) != len(service) {
		t.Errorf("the service has %d currencies, the table %d: add the new ones to shared/accountrules' currencies and here", len(service), len(want))
	}
	for code, decimals := range service {
		if got, ok := table.Decimals[code]; !ok || got != decimals {
			t.Errorf("format.js writes %s with %d decimals (%v), the service says %d", code, got, ok, decimals)
		}
	}
	for i, w := range want {
		for j, locale := range locales {
			got := table.Formatted[i][j]
			if spaces.Replace(got) != w[j+1] {
				t.Errorf("formatMoney(123456789, %s, %s) = %q, want %q", w[0], locale, got, w[j+1])
			}
			if strings.Contains(got, " ") {
				t.Errorf("formatMoney(123456789, %s, %s) = %q has a space that may break the line", w[0], locale, got)
			}
		}
		if got := spaces.Replace(table.Objects[w[0]]); got != w[2] {
			t.Errorf("formatMoney of a %s Currency object in de-DE = %q, want %q", w[0], got, w[2])
		}
	}

	// Exact amounts, BTC, signs, and what is not an amount. "n:" makes a
	// JavaScript Number of the rest, "big:" a BigInt; other amounts are
	// strings.
	cases := []struct {
		Amount   any            `json:"amount"`
		Currency any            `json:"currency"`
		Locale   string         `json:"locale"`
		Options  map[string]any `json:"options,omitempty"`
		Want     string         `json:"-"`
	}{
		{"9223372036854775807", "USD", "en-US", nil, "$92,233,720,368,547,758.07"},
		{"-9223372036854775808", "USD", "de-DE", nil, "-92.233.720.368.547.758,08 $"},
		{"big:9007199254740993", "BTC", "en-US", nil, "90,071,992.54740993 BTC"},
		{"9007199254740993", "BTC", "en-US", map[string]any{"unit": "sats"}, "9,007,199,254,740,993 sats"},
		{"9007199254740993", "BTC", "fr-FR", map[string]any{"unit": "sats"}, "9 007 199 254 740 993 sats"},
		{"1", "BTC", "en-US", map[string]any{"unit": "sats"}, "1 sat"},
		{"150000", "BTC", "en-US", nil, "0.0015 BTC"},
		{"150000", "BTC", "de-DE", nil, "0,0015 BTC"},
		{"150000", "BTC", "en-US", map[string]any{"trim": false}, "0.00150000 BTC"},
		{"100000000", "BTC", "en-US", nil, "1.00 BTC"},
		{"1", "BTC", "en-US", nil, "0.00000001 BTC"},
		{"-1", "BTC", "en-US", nil, "-0.00000001 BTC"},
		{"n:123456", "USD", "en-US", nil, "$1,234.56"},
		{"n:123456", "USD", "de-DE", nil, "1.234,56 $"},
		{"n:123456", "USD", "fr-FR", nil, "1 234,56 $US"},
		{"n:5", "USD", "en-US", nil, "$0.05"},
		{"n:-5", "USD", "en-US", nil, "-$0.05"},
		{"n:5", "EUR", "de-DE", map[string]any{"signDisplay": "always"}, "+0,05 €"},
		{"n:0", "EUR", "de-DE", map[string]any{"signDisplay": "exceptZero"}, "0,00 €"},
		{"n:0", "USD", "en-US", nil, "$0.00"},
		{"n:1500", "XOF", "fr-FR", nil, "1 500 F CFA"},
		{"+42", "UGX", "en-US", nil, "UGX 42"},
		{"n:100", "JPY", "en-US", nil, "¥100"}, // not the service's: Intl's ISO decimals
		{"n:1.5", "USD", "en-US", nil, ""},
		{"12.5", "USD", "en-US", nil, ""},
		{"abc", "USD", "en-US", nil, ""},
		{"n:100", "", "en-US", nil, ""},
		{"n:100", "US", "en-US", nil, ""},
	}
	var got []string
	inModules(t, ctx, cases, `
  return input.map((c) => {
    const a = typeof c.amount !== "string" ? c.amount
      : c.amount.startsWith("n:") ? Number(c.amount.slice(2))
      : c.amount.startsWith("big:") ? BigInt(c.amount.slice(4)) : c.amount;
    return f.formatMoney(a, c.currency, { ...(c.options || {}), locale: c.locale });
  });`, &got)
	for i, c := range cases {
		if spaces.Replace(got[i]) != c.Want || strings.Contains(got[i], " ") {
			t.Errorf("formatMoney(%v, %v, %s, %v) = %q, want %q (with no-break spaces)", c.Amount, c.Currency, c.Locale, c.Options, got[i], c.Want)
		}
	}
}

// parseCase is an amount typed by a person and what parseMoney makes of it.
type parseCase struct {
	Text     string `json:"text"`
	Currency string `json:"currency"`
	Locale   string `json:"locale"`
	Unit     string `json:"unit,omitempty"`
	Max      string `json:"max,omitempty"`
	Want     string `json:"-"` // the minor units, or the reason
	Message  string `json:"-"` // when not empty, the message too
}

// TestFormatParse: amounts typed in the person's locale, what is refused
// and what it says, and round trips of formatMoney through parseMoney for
// every currency in five locales (one right to left, with its own digits).
func TestFormatParse(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	type result struct {
		OK      bool   `json:"ok"`
		Minor   string `json:"minor"`
		Amount  *int64 `json:"amount"`
		Text    string `json:"text"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	cases := []parseCase{
		{"1.234,56", "EUR", "de-DE", "", "", "123456", ""},
		{"1,234.56", "USD", "en-US", "", "", "123456", ""},
		{"1 234,56", "USD", "fr-FR", "", "", "123456", ""},
		{"1\u00a0234,56", "USD", "fr-FR", "", "", "123456", ""},
		{"1\u202f234,56", "USD", "fr-FR", "", "", "123456", ""},
		{"1 234 567,5", "EUR", "fr-FR", "", "", "123456750", ""},
		{"12,5", "EUR", "de-DE", "", "", "1250", ""},
		{",5", "EUR", "de-DE", "", "", "50", ""},
		{"7,", "EUR", "de-DE", "", "", "700", ""},
		{"12.500", "USD", "en-US", "", "", "1250", ""},
		{"12,500", "EUR", "de-DE", "", "", "1250", ""},
		{"1.234", "EUR", "de-DE", "", "", "123400", ""},
		{"1.234.567", "EUR", "de-DE", "", "", "123456700", ""},
		{"1 000", "USD", "en-US", "", "", "100000", ""},
		{"12,34,567.50", "INR", "en-IN", "", "", "123456750", ""},
		{"1'234.50", "CAD", "de-CH", "", "", "123450", ""},
		{"1’234.50", "CAD", "de-CH", "", "", "123450", ""},
		{"$12.50", "USD", "en-US", "", "", "1250", ""},
		{"12,50 €", "EUR", "de-DE", "", "", "1250", ""},
		{"usd 12.50", "USD", "en-US", "", "", "1250", ""},
		{"1500", "XOF", "fr-FR", "", "", "1500", ""},
		{"0,00000001", "BTC", "de-DE", "", "", "1", ""},
		{"1.5 BTC", "BTC", "en-US", "", "", "150000000", ""},
		{"1,500 sats", "BTC", "en-US", "sats", "", "1500", ""},
		{"21.000.000,00000000", "BTC", "de-DE", "", "", "2100000000000000", ""},
		{"90071992547409.91", "USD", "en-US", "", "", "9007199254740991", ""},
		{"90071992547409.93", "USD", "en-US", "", "9223372036854775807", "9007199254740993", ""},
		{"92233720368547758.07", "USD", "en-US", "", "9223372036854775807", "9223372036854775807", ""},
		{"١٢٫٥", "USD", "ar-EG", "", "", "1250", ""},

		{"", "USD", "en-US", "", "", "EMPTY", "Type an amount, like 12.50."},
		{"  ", "USD", "en-US", "", "", "EMPTY", ""},
		{"€", "EUR", "de-DE", "", "", "EMPTY", "Type an amount, like 12,50."},
		{"abc", "USD", "en-US", "", "", "INVALID", "Type an amount like 12.50."},
		{"abc", "EUR", "de-DE", "", "", "INVALID", "Type an amount like 12,50."},
		{"1e5", "USD", "en-US", "", "", "INVALID", ""},
		{"0x10", "USD", "en-US", "", "", "INVALID", ""},
		{"+5", "USD", "en-US", "", "", "INVALID", ""},
		{",", "EUR", "de-DE", "", "", "INVALID", ""},
		{"1,23,4", "USD", "en-US", "", "", "INVALID", ""},
		{"1.234.5", "USD", "en-US", "", "", "INVALID", ""},
		{"1.234,5", "USD", "en-US", "", "", "INVALID", ""},
		{"1.234 567", "EUR", "de-DE", "", "", "INVALID", ""},
		{"1,2,3", "EUR", "de-DE", "", "", "INVALID", ""},
		{"-3", "USD", "en-US", "", "", "NEGATIVE", "Type an amount above zero, without a minus sign."},
		{"−3", "USD", "en-US", "", "", "NEGATIVE", ""},
		{"3-", "EUR", "de-DE", "", "", "NEGATIVE", ""},
		{"0", "USD", "en-US", "", "", "ZERO", "Type an amount above zero."},
		{"0,00", "EUR", "de-DE", "", "", "ZERO", ""},
		{"1.005", "USD", "en-US", "", "", "DECIMALS", "Use at most 2 decimals for USD, like 12.50."},
		{"1,005", "EUR", "de-DE", "", "", "DECIMALS", "Use at most 2 decimals for EUR, like 12,50."},
		{"0.000000001", "BTC", "en-US", "", "", "DECIMALS", "Use at most 8 decimals for BTC, like 0.015."},
		{"12,5", "XOF", "fr-FR", "", "", "DECIMALS", "XOF has no decimals: type a whole amount, like 1500."},
		{"12.5", "XOF", "fr-FR", "", "", "DECIMALS", ""},
		{"1.5", "BTC", "en-US", "sats", "", "DECIMALS", "sats has no decimals: type a whole amount, like 1500."},
		{"12,5", "USD", "en-US", "", "", "SEPARATOR", "Use “.” for the decimals, like 12.50."},
		{"12.50", "EUR", "de-DE", "", "", "SEPARATOR", "Use “,” for the decimals, like 12,50."},
		{"12.5", "EUR", "fr-FR", "", "", "SEPARATOR", ""},
		{"1,234", "BTC", "en-US", "", "", "AMBIGUOUS", "“1,234” could be read two ways: type 1234 for the whole amount or 1.234 with decimals."},
		{"1.234", "BTC", "de-DE", "", "", "AMBIGUOUS", "“1.234” could be read two ways: type 1234 for the whole amount or 1,234 with decimals."},
		{"90071992547409.92", "USD", "en-US", "", "", "TOO_LARGE", "That is more than $90,071,992,547,409.91. Type a smaller amount."},
		{"1000,01", "EUR", "de-DE", "", "100000", "TOO_LARGE", "That is more than 1.000,00 €. Type a smaller amount."},
	}
	var got []result
	inModules(t, ctx, cases, `
  await i.setLocale("en-US");
  return input.map((c) => f.parseMoney(c.text, c.currency, { locale: c.locale, unit: c.unit, max: c.max || undefined }));`, &got)
	for i, c := range cases {
		g := got[i]
		switch {
		case g.OK && (g.Minor != c.Want || g.Text != c.Want):
			t.Errorf("parseMoney(%q, %s, %s) = %s (text %s), want %s", c.Text, c.Currency, c.Locale, g.Minor, g.Text, c.Want)
		case g.OK && c.Max == "" && (g.Amount == nil || *g.Amount < 0):
			t.Errorf("parseMoney(%q, %s, %s): amount %v, want the safe integer", c.Text, c.Currency, c.Locale, g.Amount)
		case !g.OK && g.Reason != c.Want:
			t.Errorf("parseMoney(%q, %s, %s) = %s %q, want %s", c.Text, c.Currency, c.Locale, g.Reason, g.Message, c.Want)
		case !g.OK && (g.Message == "" || c.Message != "" && spaces.Replace(g.Message) != c.Message):
			t.Errorf("parseMoney(%q, %s, %s) says %q, want %q", c.Text, c.Currency, c.Locale, g.Message, c.Message)
		}
	}
	if g := got[slices.IndexFunc(cases, func(c parseCase) bool { return c.Want == "9007199254740993" })]; g.Amount != nil {
		t.Errorf("2^53+1 came back as the Number %d: it cannot be one", *g.Amount)
	}

	// Round trips: what formatMoney writes, parseMoney reads back, in every
	// currency and locale; and the German messages.
	var trips struct {
		Failed []string          `json:"failed"`
		German map[string]string `json:"german"`
	}
	inModules(t, ctx, serviceCurrencies(t), `
  const failed = [];
  for (const code of Object.keys(input)) {
    for (const locale of ["en-US", "de-DE", "fr-FR", "en-IN", "ar-EG"]) {
      for (const amount of [1n, 5n, 100n, 123456789n, 900719925474099n]) {
        for (const unit of code === "BTC" ? ["BTC", "sats"] : ["BTC"]) {
          const shown = f.formatMoney(amount, code, { locale, unit });
          const back = f.parseMoney(shown, code, { locale, unit });
          if (!back.ok || back.minor !== amount) failed.push(code + " " + locale + " " + unit + " " + amount + ": " + shown + " → " + JSON.stringify(back.ok ? back.text : back.message));
        }
      }
    }
  }
  await i.setLocale("de-DE");
  const german = {
    separator: f.parseMoney("12.50", "EUR").message,
    decimals: f.parseMoney("1,005", "USD").message,
    decimalsOne: f.parseMoney("1,05", { code: "XYZ", decimals: 1 }).message,
    whole: f.parseMoney("1,5", "UGX").message,
    ambiguous: f.parseMoney("1.234", "BTC").message,
    sats: f.formatMoney(1500n, "BTC", { unit: "sats" }),
    sat: f.formatMoney(1n, "BTC", { unit: "sats" }),
  };
  await i.setLocale("en-US");
  return { failed, german };`, &trips)
	for _, f := range trips.Failed {
		t.Errorf("round trip: %s", f)
	}
	wantGerman := map[string]string{
		"separator":   "Trenne die Nachkommastellen mit „,“, etwa 12,50.",
		"decimals":    "Für USD sind höchstens 2 Nachkommastellen möglich, etwa 12,50.",
		"decimalsOne": "Für XYZ ist nur eine Nachkommastelle möglich, etwa 12,5.",
		"whole":       "UGX hat keine Nachkommastellen. Gib einen ganzen Betrag ein, etwa 1500.",
		"ambiguous":   "„1.234“ ist nicht eindeutig: Gib 1234 für den ganzen Betrag ein oder 1,234 mit Nachkommastellen.",
		"sats":        "1.500 Sats",
		"sat":         "1 Sat",
	}
	for k, w := range wantGerman {
		if g := spaces.Replace(trips.German[k]); g != w {
			t.Errorf("in German, %s: %q, want %q", k, g, w)
		}
	}
}

// TestFormatRate: rates from the service's representation (sending major
// units per receiving major unit) in the direction that reads as 1 or more.
func TestFormatRate(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	cases := []struct {
		Rate      float64        `json:"rate"`
		Sending   string         `json:"sending"`
		Receiving string         `json:"receiving"`
		Locale    string         `json:"locale"`
		Options   map[string]any `json:"options,omitempty"`
		Want      string         `json:"-"`
	}{
		{1.34, "USD", "GBP", "en-US", nil, "1 GBP = 1.34 USD"},
		{1.34, "USD", "GBP", "de-DE", nil, "1 GBP = 1,34 USD"},
		{1 / 1.34, "GBP", "USD", "en-US", nil, "1 GBP = 1.34 USD"},
		{0.0545, "USD", "MXN", "en-US", nil, "1 USD = 18.349 MXN"},
		{0.0545, "USD", "MXN", "fr-FR", nil, "1 USD = 18,349 MXN"},
		{0.001776, "USD", "XOF", "en-US", nil, "1 USD = 563.06 XOF"},
		{0.000255, "USD", "COP", "en-US", nil, "1 USD = 3,921.6 COP"},
		{100000, "USD", "BTC", "en-US", nil, "1 BTC = 100,000 USD"},
		{56306306.3, "XOF", "BTC", "en-US", nil, "1 BTC = 56,306,306 XOF"},
		{56306306.3, "XOF", "BTC", "de-DE", nil, "1 BTC = 56.306.306 XOF"},
		{1.1650214, "EUR", "GBP", "en-US", nil, "1 GBP = 1.165 EUR"},
		{1, "USD", "USD", "en-US", nil, "1 USD = 1 USD"},
		{0.0545, "USD", "MXN", "en-US", map[string]any{"base": "MXN"}, "1 MXN = 0.0545 USD"},
		{0.0545, "USD", "MXN", "en-US", map[string]any{"significantDigits": 3}, "1 USD = 18.3 MXN"},
		{0, "USD", "MXN", "en-US", nil, ""},
		{-1, "USD", "MXN", "en-US", nil, ""},
	}
	var got []string
	inModules(t, ctx, cases, `
  await i.setLocale("en-US");
  const rows = input.map((c) => f.formatExchangeRate(c.rate, c.sending, c.receiving, { ...(c.options || {}), locale: c.locale }));
  rows.push(f.formatExchangeRate(NaN, "USD", "MXN"), f.formatExchangeRate("1.2", "USD", "MXN"));
  return rows;`, &got)
	for i, c := range cases {
		if spaces.Replace(got[i]) != c.Want {
			t.Errorf("formatExchangeRate(%v, %s, %s, %s, %v) = %q, want %q", c.Rate, c.Sending, c.Receiving, c.Locale, c.Options, got[i], c.Want)
		}
	}
	if extra := got[len(cases):]; extra[0] != "" || extra[1] != "" {
		t.Errorf("a rate that is not a positive number: %q", extra)
	}
}

// TestLimitText: a refusal of the person's own limits in their words,
// from the refusal's details: the daily limit's says from when this
// payment fits when the service told (availableAt), and a payment over
// the limit by itself is told so; without details, the service's message.
func TestLimitText(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	const at = "2026-12-07T14:05:00Z"
	cases := []struct {
		Code    string         `json:"code"`
		Details map[string]any `json:"details,omitempty"`
		Want    string         `json:"-"`
	}{
		{"DAILY_VOLUME_LIMIT_EXCEEDED", map[string]any{"limit": 10000, "used": 4000, "amount": 6001, "currency": "USD", "availableAt": at},
			"Your limit is $100.00 in 24 hours and $40.00 went out already, so $60.00 is left for now. You can send this payment from " + "AT."},
		// Shown to the minute, rounded up: 14:04:11 is not yet 14:04.
		{"DAILY_VOLUME_LIMIT_EXCEEDED", map[string]any{"limit": 10000, "used": 4000, "amount": 6001, "currency": "USD", "availableAt": "2026-12-07T14:04:11Z"},
			"You can send this payment from " + "AT."},
		{"DAILY_VOLUME_LIMIT_EXCEEDED", map[string]any{"limit": 10000, "used": 4000, "amount": 6001, "currency": "USD"},
			"Your limit is $100.00 in 24 hours and $40.00 went out already, so $60.00 is left for now."},
		{"DAILY_VOLUME_LIMIT_EXCEEDED", map[string]any{"limit": 10000, "used": 0, "amount": 10001, "currency": "USD"},
			"This payment of $100.01 is above your limit of $100.00 in 24 hours. Send less, or change your limits in Security (a higher limit applies 24 hours later)."},
		{"DAILY_VOLUME_LIMIT_EXCEEDED", nil, "the service's words"},
	}
	var got struct {
		Rows []string `json:"rows"`
		At   string   `json:"at"`
	}
	inModules(t, ctx, cases, `
  await i.setLocale("en-US");
  const p = await import("/js/payments.js");
  return {rows: input.map((c) => p.limitText({code: c.code, details: c.details, message: "the service's words"})),
    at: f.formatTime("`+at+`")};`, &got)
	if got.At == "" {
		t.Fatal("formatTime gave nothing")
	}
	for i, c := range cases {
		if want := strings.ReplaceAll(c.Want, "AT", got.At); !strings.HasSuffix(spaces.Replace(got.Rows[i]), spaces.Replace(want)) {
			t.Errorf("limitText(%s, %v) = %q, want %q", c.Code, c.Details, got.Rows[i], want)
		}
	}
}

// TestI18nCatalogue compares the catalogues: the same keys, the same
// placeholders, every plural form the language needs; and every key the
// pages' scripts name in t("…") exists in English.
func TestI18nCatalogue(t *testing.T) {
	t.Parallel()
	ctx := moduleTab(t)
	type entry struct {
		Plural       bool     `json:"plural"`
		Forms        []string `json:"forms"`
		Placeholders []string `json:"placeholders"`
		Empty        bool     `json:"empty"`
	}
	type catalogue struct {
		Categories []string         `json:"categories"`
		Entries    map[string]entry `json:"entries"`
	}
	var cats map[string]catalogue
	inModules(t, ctx, nil, `
  const out = {};
  for (const language of i.LANGUAGES) {
    const messages = await i.loadCatalogue(language);
    const entries = {};
    for (const [key, m] of Object.entries(messages)) {
      const plural = typeof m === "object" && m !== null;
      const texts = plural ? Object.values(m) : [m];
      entries[key] = { plural, forms: plural ? Object.keys(m).sort() : [], placeholders: i.placeholders(m),
        empty: texts.some((s) => typeof s !== "string" || s.trim() === "") };
    }
    out[language] = { categories: new Intl.PluralRules(language).resolvedOptions().pluralCategories, entries };
  }
  return out;`, &cats)

	en, ok := cats["en"]
	if !ok || len(cats) < 2 {
		t.Fatalf("catalogues: %v", slices.Collect(maps.Keys(cats)))
	}
	for _, key := range []string{"nav.home", "nav.send", "nav.activity", "nav.recipients", "nav.security", "nav.signOut", "nav.addFunds"} {
		if _, ok := en.Entries[key]; !ok {
			t.Errorf("en has no %s", key)
		}
	}
	keyName := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$`)
	for language, c := range cats {
		for key, e := range c.Entries {
			if !keyName.MatchString(key) {
				t.Errorf("%s: key %q is not dotted lowerCamel words", language, key)
			}
			if e.Empty {
				t.Errorf("%s: %s is empty", language, key)
			}
			if e.Plural {
				for _, cat := range append([]string{"other"}, c.Categories...) {
					if !slices.Contains(e.Forms, cat) {
						t.Errorf("%s: %s has no %q form (it has %v)", language, key, cat, e.Forms)
					}
				}
				for _, form := range e.Forms {
					if !slices.Contains(c.Categories, form) {
						t.Errorf("%s: %s has a %q form, which %s does not use", language, key, form, language)
					}
				}
			}
			ref, ok := en.Entries[key]
			if !ok {
				t.Errorf("%s has %s, en does not", language, key)
				continue
			}
			if ref.Plural != e.Plural {
				t.Errorf("%s: %s is plural in one language and not in the other", language, key)
			}
			if !slices.Equal(ref.Placeholders, e.Placeholders) {
				t.Errorf("%s: %s has placeholders %v, en %v", language, key, e.Placeholders, ref.Placeholders)
			}
		}
		for key := range en.Entries {
			if _, ok := c.Entries[key]; !ok {
				t.Errorf("%s has no %s", language, key)
			}
		}
	}

	// The keys the scripts name.
	called := regexp.MustCompile(`\bt\(\s*"([^"]+)"`)
	err := fs.WalkDir(Files(), "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return err
		}
		for _, m := range called.FindAllStringSubmatch(string(b), -1) {
			if _, ok := en.Entries[m[1]]; !ok && strings.Contains(m[1], ".") {
				t.Errorf("%s: t(%q) is not in i18n/en.js", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The titles the table of views names (app.js reads them with t).
	for _, v := range Views() {
		if _, ok := en.Entries[v.Title]; !ok {
			t.Errorf("view %q: its title %q is not in i18n/en.js", v.Name, v.Title)
		}
	}
}

// TestI18nLocale: the language and the number locale from
// navigator.languages, the German catalogue loaded only once chosen, t's
// placeholders, plurals and fallbacks, and applyTranslations.
func TestI18nLocale(t *testing.T) {
	t.Parallel()
	// A French speaker who reads German: German text (there is no French
	// catalogue), French numbers.
	ctx := moduleTab(t, `Object.defineProperty(Navigator.prototype, "languages", { configurable: true, get: () => Object.freeze(["fr-FR", "de-AT", "en"]) });`)
	var got map[string]any
	inModules(t, ctx, nil, `
  const loaded = () => performance.getEntriesByType("resource").some((e) => e.name.endsWith("/i18n/de.js"));
  const out = {
    language: i.chooseLanguage(), locale: i.chooseLocale(), startLocale: i.getLocale(), startLanguage: i.getLanguage(),
    before: i.t("nav.home"), loadedBefore: loaded(),
    pt: i.chooseLanguage(["pt-BR"]), nothing: i.chooseLocale(["zz-not a tag", "de-de"]), none: i.chooseLocale([]),
  };
  Object.assign(out, await i.setLocale());
  out.loadedAfter = loaded();
  out.home = i.t("nav.home");
  out.lang = document.documentElement.lang;
  out.one = i.t("money.sats.amount", { amount: "1", count: 1 });
  out.many = i.t("money.sats.amount", { amount: "1.500", count: 1500n });
  out.numbers = i.t("money.error.decimals", { count: 1234567, currency: "EUR", example: "12,5" });
  out.unknown = i.t("no.such.key");
  out.missing = i.t("money.error.tooLarge");
  out.money = f.formatMoney(123456n, "USD");
  out.parsed = f.parseMoney("1 234,56", "USD").text;

  document.body.innerHTML = '<nav data-i18n-attr="aria-label:nav.label"><a id="home" data-i18n="nav.home">Home</a>' +
    '<input id="amount" data-i18n-attr="placeholder:money.error.zero, aria-label:nav.send">' +
    '<p id="count" data-i18n="money.sats.amount" data-i18n-params=\'{"amount": "2", "count": 2}\'></p>' +
    '<p id="bad" data-i18n="nav.send" data-i18n-params="{not json"></p></nav>';
  i.applyTranslations(document);
  const $ = (id) => document.getElementById(id);
  out.dom = [$("home").textContent, document.querySelector("nav").getAttribute("aria-label"), $("amount").placeholder,
    $("amount").getAttribute("aria-label"), $("count").textContent, $("bad").textContent];
  await i.setLocale(["en-GB"]);
  i.applyTranslations(document.querySelector("nav"));
  out.domEnglish = [$("home").textContent, document.querySelector("nav").getAttribute("aria-label")];
  out.english = i.t("money.sats.amount", { amount: "1", count: 1 });
  out.langEnglish = document.documentElement.lang;
  return out;`, &got)
	want := map[string]any{
		"language": "de", "locale": "fr-FR", "startLocale": "fr-FR", "startLanguage": "en",
		"before": "Home", "loadedBefore": false, "pt": "en", "nothing": "de-DE", "none": "en-US",
		"loadedAfter": true, "home": "Start", "lang": "de",
		"one": "1 Sat", "many": "1.500 Sats",
		"numbers": "Für EUR sind höchstens 1 234 567 Nachkommastellen möglich, etwa 12,5.",
		"unknown": "no.such.key", "missing": "Das ist mehr als {max}. Gib einen kleineren Betrag ein.",
		"money": "1 234,56 $US", "parsed": "123456",
		"dom":        []any{"Start", "Hauptnavigation", "Gib einen Betrag über null ein.", "Senden", "2 Sats", "Senden"},
		"domEnglish": []any{"Home", "Main"}, "english": "1 sat", "langEnglish": "en",
	}
	for k, w := range want {
		g := got[k]
		if s, ok := g.(string); ok {
			g = spaces.Replace(s)
		}
		if l, ok := g.([]any); ok {
			for i := range l {
				if s, ok := l[i].(string); ok {
					l[i] = spaces.Replace(s)
				}
			}
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s: %s, want %s", k, gb, wb)
		}
	}
}
