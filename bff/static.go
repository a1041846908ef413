package bff

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"

	"paywallet/web"
)

// Security headers. The CSP allows only the site's own scripts, styles and
// wasm compilation, plus the one inline script the pages have: the import
// map (site.go), allowed by its hash. No other inline script or style, no
// framing, no base or form hijacking.
const (
	cspBefore = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"
	cspAfter  = "; style-src 'self'; " +
		"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	// strictTransportSecurity goes on answers served over HTTPS only: sent
	// over plain http://localhost it would make the browser insist on HTTPS
	// for localhost, every port, for two years.
	strictTransportSecurity = "max-age=63072000; includeSubDomains"
	cacheImmutable          = "public, max-age=31536000, immutable"
	cacheRevalidate         = "no-cache"
)

// Paths of the wallet module in the embedded pages and on the site.
const (
	wasmFile       = "wasm/wallet.wasm"
	wasmExecFile   = "wasm/wasm_exec.js"
	devMailboxPath = "/dev/mailbox"
)

// asset is one embedded file, ready to send.
type asset struct {
	body      []byte
	sum       [32]byte // SHA-256 of body: its ETag, its hashed URL, its compression cache key
	ctype     string
	etag      string
	immutable bool
	// Compressed variants: the precompressed siblings (<name>.br,
	// <name>.gz) when embedded, else made here for text files.
	br, gz *asset
}

// assets is the embedded site, keyed by URL path.
type assets struct {
	files   map[string]*asset
	hashed  map[string]string // URL path of a file -> its content-hashed URL path (every file but the pages)
	wasmURL string            // content-hashed URL of the wallet module, or its plain URL when absent
	hasWasm bool
	csp     string // Content-Security-Policy of every answer, with the import map's hash
}

// url returns the content-hashed URL of the file at URL path p, or p when
// it has none.
func (a *assets) url(p string) string {
	if h, ok := a.hashed[p]; ok {
		return h
	}
	return p
}

// loadAssets reads every file of fsys into memory. Every file but the
// pages (*.html) gets a second, content-hashed URL, such as
// /js/app.<16 hex of SHA-256>.js, that may be cached forever; its plain
// URL must be revalidated. The pages are rewritten to use the hashed URLs
// (site.go).
//
// The hash is of the raw file only, so a precompressed copy (<name>.br,
// <name>.gz) is served only after it has been decompressed here and found
// byte for byte equal to the raw file: a copy left over from an older build
// would otherwise reach browsers under the new hash and stay in their
// caches for a year. A mismatch is logged as an error and that encoding is
// not offered; the raw file still is. Text files without precompressed
// copies are compressed here, once, at start-up.
//
// shown says which conditions of the pages' data-shown-when attributes hold
// for this server (site.go).
func loadAssets(fsys fs.FS, log *slog.Logger, shown map[string]bool) (*assets, error) {
	raw := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		raw[p] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading embedded pages: %w", err)
	}
	a := &assets{files: map[string]*asset{}, hashed: map[string]string{}, wasmURL: "/" + wasmFile}
	var pages []string
	for p, b := range raw {
		if strings.HasSuffix(p, ".br") || strings.HasSuffix(p, ".gz") {
			if _, ok := raw[p[:len(p)-3]]; ok {
				continue // attached to its original below
			}
		}
		if path.Ext(p) == ".html" {
			pages = append(pages, p)
			continue // rendered below, once every hashed URL is known
		}
		f := newAsset(b, contentType(p))
		f.gz = precompressed(log, raw, p, ".gz", f)
		f.br = precompressed(log, raw, p, ".br", f)
		compress(f, raw, p)
		a.files["/"+p] = f
		hashed := *f
		hashed.immutable = true
		u := hashedPath("/"+p, f.sum)
		a.files[u] = &hashed
		a.hashed["/"+p] = u
	}
	if _, ok := a.files["/"+wasmFile]; ok {
		a.wasmURL = a.hashed["/"+wasmFile]
		a.hasWasm = true
	}
	site := newSite(raw, a.hashed, shown)
	a.csp = cspBefore + " '" + site.mapHash + "'" + cspAfter
	for _, p := range pages {
		body := site.page(p, raw[p])
		f := newAsset(body, contentType(p))
		f.gz = precompressed(log, raw, p, ".gz", f) // compared with the page as served
		f.br = precompressed(log, raw, p, ".br", f)
		compress(f, raw, p)
		a.files["/"+p] = f
	}
	if idx, ok := a.files["/index.html"]; ok {
		a.files["/"] = idx
	}
	return a, nil
}

// hashedPath is p with the first 16 hex digits of its content's SHA-256
// (sum) before its extension: /js/app.js -> /js/app.0123456789abcdef.js.
func hashedPath(p string, sum [32]byte) string {
	ext := path.Ext(p)
	return strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:8]) + ext
}

// compress gives a text file its compressed variants where no
// precompressed copy was embedded. Files that would not shrink are left
// alone. The work is done once per content and process (compressed), so
// that a process starting several servers (the tests) pays it once.
func compress(f *asset, raw map[string][]byte, p string) {
	if !compressible(f.ctype) || len(f.body) < 512 {
		return
	}
	_, brEmbedded := raw[p+".br"]
	_, gzEmbedded := raw[p+".gz"]
	if (f.br != nil || brEmbedded) && (f.gz != nil || gzEmbedded) {
		return
	}
	c := compressedOf(f.body, f.sum)
	if f.br == nil && !brEmbedded && len(c.br) < len(f.body) {
		f.br = newAsset(c.br, f.ctype)
	}
	if f.gz == nil && !gzEmbedded && len(c.gz) < len(f.body) {
		f.gz = newAsset(c.gz, f.ctype)
	}
}

type compressedBodies struct{ br, gz []byte }

// compressed caches compressedOf's work by the SHA-256 of the content.
var compressed sync.Map // [32]byte -> compressedBodies

// compressedOf returns body, whose SHA-256 is key, compressed with brotli
// and gzip. Brotli's
// quality 6: the site's text is 127 KB at 6 and 115 KB at 11, but 11 takes
// sixteen times longer (0.85 s of start-up here, ten seconds under the race
// detector), and the wallet module, which build.sh compresses at 11, is
// most of what a first visit downloads.
func compressedOf(body []byte, key [32]byte) compressedBodies {
	if c, ok := compressed.Load(key); ok {
		return c.(compressedBodies)
	}
	var br, gz bytes.Buffer
	bw := brotli.NewWriterLevel(&br, 6)
	_, _ = bw.Write(body)
	_ = bw.Close()
	gw, _ := gzip.NewWriterLevel(&gz, 6)
	_, _ = gw.Write(body)
	_ = gw.Close()
	c := compressedBodies{br: br.Bytes(), gz: gz.Bytes()}
	compressed.Store(key, c)
	return c
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") || strings.HasPrefix(ctype, "image/svg+xml")
}

// precompressed returns the asset of the sibling p+ext of the raw file f,
// or nil when there is none or it does not decompress to f's bytes.
func precompressed(log *slog.Logger, raw map[string][]byte, p, ext string, f *asset) *asset {
	b, ok := raw[p+ext]
	if !ok {
		return nil
	}
	if err := decompressesTo(b, ext, f.body); err != nil {
		log.Error("bff: precompressed file does not match its original; serving the original instead (rebuild the site)",
			slog.String("file", p+ext), slog.Any("err", err))
		return nil
	}
	return newAsset(b, f.ctype)
}

// decompressesTo checks that b, compressed as ext says, decodes to want.
// It reads at most one byte more than want, so a bomb costs nothing.
func decompressesTo(b []byte, ext string, want []byte) error {
	var r io.Reader
	switch ext {
	case ".gz":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return err
		}
		r = zr
	case ".br":
		r = brotli.NewReader(bytes.NewReader(b))
	default:
		return fmt.Errorf("unknown encoding %s", ext)
	}
	got, err := io.ReadAll(io.LimitReader(r, int64(len(want))+1))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("decompressed content differs")
	}
	return nil
}

func newAsset(b []byte, ctype string) *asset {
	sum := sha256.Sum256(b)
	return &asset{body: b, sum: sum, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// contentType is a fixed table, so answers do not depend on the host's
// mime.types.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".wasm":
		return "application/wasm"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".ico":
		return "image/x-icon"
	case ".json", ".map":
		return "application/json"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// securityHeaders is set on every answer. The dev mailbox brings its own
// (mail.Mailbox sets its CSP, X-Content-Type-Options and Referrer-Policy;
// the adaptor it runs through would add its values beside ours), so only
// Strict-Transport-Security is set there. That one is set when the request
// came over HTTPS: TLS on the connection itself, or X-Forwarded-Proto: https
// from a trusted proxy (Config.TrustedProxies; Fiber ignores the header from
// anyone else).
func (s *Server) securityHeaders(c *fiber.Ctx) error {
	if strings.EqualFold(strings.TrimSpace(c.Protocol()), "https") {
		c.Set("Strict-Transport-Security", strictTransportSecurity)
	}
	p := c.Path()
	if p != devMailboxPath && !strings.HasPrefix(p, devMailboxPath+"/") {
		c.Set("X-Content-Type-Options", "nosniff")
		c.Set("Referrer-Policy", "no-referrer")
		c.Set("Content-Security-Policy", s.assets.csp)
		c.Set("Cross-Origin-Opener-Policy", "same-origin")
		c.Set("X-Frame-Options", "DENY")
	}
	return c.Next()
}

// serveStatic answers GET and HEAD for the embedded site. (/api never
// reaches it: the /api group ends in a catch-all, and routing is
// case-sensitive.)
//
// The wallet's views route in the browser, so the address of each view
// (web.View) is answered with index.html; any other address that looks like
// a page (no file extension in its last segment) gets index.html too, with
// status 404, and the page shows "Page not found" with a way back. A missing
// file (/js/gone.js) keeps the short 404 answer.
func (s *Server) serveStatic(c *fiber.Ctx) error {
	p := c.Path()
	f, ok := s.assets.files[p]
	if !ok {
		if plain, stale := staleHash(p); stale && s.assets.files[plain] != nil {
			// A hashed name of another build (a page loaded before a
			// deploy, or from another instance of another version): the
			// current file, revalidated, never cached for good under a
			// name whose bytes these are not.
			f = s.assets.files[plain]
		}
	}
	if !ok && f == nil {
		if _, view := web.View(p); view {
			f = s.assets.files["/index.html"]
		} else if !strings.Contains(path.Base(p), ".") {
			f = s.assets.files["/index.html"]
			c.Status(fiber.StatusNotFound)
		} else {
			return notFound()
		}
	}
	send := f
	if f.br != nil || f.gz != nil {
		c.Vary(fiber.HeaderAcceptEncoding)
		ae := c.Get(fiber.HeaderAcceptEncoding)
		switch {
		case f.br != nil && acceptsEncoding(ae, "br"):
			send = f.br
			c.Set(fiber.HeaderContentEncoding, "br")
		case f.gz != nil && acceptsEncoding(ae, "gzip"):
			send = f.gz
			c.Set(fiber.HeaderContentEncoding, "gzip")
		}
	}
	c.Set(fiber.HeaderContentType, f.ctype)
	if f.immutable {
		c.Set(fiber.HeaderCacheControl, cacheImmutable)
	} else {
		c.Set(fiber.HeaderCacheControl, cacheRevalidate)
	}
	if c.Response().StatusCode() == fiber.StatusNotFound {
		return c.Send(send.body) // no validator: a 404 is not revalidated into a 304
	}
	c.Set(fiber.HeaderETag, send.etag)
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), send.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	return c.Send(send.body)
}

// hashedName matches a content-hashed file name: <base>.<16 hex>.<ext>.
var hashedName = regexp.MustCompile(`^(/.+)\.[0-9a-f]{16}(\.[A-Za-z0-9]+)$`)

// staleHash returns the plain path of a content-hashed path p.
func staleHash(p string) (string, bool) {
	m := hashedName.FindStringSubmatch(p)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// acceptsEncoding reports whether an Accept-Encoding value allows coding
// (RFC 9110 §12.5.3): named with q > 0, or matched by "*" with q > 0 when
// not named.
func acceptsEncoding(header, coding string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				} else {
					q = 0
				}
			}
		}
		switch {
		case strings.EqualFold(name, coding):
			return q > 0
		case name == "*":
			star = q > 0
		}
	}
	return star
}

func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
