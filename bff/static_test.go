package bff

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"paywallet/internal/telemetry"
	"paywallet/shared/wire"
)

func TestWasmServing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	site := testSite()
	sum := sha256.Sum256(site["wasm/wallet.wasm"].Data)
	hashed := "/wasm/wallet." + hex.EncodeToString(sum[:])[:16] + ".wasm"

	var cfg configResponse
	if err := json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &cfg); err != nil {
		t.Fatal(err)
	}
	execSum := sha256.Sum256(site["wasm/wasm_exec.js"].Data)
	hashedExec := "/wasm/wasm_exec." + hex.EncodeToString(execSum[:])[:16] + ".js"
	if cfg.WasmURL != hashed || cfg.WasmExecURL != hashedExec {
		t.Errorf("config wasm URLs %q %q, want %q %q", cfg.WasmURL, cfg.WasmExecURL, hashed, hashedExec)
	}

	br, gz, raw := string(site["wasm/wallet.wasm.br"].Data), string(site["wasm/wallet.wasm.gz"].Data), testModule
	cases := []struct {
		accept   string
		encoding string
		body     string
	}{
		{"gzip, deflate, br, zstd", "br", br},
		{"br;q=1.0, gzip;q=0.8", "br", br},
		{"gzip", "gzip", gz},
		{"br;q=0, gzip", "gzip", gz},
		{"BR", "br", br},
		{"*", "br", br},
		{"*;q=0", "", raw},
		{"identity", "", raw},
		{"", "", raw},
		{"deflate, gzip;q=0", "", raw},
	}
	for _, url := range []string{hashed, "/wasm/wallet.wasm"} {
		for _, tc := range cases {
			r := h.do("GET", url, "", map[string]string{"Accept-Encoding": tc.accept})
			if r.status != 200 {
				t.Fatalf("%s: %d", url, r.status)
			}
			if got := r.header.Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("%s Accept-Encoding %q: Content-Encoding %q, want %q", url, tc.accept, got, tc.encoding)
			}
			if string(r.body) != tc.body {
				t.Errorf("%s Accept-Encoding %q: body %q", url, tc.accept, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/wasm" {
				t.Errorf("Content-Type %q", ct)
			}
			if v := r.header.Get("Vary"); !strings.Contains(v, "Accept-Encoding") {
				t.Errorf("Vary %q", v)
			}
			wantCache := "no-cache"
			if url == hashed {
				wantCache = "public, max-age=31536000, immutable"
			}
			if cc := r.header.Get("Cache-Control"); cc != wantCache {
				t.Errorf("%s: Cache-Control %q, want %q", url, cc, wantCache)
			}
		}
	}

	// Revalidation of the plain URL.
	r := h.do("GET", "/wasm/wallet.wasm", "", map[string]string{"Accept-Encoding": "br"})
	etag := r.header.Get("ETag")
	r2 := h.do("GET", "/wasm/wallet.wasm", "", map[string]string{"Accept-Encoding": "br", "If-None-Match": etag})
	if etag == "" || r2.status != 304 || len(r2.body) != 0 {
		t.Errorf("If-None-Match %q: %d", etag, r2.status)
	}
	r3 := h.do("GET", "/wasm/wallet.wasm", "", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag})
	if r3.status != 200 {
		t.Errorf("the br ETag matched the gzip variant: %d", r3.status)
	}

	// A hash of another build gets the current file, revalidated, never
	// immutable (a page loaded before a deploy still works).
	r = h.do("GET", "/wasm/wallet.0000000000000000.wasm", "", nil)
	if r.status != 200 || string(r.body) != testModule || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("stale hash: %d %q %q", r.status, r.header.Get("Cache-Control"), r.body)
	}
	// The precompressed files on their own are not served.
	for _, p := range []string{"/wasm/wallet.wasm.br", "/wasm/.gitignore", "/wasm/gone.0000000000000000.wasm"} {
		if r := h.do("GET", p, "", nil); r.status != 404 {
			t.Errorf("GET %s = %d, want 404", p, r.status)
		}
	}

	// wasm_exec.js is a plain, revalidated script.
	r = h.do("GET", "/wasm/wasm_exec.js", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("wasm_exec.js: %d %v", r.status, r.header)
	}
	// HEAD works and sends no body.
	r = h.do("HEAD", hashed, "", map[string]string{"Accept-Encoding": "br"})
	if r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Encoding") != "br" {
		t.Errorf("HEAD: %d %q %v", r.status, r.body, r.header)
	}
}

// TestStalePrecompressedCopies: a .br or .gz that does not decode to the
// raw file (left over from an older build) must never be served, least of
// all under the content-hashed URL that browsers cache for a year.
func TestStalePrecompressedCopies(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string][]byte{
		"stale br":          {"wasm/wallet.wasm.br": brotliOf("\x00asm old module")},
		"stale gz":          {"wasm/wallet.wasm.gz": gzipOf("\x00asm old module")},
		"both stale":        {"wasm/wallet.wasm.br": brotliOf("old"), "wasm/wallet.wasm.gz": gzipOf("old")},
		"garbage br":        {"wasm/wallet.wasm.br": []byte("not brotli")},
		"truncated gz":      {"wasm/wallet.wasm.gz": gzipOf(testModule)[:12]},
		"longer than raw":   {"wasm/wallet.wasm.gz": gzipOf(testModule + "trailing")},
		"stale page gz":     {"index.html.gz": gzipOf("<!doctype html><title>old</title>")},
		"page gz not gzip":  {"js/app.js.gz": []byte("export {};\n")},
		"page br not brotl": {"js/app.js.br": []byte("\xff\xff\xff")},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			site := testSite()
			for p, b := range files {
				site[p] = &fstest.MapFile{Data: b}
			}
			h := newHarness(t, func(c *Config) { c.static = site })
			var cfg configResponse
			_ = json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &cfg)
			for p := range files {
				orig, accept := strings.TrimSuffix(p, ".br"), "br"
				if strings.HasSuffix(p, ".gz") {
					orig, accept = strings.TrimSuffix(p, ".gz"), "gzip"
				}
				urls := []string{"/" + orig}
				if orig == "wasm/wallet.wasm" {
					urls = append(urls, cfg.WasmURL)
				}
				want := site[orig].Data
				if strings.HasSuffix(orig, ".html") {
					want = h.srv.assets.files["/"+orig].body // the page as rewritten (site.go)
				}
				for _, u := range urls {
					r := h.do("GET", u, "", map[string]string{"Accept-Encoding": accept})
					if r.status != 200 || !bytes.Equal(r.body, want) || r.header.Get("Content-Encoding") != "" {
						t.Errorf("GET %s: %d Content-Encoding %q body %q, want the raw file", u, r.status, r.header.Get("Content-Encoding"), r.body)
					}
				}
				if !strings.Contains(h.logs.String(), "level=ERROR") || !strings.Contains(h.logs.String(), p) {
					t.Errorf("no error logged for %s; log:\n%s", p, h.logs)
				}
			}
		})
	}
	// Good copies log nothing.
	h := newHarness(t)
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("errors logged for a good site:\n%s", h.logs)
	}
}

func TestWasmAbsent(t *testing.T) {
	t.Parallel()
	site := testSite()
	for _, f := range []string{"wasm/wallet.wasm", "wasm/wallet.wasm.br", "wasm/wallet.wasm.gz"} {
		delete(site, f)
	}
	h := newHarness(t, func(c *Config) { c.static = site })
	r := h.do("GET", "/api/config", "", nil)
	var cfg configResponse
	if err := json.Unmarshal(r.body, &cfg); r.status != 200 || err != nil {
		t.Fatalf("config: %d %s", r.status, r.body)
	}
	if cfg.WasmURL != "/wasm/wallet.wasm" {
		t.Errorf("wasmUrl %q", cfg.WasmURL)
	}
	if r := h.do("GET", cfg.WasmURL, "", nil); r.status != 404 {
		t.Errorf("absent module: %d", r.status)
	}
	if !strings.Contains(h.logs.String(), "wallet module is not embedded") {
		t.Errorf("no start-up warning; log:\n%s", h.logs)
	}
}

func TestPageHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The one inline script allowed is the import map, by its hash.
	page := string(h.do("GET", "/", "", nil).body)
	_, rest, _ := strings.Cut(page, `<script type="importmap">`)
	importMap, _, ok := strings.Cut(rest, `</script>`)
	if !ok {
		t.Fatalf("no import map in the page:\n%s", page)
	}
	sum := sha256.Sum256([]byte(importMap))
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
			"'; style-src 'self'; img-src 'self' data:; " +
			"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		"Referrer-Policy":            "no-referrer",
		"X-Content-Type-Options":     "nosniff",
		"Cross-Origin-Opener-Policy": "same-origin",
	}
	for _, p := range []string{"/", "/index.html", "/js/app.js", "/api/config", "/no-such-page"} {
		r := h.do("GET", p, "", nil)
		for k, v := range want {
			if got := r.header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", p, k, got, v)
			}
		}
	}
	r := h.do("GET", "/", "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/html; charset=utf-8" || r.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /: %d %v", r.status, r.header)
	}
	if r := h.do("GET", "/no-such-page", "", nil); r.status != 404 || strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("page 404: %d %v", r.status, r.header)
	}
	if r := h.do("GET", "/api/no-such-route", "", nil); r.status != 404 || r.code(t) != "NOT_FOUND" {
		t.Errorf("api 404: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/api/config", "", nil); r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("api Cache-Control %q", r.header.Get("Cache-Control"))
	}
}

func TestConfigAndDevMailbox(t *testing.T) {
	t.Parallel()
	var gotPath, gotID string
	box := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotID = r.URL.Path, w.Header().Get(wire.HeaderRequestID)
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"code":"123456"}`))
	})
	h := newHarness(t, func(c *Config) { c.DevMailbox = box })
	var cfg configResponse
	if err := json.Unmarshal(h.do("GET", "/api/config", "", nil).body, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "sandbox" || cfg.OTPSignerPublicKey != testSignerKey || !cfg.DevMailbox || cfg.DevMailboxURL != "/dev/mailbox/" {
		t.Errorf("config %+v", cfg)
	}
	r := h.do("GET", "/dev/mailbox/latest?address=a@example.com", "", nil)
	if r.status != 200 || string(r.body) != `{"code":"123456"}` || gotPath != "/latest" {
		t.Errorf("mailbox: %d %s path %q", r.status, r.body, gotPath)
	}
	if csp := r.header.Values("Content-Security-Policy"); len(csp) != 1 || !strings.Contains(csp[0], "unsafe-inline") {
		t.Errorf("the mailbox's own CSP was overridden: %q", csp)
	}
	// The mailbox sees the answer's Request-Id (for its error bodies),
	// and the answer carries it once.
	if ids := r.header.Values(wire.HeaderRequestID); len(ids) != 1 || !telemetry.ValidRequestID(ids[0]) || gotID != ids[0] {
		t.Errorf("mailbox answer's Request-Id %q, the mailbox saw %q", ids, gotID)
	}

	h2 := newHarness(t, func(c *Config) { c.Mode = "" })
	var cfg2 map[string]any
	_ = json.Unmarshal(h2.do("GET", "/api/config", "", nil).body, &cfg2)
	if cfg2["mode"] != "production" || cfg2["devMailbox"] != false {
		t.Errorf("default config %v", cfg2)
	}
	if _, ok := cfg2["devMailboxUrl"]; ok {
		t.Errorf("devMailboxUrl announced while off: %v", cfg2)
	}
	if r := h2.do("GET", "/dev/mailbox/", "", nil); r.status != 404 {
		t.Errorf("mailbox mounted while off: %d", r.status)
	}
}

func TestAcceptsEncoding(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header, coding string
		want           bool
	}{
		{"br", "br", true},
		{"gzip, br", "br", true},
		{"br;q=0", "br", false},
		{"br; q=0.0", "br", false},
		{"br;q=0.001", "br", true},
		{"br;q=junk", "br", false},
		{"*", "gzip", true},
		{"*;q=0, gzip", "gzip", true},
		{"gzip;q=0, *", "gzip", false},
		{"brotli", "br", false},
		{"", "br", false},
	}
	for _, tc := range cases {
		if got := acceptsEncoding(tc.header, tc.coding); got != tc.want {
			t.Errorf("acceptsEncoding(%q, %q) = %v", tc.header, tc.coding, got)
		}
	}
}

func TestLoadAssetsWithoutIndex(t *testing.T) {
	t.Parallel()
	_, err := New(Config{ServiceURL: "http://127.0.0.1:1/2025-10-13", PlatformCredential: testCred,
		OTPSignerPublicKey: testSignerKey, static: fstest.MapFS{"js/a.js": {Data: []byte("")}}})
	if err == nil {
		t.Error("New accepted a site without index.html")
	}
}
