package bff

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"paywallet/web"
)

func TestStaticImports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      []string
	}{
		{"default", `import x from "./x.js";`, []string{"./x.js"}},
		{"named, single quotes", `import { a, b } from '../i18n/en.js';`, []string{"../i18n/en.js"}},
		{"bare side effect", `import "./y.js";`, []string{"./y.js"}},
		{"multi-line", "import {\n  a,\n  b,\n} from \"./money.js\";", []string{"./money.js"}},
		{"namespace", `import * as m from "/js/m.js";`, []string{"/js/m.js"}},
		{"re-export", `export { a } from "./a.js";`, []string{"./a.js"}},
		{"export star", `export * from "./s.js";`, []string{"./s.js"}},
		{"indented", "  import z from \"./z.js\";", []string{"./z.js"}},
		{"several", "import a from \"./a.js\";\nimport b from \"./b.js\";\n", []string{"./a.js", "./b.js"}},
		{"dynamic import is not static", `const m = import("./wallet.js");`, nil},
		{"dynamic import at line start", `import("./wallet.js").then(f);`, nil},
		{"in a comment", `//   import { loadWallet } from "/js/wallet.js";`, nil},
		{"export of a value", `export const NAME = "x.js";`, nil},
		{"export function with strings", `export function f(a = "./no.js") {}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range staticImport.FindAllStringSubmatch(tc.src, -1) {
				got = append(got, m[1])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q: %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

// TestHashedSite serves the real pages of package web and checks what a
// browser needs to cache everything but the pages forever: every file the
// pages name, every module the import map names, is served under its
// content-hashed URL as immutable, with the bytes of its plain URL; the
// modulepreload links are the static imports of the page's module script
// (every one of them, and nothing else); the import map is valid JSON that
// maps each module of the site; JavaScript comes compressed.
func TestHashedSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.static = nil })
	page := string(h.do("GET", "/", "", nil).body)

	_, rest, _ := strings.Cut(page, `<script type="importmap">`)
	text, _, _ := strings.Cut(rest, `</script>`)
	var importMap struct{ Imports map[string]string }
	if err := json.Unmarshal([]byte(text), &importMap); err != nil {
		t.Fatalf("import map %q: %v", text, err)
	}
	// Every module of the site is in the map.
	_ = fs.WalkDir(web.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".js") && importMap.Imports["/"+p] == "" {
			t.Errorf("/%s is not in the import map", p)
		}
		return err
	})
	hashedURL := regexp.MustCompile(`^(/.+)\.[0-9a-f]{16}(\.[a-z]+)$`)
	check := func(plain, hashed string) {
		t.Helper()
		m := hashedURL.FindStringSubmatch(hashed)
		if m == nil || m[1]+m[2] != plain {
			t.Errorf("%s: hashed URL %q", plain, hashed)
			return
		}
		want := h.do("GET", plain, "", nil)
		got := h.do("GET", hashed, "", nil)
		if got.status != 200 || !bytes.Equal(got.body, want.body) || got.header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: %d %q, want the bytes of %s, immutable", hashed, got.status, got.header.Get("Cache-Control"), plain)
		}
		if want.header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", plain, want.header.Get("Cache-Control"))
		}
	}
	for plain, hashed := range importMap.Imports {
		check(plain, hashed)
	}
	// Every file the page names is named by its hashed URL.
	attrs := regexp.MustCompile(`(?:src|href)="(/[^"]*)"`).FindAllStringSubmatch(page, -1)
	var preloads []string
	for _, m := range regexp.MustCompile(`<link rel="modulepreload" href="(/[^"]+)">`).FindAllStringSubmatch(page, -1) {
		preloads = append(preloads, m[1])
	}
	named := 0
	for _, m := range attrs {
		u := m[1]
		if f, ok := h.srv.assets.files[u]; ok && !f.immutable && u != "/" && !strings.HasSuffix(u, ".html") {
			t.Errorf("the page names %s by its plain URL", u)
		}
		if hashedURL.MatchString(u) {
			named++
		}
	}
	if named < 3 { // app.css, the favicon, app.js at least
		t.Errorf("only %d hashed URLs in the page", named)
	}
	if !strings.Contains(page, `<script type="module" src="`+importMap.Imports["/js/app.js"]+`"></script>`) {
		t.Errorf("the app module is not loaded by its hashed URL")
	}
	if regexp.MustCompile(`<script[^>]*wasm_exec`).MatchString(page) {
		t.Errorf("the page loads the Go runtime itself (the worker does)")
	}
	// The preloads are app.js's static imports, transitively: api.js is
	// one, and wallet.js (a dynamic import, after the first paint) is not.
	// The views' modules, imported by name from the table of views, are
	// preloaded too, after the static imports.
	for _, want := range []string{"/js/api.js", "/js/i18n.js", "/i18n/en.js", "/js/money.js", "/js/views.js", "/js/views/home.js", "/js/views/recipient-new.js"} {
		if !slices.Contains(preloads, importMap.Imports[want]) {
			t.Errorf("%s is not preloaded; preloads %q", want, preloads)
		}
	}
	for _, not := range []string{"/js/wallet.js", "/js/wallet-worker.js", "/i18n/de.js", "/js/app.js"} {
		if slices.Contains(preloads, importMap.Imports[not]) {
			t.Errorf("%s is preloaded", not)
		}
	}
	// The import map comes before anything that loads a module.
	if i, j := strings.Index(page, "importmap"), strings.Index(page, "modulepreload"); i < 0 || j < i {
		t.Errorf("the import map is not first")
	}
	// JavaScript and CSS are served compressed.
	for _, u := range []string{importMap.Imports["/js/app.js"], "/css/app.css"} {
		r := h.do("GET", u, "", map[string]string{"Accept-Encoding": "br, gzip"})
		if r.header.Get("Content-Encoding") != "br" {
			t.Errorf("GET %s: Content-Encoding %q", u, r.header.Get("Content-Encoding"))
		}
	}
	// A hash of another build (a page loaded before a deploy) gets the
	// current file, revalidated, never cached for good under that name.
	r := h.do("GET", "/js/app.0000000000000000.js", "", nil)
	if want := h.do("GET", "/js/app.js", "", nil); r.status != 200 || !bytes.Equal(r.body, want.body) || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("stale hash: %d %q", r.status, r.header.Get("Cache-Control"))
	}
}

// TestShownWhen: the sandbox banner and the dev mailbox link are in the
// page as served, not hidden, exactly when this server is in sandbox mode
// and has the mailbox; the page does not move when the configuration has
// been read.
func TestShownWhen(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><head><title>t</title></head><body>` +
		`<div id="banner" class="banner" data-shown-when="sandbox" hidden>Sandbox</div>` +
		`<a id="mail" href="/dev/mailbox/" data-shown-when="dev-mailbox" hidden>Mailbox</a>` +
		`<p id="other" hidden>other</p>` +
		`<p id="quoted" class="x hidden y" title="is hidden here" data-shown-when="sandbox" hidden>q</p></body>`
	cases := []struct {
		name         string
		mode         string
		mailbox      bool
		banner, mail bool
	}{
		{"sandbox with mailbox", ModeSandbox, true, true, true},
		{"sandbox", ModeSandbox, false, true, false},
		{"production", ModeProduction, false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			site := testSite()
			site["index.html"].Data = []byte(page)
			h := newHarness(t, func(c *Config) {
				c.static = site
				c.Mode = tc.mode
				if tc.mailbox {
					c.DevMailbox = http.NotFoundHandler()
				}
			})
			got := string(h.do("GET", "/", "", nil).body)
			// "hidden" inside an attribute's value is left alone.
			if !strings.Contains(got, `class="x hidden y" title="is hidden here"`) {
				t.Errorf("an attribute value was changed: %s", got)
			}
			for id, want := range map[string]bool{"banner": tc.banner, "mail": tc.mail, "other": false, "quoted": tc.banner} {
				tag := regexp.MustCompile(`<[a-z]+ id="` + id + `"[^>]*>`).FindString(got)
				bare := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(tag, `""`) // attribute values aside
				if shown := tag != "" && !strings.Contains(bare, " hidden"); shown != want {
					t.Errorf("%s: %q shown %v, want %v", id, tag, shown, want)
				}
			}
		})
	}
}
