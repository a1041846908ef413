package web

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"paywallet/internal/browsertest"
)

// api.js, the pages' one way to the BFF, in headless Chromium against a
// server that records what it receives: every call starts a trace of its
// own (a fresh traceparent), and a 503 (a database that went away for a
// moment) reads as "try again" in the person's language.

var traceparentForm = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)

func TestAPITraceparentAnd503(t *testing.T) {
	var mu sync.Mutex
	var traceparents []string
	files := http.FileServer(http.FS(Files()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", pageCSP)
		switch r.URL.Path {
		case "/blank.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>api</title></head><body></body></html>`))
		case "/api/ok", "/api/gone":
			mu.Lock()
			traceparents = append(traceparents, r.Header.Get("traceparent"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Request-Id", "req_page_1")
			if r.URL.Path == "/api/ok" {
				_, _ = w.Write([]byte(`{}`))
				return
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			_, _ = w.Write([]byte(`{"status":503,"code":"SERVICE_UNAVAILABLE","message":"We couldn't reach our servers for a moment. Please try again in a few seconds.","requestId":"req_page_1"}`))
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t, 60*time.Second)
	do(t, ctx, chromedp.Navigate(srv.URL+"/blank.html"))

	var got struct {
		Status, RetryAfter                    int
		Code, RequestID, English, German, Bad string
	}
	inPage(t, ctx, `
  const a = await import("/js/api.js");
  const i = await import("/js/i18n.js");
  await a.api("GET", "/api/ok");
  await a.api("GET", "/api/ok");
  let err;
  try { await a.api("GET", "/api/gone"); } catch (e) { err = e; }
  await i.setLocale("en-US");
  const english = a.messageOf(err);
  await i.setLocale("de-DE");
  const german = a.messageOf(err);
  await i.setLocale("en-US");
  const bad = a.messageOf(new a.ApiError(502, "SERVICE_UNAVAILABLE", "the payments service is unavailable; try again shortly"));
  return { Status: err.status, RetryAfter: err.retryAfter, Code: err.code, RequestID: err.requestId, English: english, German: german, Bad: bad };
`, &got)

	if got.Status != 503 || got.RetryAfter != 1 || got.Code != "SERVICE_UNAVAILABLE" || got.RequestID != "req_page_1" {
		t.Errorf("the 503 as an ApiError: %+v", got)
	}
	for _, tc := range []struct{ lang, got, want string }{
		{"en", got.English, "We couldn't reach our servers for a moment. Please try again in a few seconds."},
		{"de", got.German, "Wir konnten unsere Server kurz nicht erreichen. Bitte versuch es in ein paar Sekunden noch einmal."},
		{"en, a 502", got.Bad, "The service is not reachable right now. Try again shortly."},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.lang, tc.got, tc.want)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(traceparents) != 3 {
		t.Fatalf("%d calls recorded, want 3", len(traceparents))
	}
	seen := map[string]bool{}
	for _, tp := range traceparents {
		if !traceparentForm.MatchString(tp) {
			t.Errorf("traceparent %q, want 00-<32 hex>-<16 hex>-01", tp)
		}
		if len(tp) > 35 && seen[tp[3:35]] {
			t.Errorf("trace id %s sent twice: each call starts a trace", tp[3:35])
		}
		if len(tp) > 35 {
			seen[tp[3:35]] = true
		}
	}
}

// TestPageSignInUnavailable: when the BFF answers the first sign-in step
// 503 (its database, or the service's, went away for a moment), the page
// says so in words a person can act on, in the person's language, stays on
// the e-mail step, and every call it made carried a traceparent.
func TestPageSignInUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lang, want string }{
		{"en-US", "We couldn't reach our servers for a moment. Please try again in a few seconds."},
		{"de-DE", "Wir konnten unsere Server kurz nicht erreichen. Bitte versuch es in ein paar Sekunden noch einmal."},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Parallel()
			site, api := startSite(t)
			api.set(func(f *fakeAPI) {
				f.starts = append(f.starts, reply{status: 503, header: map[string]string{"Retry-After": "1", "Request-Id": "req_x"},
					body: `{"status":503,"code":"SERVICE_UNAVAILABLE","message":"We couldn't reach our servers for a moment. Please try again in a few seconds.","requestId":"req_x"}`})
			})
			ctx := languageTab(t, tc.lang)
			do(t, ctx,
				chromedp.Navigate(site+"/"),
				chromedp.WaitVisible(chromedp.ID("email")),
				chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
				chromedp.Click(chromedp.ID("email-submit")),
				chromedp.WaitVisible(chromedp.ID("login-error")),
			)
			if got := eval[string](t, ctx, `document.getElementById("login-error").textContent`); got != tc.want {
				t.Errorf("#login-error %q, want %q", got, tc.want)
			}
			if !eval[bool](t, ctx, shown("email")) {
				t.Error("the e-mail step was left")
			}
			for _, c := range api.requests("") {
				if !traceparentForm.MatchString(c.header.Get("traceparent")) {
					t.Errorf("%s %s with traceparent %q", c.method, c.path, c.header.Get("traceparent"))
				}
			}
		})
	}
}
