package browser

import (
	"context"
	"embed"
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

// server serves the benchmark page, the harness, the Turnkey bundle and the
// wasm module on 127.0.0.1 (a secure context, so WebCrypto is there).
type server struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	coldEncs map[string][]string // Content-Encoding of each cold load, by module ("wallet", "floor")
}

// asset is a file held in memory with its Content-Type.
type asset struct {
	body  []byte
	ctype string
}

// serve starts the server. The files are read once, up front, so that disk
// reads never land inside a timed load.
func serve(f *benchFiles, floor *floorModule) (*server, error) {
	assets := map[string]asset{}
	for path, src := range map[string]struct{ file, ctype string }{
		"/wasm_exec.js": {f.wasmExec.path, "text/javascript; charset=utf-8"},
		"/turnkey.js":   {f.bundle.path, "text/javascript; charset=utf-8"},
	} {
		b, err := os.ReadFile(src.file)
		if err != nil {
			return nil, err
		}
		assets[path] = asset{b, src.ctype}
	}
	for path, ctype := range map[string]string{
		"/bench.html":        "text/html; charset=utf-8",
		"/cold.html":         "text/html; charset=utf-8",
		"/bench.js":          "text/javascript; charset=utf-8",
		"/direct-install.js": "text/javascript; charset=utf-8",
	} {
		b, err := page.ReadFile("page" + path)
		if err != nil {
			return nil, err
		}
		assets[path] = asset{b, ctype}
	}
	// The direct calls' glue is the wallet page's own (web/static/js).
	glue, err := fs.ReadFile(web.Files(), "js/direct.js")
	if err != nil {
		return nil, err
	}
	assets["/direct.js"] = asset{glue, "text/javascript; charset=utf-8"}
	var wasm [3][]byte // identity, gzip, br
	for i, p := range []string{f.wasmRaw.path, f.wasmGzip.path, f.wasmBrotli.path} {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		wasm[i] = b
	}

	s := &server{coldEncs: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/wallet.wasm", func(w http.ResponseWriter, r *http.Request) {
		enc := negotiate(r.Header.Get("Accept-Encoding"))
		body := wasm[0]
		switch enc {
		case "gzip":
			body = wasm[1]
		case "br":
			body = wasm[2]
		}
		if r.URL.Query().Has("cold") {
			s.coldLoaded("wallet", enc)
		}
		h := w.Header()
		h.Set("Content-Type", "application/wasm") // instantiateStreaming insists
		h.Set("Vary", "Accept-Encoding")
		if enc != "identity" {
			h.Set("Content-Encoding", enc)
		}
		write(w, body)
	})
	// The references of the cold load come as ours does: brotli where the
	// browser takes it (the empty module has nothing to compress).
	mux.HandleFunc("/floor.wasm", func(w http.ResponseWriter, r *http.Request) {
		enc := negotiate(r.Header.Get("Accept-Encoding"))
		body := floor.raw
		switch enc {
		case "gzip":
			body = floor.gzip
		case "br":
			body = floor.brotli
		}
		s.coldLoaded("floor", enc)
		h := w.Header()
		h.Set("Content-Type", "application/wasm")
		h.Set("Vary", "Accept-Encoding")
		if enc != "identity" {
			h.Set("Content-Encoding", enc)
		}
		write(w, body)
	})
	mux.HandleFunc("/empty.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		write(w, emptyModule)
	})
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
// out of the caches, so that each cold load really is one.
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

// coldLoaded records the Content-Encoding a cold load of module got.
func (s *server) coldLoaded(module, enc string) {
	s.mu.Lock()
	s.coldEncs[module] = append(s.coldEncs[module], enc)
	s.mu.Unlock()
}

// coldEncoding returns the Content-Encoding the cold loads of module got,
// or the list of them if it varied.
func (s *server) coldEncoding(module string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	encs := slices.Clone(s.coldEncs[module])
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
