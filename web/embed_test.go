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

// TestModulesLoadWalletAndWasmExecFirst checks the order of the scripts:
// wasm_exec.js defines globalThis.Go, which wallet.js needs, so it must be a
// classic script that runs before the app module. What the scripts do is
// checked in a browser by page_test.go.
func TestModulesLoadWalletAndWasmExecFirst(t *testing.T) {
	b, err := fs.ReadFile(Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	exec := strings.Index(page, `<script src="/wasm/wasm_exec.js"></script>`)
	app := strings.Index(page, `<script type="module" src="/js/app.js"></script>`)
	if exec < 0 || app < 0 || exec > app {
		t.Errorf("wasm_exec.js must be a classic script before the app module (at %d, %d)", exec, app)
	}
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
