package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The browser tests find elements by these ids.
var requiredIDs = []string{
	"email", "email-submit", "email-error", "code", "code-submit", "code-error", "code-resend", "login-error", "status",
	"signed-in", "me-email", "account-id", "wallet-type", "account-status", "account-balance",
	"accounts", "accounts-list", "add-account", "account-type", "account-fields", "account-submit", "account-form-error",
	"session-expiry", "session-public-key", "copy-key", "key-missing", "key-not-kept", "logout",
	"sandbox-banner", "dev-mailbox-link",
	"balance", "account-on-hold", "on-hold-row", "fund-form", "fund-amount", "fund-submit", "fund-error", "fund-currency",
	"send", "send-form", "send-account", "send-side-sending", "send-side-receiving", "send-amount", "send-amount-error", "send-note",
	"quote-submit", "quote", "quote-send", "quote-fees", "quote-rate", "quote-receive", "quote-rail", "quote-expiry", "quote-id",
	"quote-expired", "quote-error", "quote-renew", "quote-cancel", "send-submit", "send-disabled-reason",
	"transaction", "tx-status", "tx-badge", "tx-status-text", "tx-reason", "tx-facts", "tx-receipt", "tx-close",
	"transactions", "transactions-list", "transactions-more", "transactions-empty",
}

func TestIndexHasTheTestIDs(t *testing.T) {
	b, err := fs.ReadFile(Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, id := range requiredIDs {
		if n := strings.Count(page, `id="`+id+`"`); n != 1 {
			t.Errorf("id %q appears %d times, want once", id, n)
		}
	}
}

// TestNoInlineCode checks the pages against what the CSP forbids: inline
// scripts, inline event handlers, style attributes and <style> elements,
// javascript: URLs, and anything loaded from another origin.
func TestNoInlineCode(t *testing.T) {
	checks := map[string]*regexp.Regexp{
		"event handler":     regexp.MustCompile(`(?i)\son[a-z]+\s*=`),
		"style attribute":   regexp.MustCompile(`(?i)\sstyle\s*=`),
		"style element":     regexp.MustCompile(`(?i)<style\b`),
		"javascript: URL":   regexp.MustCompile(`(?i)javascript:`),
		"external resource": regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`),
	}
	scriptTag := regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	err := fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return err
		}
		page := string(b)
		for name, re := range checks {
			if loc := re.FindStringIndex(page); loc != nil {
				t.Errorf("%s: %s at %q", p, name, page[loc[0]:min(loc[1]+20, len(page))])
			}
		}
		for _, m := range scriptTag.FindAllStringSubmatch(page, -1) {
			if !strings.Contains(m[1], `src="/`) || strings.TrimSpace(m[2]) != "" {
				t.Errorf("%s: script that is not a same-origin src: %q", p, m[0])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNothingRenderBlocking: the pages load no classic script, which the
// parser would wait for before the first paint; their code is ES modules
// (deferred), and the Go runtime (wasm_exec.js) is loaded by the wallet's
// Worker, never by a page.
func TestNothingRenderBlocking(t *testing.T) {
	for _, name := range []string{"index.html", "oauth-callback.html"} {
		b, err := fs.ReadFile(Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		for _, tag := range regexp.MustCompile(`<script\b[^>]*>`).FindAllString(page, -1) {
			if !strings.Contains(tag, `type="module"`) {
				t.Errorf("%s: %s is a classic script", name, tag)
			}
		}
		if strings.Contains(page, "wasm_exec") {
			t.Errorf("%s loads the Go runtime", name)
		}
	}
	if !strings.Contains(mustRead(t, "index.html"), `<script type="module" src="/js/app.js"></script>`) {
		t.Error("index.html does not load the app module")
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(Files(), name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNoDotFiles: build leftovers such as static/wasm/.gitignore are not
// embedded (they would only be skipped at serving time).
func TestNoDotFiles(t *testing.T) {
	err := fs.WalkDir(Static, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			t.Errorf("embedded: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
