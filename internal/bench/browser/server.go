package browser

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"paywallet/web"
)

//go:embed page
var page embed.FS

// server serves the benchmark page, the harness, the Turnkey bundle, the
// wallet page's client and worker and the wasm modules on 127.0.0.1 (a
// secure context, so WebCrypto is there), at the paths the wallet page
// uses: /js/wallet.js finds ./wallet-worker.js and ./direct.js beside it
// and /wasm/wasm_exec.js at its default place.
type server struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	loadEncs map[string][]string // Content-Encoding of each timed load, by module ("wallet", "floor")
}

// asset is a file held in memory with its Content-Type.
type asset struct {
	body  []byte
	ctype string
}

// pageScripts are the wallet page's own files the benchmark serves
// unchanged: its client, the worker the module runs in and the direct
// calls' glue the worker imports.
var pageScripts = []string{"js/wallet.js", "js/wallet-worker.js", "js/direct.js"}

// serve starts the server. The files are read once, up front, so that disk
// reads never land inside a timed load.
func serve(f *benchFiles, floor *floorModule) (*server, error) {
	const jsType = "text/javascript; charset=utf-8"
	assets := map[string]asset{}
	for path, src := range map[string]string{"/wasm/wasm_exec.js": f.wasmExec.path, "/turnkey.js": f.bundle.path} {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		assets[path] = asset{b, jsType}
	}
	for path, ctype := range map[string]string{
		"/bench.html": "text/html; charset=utf-8",
		"/cold.html":  "text/html; charset=utf-8",
		"/bench.js":   jsType,
		// The floor of a call through a Worker (see floor-worker.js).
		"/floor-worker.js": jsType,
	} {
		b, err := page.ReadFile("page" + path)
		if err != nil {
			return nil, err
		}
		assets[path] = asset{b, ctype}
	}
	for _, name := range pageScripts {
		b, err := fs.ReadFile(web.Files(), name)
		if err != nil {
			return nil, fmt.Errorf("the wallet page's %s: %w", name, err)
		}
		assets["/"+name] = asset{b, jsType}
	}
	var wasm [3][]byte // identity, gzip, br
	for i, p := range []string{f.wasmRaw.path, f.wasmGzip.path, f.wasmBrotli.path} {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		wasm[i] = b
	}

	s := &server{loadEncs: map[string][]string{}}
	mux := http.NewServeMux()
	// Both modules come as a production server sends ours: brotli where
	// the browser takes it, else gzip.
	module := func(name string, bodies [3][]byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			enc := negotiate(r.Header.Get("Accept-Encoding"))
			body := bodies[0]
			switch enc {
			case "gzip":
				body = bodies[1]
			case "br":
				body = bodies[2]
			}
			if r.URL.Query().Has("load") {
				s.loaded(name, enc)
			}
			h := w.Header()
			h.Set("Content-Type", "application/wasm") // instantiateStreaming insists
			h.Set("Vary", "Accept-Encoding")
			if enc != "identity" {
				h.Set("Content-Encoding", enc)
			}
			write(w, body)
		}
	}
	mux.HandleFunc("/wasm/wallet.wasm", module("wallet", wasm))
	mux.HandleFunc("/wasm/floor.wasm", module("floor", [3][]byte{floor.raw, floor.gzip, floor.brotli}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.ctype)
		write(w, a.body)
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: isolated(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// isolated adds the headers that make the page cross-origin isolated
// (performance.now() then has its fine resolution) and keeps every response
// out of the caches, so that each timed load fetches everything again: the
// worker's script and imports as well as the module.
func isolated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Embedder-Policy", "require-corp")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func write(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// negotiate picks the module's encoding as a production server would:
// brotli if the browser accepts it, else gzip, else none.
func negotiate(acceptEncoding string) string {
	accepted := map[string]bool{}
	for _, part := range strings.Split(acceptEncoding, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		accepted[strings.ToLower(strings.TrimSpace(name))] = true
	}
	for _, enc := range []string{"br", "gzip"} {
		if accepted[enc] {
			return enc
		}
	}
	return "identity"
}

// loaded records the Content-Encoding a timed load of module got.
func (s *server) loaded(module, enc string) {
	s.mu.Lock()
	s.loadEncs[module] = append(s.loadEncs[module], enc)
	s.mu.Unlock()
}

// encoding returns the Content-Encoding the timed loads of module got, or
// the list of them if it varied.
func (s *server) encoding(module string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	encs := slices.Clone(s.loadEncs[module])
	slices.Sort(encs)
	return strings.Join(slices.Compact(encs), ",")
}

func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
}
